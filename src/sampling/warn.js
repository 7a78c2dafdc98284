// This code runs inside other people's servers: a bad option or a throwing callback must not crash them, but must not
// go unnoticed either. Each distinct problem becomes one process warning (visible with the default handler, silenced
// with --no-warnings like any other), never an exception.

/** @type {Set<string>} */
const warned = new Set()

/**
 * Emits `message` as a process warning the first time `key` is seen.
 * @param {string} key
 * @param {string} message
 */
export function warnOnce (key, message) {
  if (warned.has(key)) return
  warned.add(key)
  try {
    process.emitWarning(message, { type: 'HotpathWarning', code: 'HOTPATH_' + key.toUpperCase().replace(/[^A-Z0-9]+/g, '_') })
  } catch {}
}

/**
 * A number option that must be positive and finite; anything else falls back to the default with a warning.
 * @param {unknown} value
 * @param {number} fallback
 * @param {string} name shown in the warning, e.g. 'Sampler interval'
 * @returns {number}
 */
export function positiveOption (value, fallback, name) {
  if (value === undefined || value === null) return fallback
  if (typeof value === 'number' && value > 0 && Number.isFinite(value)) return value
  warnOnce(`bad-option-${name}`, `hotpath: ${name} must be a positive number, got ${String(value)}; using ${fallback}`)
  return fallback
}

/**
 * Calls a user's callback; whatever it throws (or rejects with) becomes a warning instead of an uncaught exception.
 * @template {unknown[]} A
 * @param {string} name what the callback is, for the warning
 * @param {((...args: A) => unknown) | undefined} fn
 * @param {A} args
 */
export function callSafely (name, fn, ...args) {
  if (typeof fn !== 'function') return
  try {
    const result = fn(...args)
    if (result !== null && typeof result === 'object' && typeof (/** @type {any} */ (result).then) === 'function') {
      /** @type {Promise<unknown>} */ (result).then(undefined, (/** @type {unknown} */ err) => report(name, err))
    }
  } catch (err) {
    report(name, err)
  }
}

/**
 * @param {string} name
 * @param {unknown} err
 */
function report (name, err) {
  warnOnce(`callback-${name}`, `hotpath: ${name} threw: ${err instanceof Error ? err.stack ?? err.message : String(err)}`)
}
