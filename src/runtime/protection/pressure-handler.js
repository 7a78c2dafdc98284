import { warnOnce } from '../../sampling/warn.js'

/**
 * Calls a user's pressure handler (sync or async) and tells whether the request was answered (true) or should go on
 * to the app (false: the handler sent nothing). A handler that throws or rejects without answering gets the default
 * 503 answered for it (`refuse`), since an overloaded server should not take work because a handler failed.
 * @param {(...args: any[]) => unknown} handler
 * @param {unknown[]} args
 * @param {() => boolean} answered
 * @param {() => void} refuse
 * @returns {boolean | Promise<boolean>}
 */
export function afterHandler (handler, args, answered, refuse) {
  /** @param {unknown} err */
  const failed = (err) => {
    warnOnce('callback-pressureHandler', `hotpath: pressureHandler threw: ${err instanceof Error ? err.stack ?? err.message : String(err)}`)
    try {
      if (!answered()) refuse()
    } catch {}
    return true
  }
  let result
  try {
    result = handler(...args)
  } catch (err) {
    return failed(err)
  }
  if (result !== null && typeof result === 'object' && typeof (/** @type {any} */ (result).then) === 'function') {
    return /** @type {Promise<unknown>} */ (result).then(answered, failed)
  }
  return answered()
}
