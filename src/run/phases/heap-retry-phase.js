// After a crash on heap exhaustion: the target started afresh with a larger heap limit and the experiments' gauge
// preloaded, loaded as the diagnosed run was (same connections, rate, path, duration), until the load ends or the
// target dies — whose death is the answer, not a failure to measure. What it did is judged in
// src/analysis/heap-retry.js.
import { load } from '../../load/load.js'
import { gaugedTarget } from './gauged-target.js'
import { listeningUrl } from '../target/target-process.js'

/** Seconds beyond the load's own that a load may run before it is stopped (a load bounded by --amount alone). */
const GRACE_SECONDS = 10

/**
 * @typedef {object} RetryOptions
 * @property {string[]} command
 * @property {Omit<import('../../load/load.js').LoadOptions, 'url'>} load the diagnosed run's load
 * @property {string} path
 * @property {number} [port]
 * @property {number} listenTimeout seconds
 * @property {number} maxSeconds the most the load may run (its duration, or the diagnosed run's for --amount)
 * @property {AbortSignal} signal
 */

/**
 * Starts the target with a node flag, loads it as the diagnosed run did, and stops it.
 * @param {string} flag `--max-old-space-size=256`
 * @param {RetryOptions} o
 * @returns {Promise<import('../../analysis/heap-retry.js').RetryPhase>}
 */
export async function runHeapRetry (flag, o) {
  const started = Date.now()
  const { target, gauge, stop } = gaugedTarget(o.command, { flags: [flag], env: {} }, 'hotpath-heap-retry-')
  /** @type {import('../../analysis/heap-retry.js').RetryPhase} */
  const out = { heapLimit: null, gauge: null, load: null, exit: null, stderr: [], failed: null, ms: 0 }
  const abort = new AbortController()
  const onAbort = () => abort.abort()
  o.signal.addEventListener('abort', onAbort, { once: true })
  // A target that dies ends the load: its death is what was asked, and when it came.
  /** @type {number | null} */
  let diedAt = null
  target.exited.then((exit) => {
    if (exit.stoppedByUs) return
    diedAt = Date.now()
    abort.abort()
  })
  const timer = setTimeout(() => abort.abort(), (o.maxSeconds + (o.load.warmup ?? 0) + GRACE_SECONDS) * 1000)
  try {
    await target.start()
    const listening = await target.waitForListening({ timeout: o.listenTimeout, port: o.port })
    const hello = [...target.channel.peers].find(p => p.hello?.pid === listening.pid && p.hello.threadId === 0)?.hello
    out.heapLimit = typeof hello?.heapLimit === 'number' ? hello.heapLimit : null
    const url = listeningUrl(listening, o.path)
    const from = Date.now()
    const result = await load({ ...o.load, url, signal: abort.signal, onBin: undefined })
    const to = Date.now()
    // A dying process closes its sockets a moment before its exit arrives.
    if (result.failed || abort.signal.aborted) await target.exitsWithin(1000)
    out.gauge = await gauge(listening.port, from)
    out.heapLimit ??= out.gauge?.heapLimit ?? null
    out.load = {
      requests: result.requests.total,
      // Until the target died, when it did: the load's own count may run a moment past it, or say the time asked.
      seconds: diedAt === null ? result.duration : Math.max(0, (Math.min(diedAt, to) - from) / 1000 - (o.load.warmup ?? 0)),
      failed: result.failed?.detail ?? null,
      interrupted: o.signal.aborted
    }
  } catch (err) {
    const e = /** @type {Error & { stderr?: string[] }} */ (err)
    out.failed = e.message
  } finally {
    clearTimeout(timer)
    o.signal.removeEventListener('abort', onAbort)
    const exit = await stop()
    if (!exit.stoppedByUs) out.exit = { code: exit.code, signal: exit.signal }
    out.stderr = target.tail()
    out.ms = Date.now() - started
  }
  return out
}
