// After doctor's load window, a short load with every request the wait tracer takes followed, however busy the server:
// the window traces a busy thread never (the tracer's hooks cost every promise, and a saturated server pays them in
// throughput), so a server saturated by its own work, whose heap held megabytes at the window's end, has not said
// whether its requests leave work behind them — a write fired per request and not awaited holds its data until it is
// done, and reads as garbage or a leak. What this load costs the server is in none of the run's figures: the window
// is over.
import { afterWindowLoad, ask, probeOf, runPhase } from '../heap-run.js'
import { COMMAND, MESSAGE, TRACED_ENOUGH } from '../../probe-protocol.js'

/**
 * Whether a server too busy for its requests to be traced in the window talks to other servers (a database, a cache):
 * the CPU that keeps it busy may be its clients' work on each call, and how many calls a request makes, from which
 * line, is then the answer — counted in a traced load after the window.
 * @param {any[]} stopped the probes' 'stopped' messages
 * @param {number} pid the loaded process
 */
export function callsUntraced (stopped, pid) {
  const main = stopped.find(m => m.pid === pid && m.threadId === 0)
  return main !== undefined && !(Number(main.traced) >= TRACED_ENOUGH) && Number(main.clients) > 0
}

/**
 * @typedef {object} TracingRecord what run.json keeps of the phase
 * @property {number} start epoch ms the load began
 * @property {number} end epoch ms the requests traced were written
 * @property {number} requests the phase's load completed
 * @property {number} traced requests the tracer followed
 * @property {string | null} error why it stopped short, if it did
 */

/**
 * @param {import('../target/target-process.js').TargetProcess} target
 * @param {object} o
 * @param {number} o.pid the loaded process (its main thread is traced)
 * @param {string} o.url
 * @param {Omit<import('../../load/load.js').LoadOptions, 'url'>} o.load doctor's load, shortened here
 * @param {boolean} [o.observe] observe the traffic the server gets instead of loading it
 * @param {AbortSignal} o.signal
 * @returns {Promise<TracingRecord>}
 */
export async function traceRequests (target, o) {
  /** @type {TracingRecord} */
  const record = { start: Date.now(), end: 0, requests: 0, traced: 0, error: null }
  try {
    const peer = await probeOf(target, o.pid)
    if (peer === null) throw new Error(`no probe answers in pid ${o.pid}`)
    const on = await ask(target, peer, { type: COMMAND.TRACE_START }, MESSAGE.TRACING, 30, 'tracing')
    if (on === null) throw new Error('the target exited')
    if (on.error) throw new Error(String(on.error))
    record.start = Date.now()
    // Up to 2 s: the tracer takes 25 requests a second, 4 at once.
    const load = afterWindowLoad(o.load)
    /** @type {string | null} */
    let failed = null
    try {
      const phase = await runPhase(/** @type {any} */ ('tracing'), /** @type {any} */ ({ load, observe: o.observe }), o.url, o.signal)
      record.requests = phase.requests
      failed = phase.failed
    } finally {
      // Whatever the load did, the hooks go off.
      const off = await ask(target, peer, { type: COMMAND.TRACE_STOP }, MESSAGE.TRACED, 30, 'tracing')
      record.end = Date.now()
      if (off !== null && typeof off.traced === 'number') record.traced = off.traced
      else if (off === null) failed ??= 'the target exited'
    }
    if (failed !== null) throw new Error(`the tracing load failed: ${failed}`)
  } catch (err) {
    record.error = String(/** @type {Error} */ (err)?.message ?? err)
  }
  return record
}
