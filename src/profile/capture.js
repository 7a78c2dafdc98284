// Recording profiles from inside the process (main thread or a worker thread) through node:inspector's in-process
// session: no debugger port is opened and nothing leaves the process. Each capture has its own session, so it does not
// disturb a debugger or another profiler attached at the same time.
import { Session } from 'node:inspector'

/**
 * @template T
 * @typedef {object} Capture
 * @property {() => Promise<T>} stop ends the capture and resolves with the profile; calling it again returns the same
 *   promise
 */

/**
 * Starts V8's sampling CPU profiler in this thread.
 * @param {{ interval?: number }} [opts] interval: µs between samples (V8's default is 1000)
 * @returns {Promise<Capture<import('./cpuprofile.js').CpuProfile>>}
 */
export async function startCpuProfile (opts = {}) {
  const session = connect()
  try {
    await post(session, 'Profiler.enable')
    if (opts.interval !== undefined) {
      if (!(Number.isInteger(opts.interval) && opts.interval > 0)) throw new TypeError(`interval must be a positive integer (µs), got ${opts.interval}`)
      await post(session, 'Profiler.setSamplingInterval', { interval: opts.interval })
    }
    await post(session, 'Profiler.start')
  } catch (err) {
    session.disconnect()
    throw err
  }
  return once(session, async () => {
    const { profile } = /** @type {{ profile: import('./cpuprofile.js').CpuProfile }} */ (await post(session, 'Profiler.stop'))
    return profile
  }, 'Profiler.disable')
}

/**
 * Starts V8's sampling heap profiler in this thread. By default the profile holds what is still alive when it stops
 * (leaks); with `includeCollected` it holds everything sampled, collected or not (allocation rate, GC pressure).
 * @param {{ interval?: number, includeCollected?: boolean }} [opts] interval: mean bytes between samples (V8's default
 *   is 32768)
 * @returns {Promise<Capture<import('./cpuprofile.js').SamplingHeapProfile>>}
 */
export async function startHeapSampling (opts = {}) {
  const session = connect()
  try {
    /** @type {Record<string, unknown>} */
    const params = {}
    if (opts.interval !== undefined) {
      if (!(Number.isInteger(opts.interval) && opts.interval > 0)) throw new TypeError(`interval must be a positive integer (bytes), got ${opts.interval}`)
      params.samplingInterval = opts.interval
    }
    if (opts.includeCollected) {
      params.includeObjectsCollectedByMajorGC = true
      params.includeObjectsCollectedByMinorGC = true
    }
    await post(session, 'HeapProfiler.enable')
    await post(session, 'HeapProfiler.startSampling', params)
  } catch (err) {
    session.disconnect()
    throw err
  }
  return once(session, async () => {
    const { profile } = /** @type {{ profile: import('./cpuprofile.js').SamplingHeapProfile }} */ (await post(session, 'HeapProfiler.stopSampling'))
    return profile
  }, 'HeapProfiler.disable')
}

function connect () {
  const session = new Session()
  session.connect()
  return session
}

/**
 * @template T
 * @param {Session} session
 * @param {() => Promise<T>} take
 * @param {string} disable
 * @returns {Capture<T>}
 */
function once (session, take, disable) {
  /** @type {Promise<T> | null} */
  let stopped = null
  return {
    stop () {
      stopped ??= (async () => {
        try {
          return await take()
        } finally {
          try {
            await post(session, disable)
          } catch {}
          session.disconnect()
        }
      })()
      return stopped
    }
  }
}

/**
 * @param {Session} session
 * @param {string} method
 * @param {object} [params]
 * @returns {Promise<unknown>}
 */
function post (session, method, params) {
  return new Promise((resolve, reject) => {
    session.post(method, params ?? {}, (err, result) => err ? reject(err) : resolve(result))
  })
}
