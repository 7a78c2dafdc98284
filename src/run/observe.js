// `--observe`: a window with no load of hotpath's. The server serves the traffic it gets (production's, or a load the
// user sends), and the probes measure that.

/**
 * Waits `seconds`, or until the signal aborts.
 * @param {number} seconds
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
export function observeFor (seconds, signal) {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, seconds * 1000)
    signal.addEventListener('abort', done, { once: true })
  })
}
