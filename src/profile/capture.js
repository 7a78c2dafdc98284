// Recording profiles from inside the process (main thread or a worker thread) through node:inspector's in-process
// session: no debugger port is opened and nothing leaves the process. Each capture has its own session, so it does not
// disturb a debugger or another profiler attached at the same time.
import { Session } from 'node:inspector'

/**
 * @template T
 * @typedef {object} Capture
 * @property {() => Promise<T>} stop ends the capture and resolves with the profile; calling it again returns the same
 *   promise
 * @property {() => T | null} [stopSync] ends it at once, in a process's last moments ('exit': a crash, a worker that
 *   dies): an in-process session answers synchronously on the thread that posts; null when it cannot (or was stopped)
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
  }, 'Profiler.disable', () => /** @type {{ profile: import('./cpuprofile.js').CpuProfile } | null} */ (postSync(session, 'Profiler.stop'))?.profile ?? null)
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
  }, 'HeapProfiler.disable', () => /** @type {{ profile: import('./cpuprofile.js').SamplingHeapProfile } | null} */ (postSync(session, 'HeapProfiler.stopSampling'))?.profile ?? null)
}

/**
 * GC pauses as V8 traces them: one event per pause, with its start on the monotonic clock (µs, the clock of CPU
 * profiles and `process.hrtime`), its duration (µs) and V8's name for it.
 * @typedef {object} GcTrace
 * @property {number} tid the OS thread these pauses are this thread's (other isolates of the process are left out)
 * @property {{ ts: number, dur: number, name: string }[]} events
 */

/**
 * Starts recording the process's GC pauses through Node's trace events (category `v8`), main thread only (trace events
 * are one per process). V8 writes the events from C++ into the tracing buffer: nothing runs in JavaScript per GC,
 * where a 'gc' PerformanceObserver runs several functions after every collection (~2.5% of a saturated hello
 * server's throughput, measured). The events arrive when the capture stops.
 * @returns {Promise<Capture<GcTrace>>}
 */
export async function startGcTrace () {
  const session = connect()
  /** @type {any[]} */
  const collected = []
  session.on('NodeTracing.dataCollected', (/** @type {any} */ message) => {
    const value = message?.params?.value
    if (Array.isArray(value)) for (const e of value) collected.push(e)
  })
  try {
    await post(session, 'NodeTracing.start', { traceConfig: { includedCategories: ['v8'], recordMode: 'recordContinuously' } })
  } catch (err) {
    session.disconnect()
    throw err
  }
  /** @type {Promise<GcTrace> | null} */
  let stopped = null
  return {
    stop () {
      stopped ??= new Promise((resolve, reject) => {
        session.once('NodeTracing.tracingComplete', () => {
          session.disconnect()
          let tid = process.pid
          for (const e of collected) {
            if (e?.ph === 'M' && e.name === 'thread_name' && e.pid === process.pid && e.args?.name === 'JavaScriptMainThread') tid = e.tid
          }
          /** @type {{ ts: number, dur: number, name: string }[]} */
          const events = []
          for (const e of collected) {
            if (e?.ph === 'X' && e.tid === tid && typeof e.ts === 'number' && typeof e.dur === 'number' && typeof e.name === 'string') events.push({ ts: e.ts, dur: e.dur, name: e.name })
          }
          resolve({ tid, events })
        })
        post(session, 'NodeTracing.stop').catch((err) => {
          session.disconnect()
          reject(err)
        })
      })
      return stopped
    }
  }
}

/**
 * A full garbage collection of this thread's heap, and what is left of it: only what is still reachable. The console
 * messages V8's inspector keeps for DevTools go first: it keeps them (up to a thousand) only while a session is
 * connected, and the probe's sessions were — a RealWorld backend that logs each SQL statement read 5.6 MB kept by
 * the load, `(Global handles)` → `DevTools console` in its heap snapshots, and `memory-leak`.
 * @returns {Promise<number>} bytes of heap used after it
 */
export async function heapAfterFullGc () {
  const session = connect()
  try {
    await post(session, 'Runtime.discardConsoleEntries').catch(() => {})
    await post(session, 'HeapProfiler.collectGarbage')
  } finally {
    session.disconnect()
  }
  return process.memoryUsage().heapUsed
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
 * @param {() => T | null} takeSync
 * @returns {Capture<T>}
 */
function once (session, take, disable, takeSync) {
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
    },
    stopSync () {
      if (stopped !== null) return null
      stopped = Promise.resolve(/** @type {T} */ (/** @type {unknown} */ (null)))
      try {
        return takeSync()
      } catch {
        return null
      } finally {
        try { session.disconnect() } catch {}
      }
    }
  }
}

/**
 * A post answered before it returns, or null: an in-process session on the posting thread answers synchronously.
 * @param {Session} session
 * @param {string} method
 * @returns {unknown}
 */
function postSync (session, method) {
  /** @type {unknown} */
  let out = null
  session.post(method, {}, (err, result) => { if (!err) out = result })
  return out
}

/**
 * @param {Session} session
 * @param {string} method
 * @param {object} [params]
 * @returns {Promise<unknown>}
 */
export function post (session, method, params) {
  return new Promise((resolve, reject) => {
    session.post(method, params ?? {}, (err, result) => err ? reject(err) : resolve(result))
  })
}
