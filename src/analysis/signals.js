// The figures the rules judge, over the load window, for the threads that serve the loaded port. This module puts
// them together; each is computed in a signals-*.js module of its own: which threads serve (serving), their event loop
// and GC (loop), memory (memory, with the heap's trend in heap), the cost per request (cost), outgoing calls
// (outgoing), the rest of the machine (host) and the per-thread lines (threads).
import { runFloatingWork } from './floating-work.js'
import { displayPath } from './paths.js'
import { COST_LIMITS, costTrend } from './signals-cost.js'
import { localBackends, otherCores } from './signals-host.js'
import { gcFigures, loopFigures, loopUtilization } from './signals-loop.js'
import { memoryFigures } from './signals-memory.js'
import { measuredPart, ownMs } from './signals-quiet.js'
import { agentPressure, outgoingCalls } from './signals-outgoing.js'
import { envReads } from './signals-env.js'
import { avoidableSignals } from './signals-avoidable.js'
import { mainThreads, recordedOtherPorts, requestCounts, servingThreads, threadKey } from './signals-serving.js'
import { roleOf, summarizeThread } from './signals-threads.js'
import { computeWaits } from './waits.js'
import { callsAfterWindow } from './calls-after.js'

/** @typedef {import('./run-data.js').RunData} RunData */
/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {import('./signals-heap.js').HeapTrend} HeapTrend */
/** @typedef {import('./signals-threads.js').ThreadSummary} ThreadSummary */

/**
 * @typedef {object} OutgoingSignal
 * @property {string} target `GET http://host:port/path/:id`
 * @property {number} calls started in the window
 * @property {number} finished
 * @property {number} failed
 * @property {number} meanMs from the call to the end of its response
 * @property {number} maxMs
 * @property {number} perRequest calls per request served
 * @property {number} share of the serving processes' request time (requests × server time) spent waiting on it
 * @property {{ function: string, file: string, line: number } | null} site where the app makes the call
 */

/**
 * @typedef {object} Signals
 * @property {{ start: number, end: number, seconds: number }} window
 * @property {number} port
 * @property {number} servingProcesses processes listening on the loaded port
 * @property {number} samples serving-thread samples in the window
 * @property {number} coverage seconds of the window the serving threads' samples cover (per thread, on average); a
 *   blocked loop samples rarely, but each sample then covers a long interval
 * @property {{ finished: number, rate: number, serverTimeMean: number, inflightMean: number }} requests on the loaded
 *   port: `finished` and `rate` over the window; the mean server time over the measured part (`measured`), from the
 *   requests in flight there by Little's law
 * @property {{ part: 'quiet' | 'window', seconds: number, ownMs: number }} measured where the server's own figures
 *   (CPU, the loop's utilisation and delay, time on the server) come from: the part of the window where the probe's
 *   costly parts were off (`quiet`; see signals-quiet.js), or all of it when that part is too short; how many seconds
 *   it covers, and the ms the probe's own sampling took there, which those figures leave out
 * @property {{ percent: number, perRequestMs: number, ms: number }} cpu process-wide CPU of the serving processes over
 *   the measured part, the probe's own sampling left out
 * @property {{ utilization: number, runQueue: number | null, threadCpu: number | null, delayP50: number, delayP99: number, delayMax: number }} loop
 *   serving threads, over the measured part; `runQueue` is the share of it they were ready to run but waited for a
 *   CPU (Linux; null where not measured), which event-loop utilisation counts as busy; `threadCpu` the share they
 *   ran on a CPU, the probe's own sampling left out (Linux; null where not measured)
 * @property {{ count: number, utilization: number }} helpers the serving processes' other threads (worker pools): how
 *   many, and the busiest one's mean event-loop utilisation
 * @property {{ share: number, cpuShare: number, byKind: Record<string, { share: number, count: number }>, count: number }} gc
 * @property {{ trend: HeapTrend | null, heapUsed: number, oldPeak: number, oldLimit: number, rss: number, perRequest: number | null, retained: import('./run-data.js').Retainers | null }} memory
 *   `heapUsed` at the end of the window; `oldPeak` the most the old generation held in it, `oldLimit` the limit set
 *   for it (where none was, the whole heap's highest reading and V8's heap_size_limit); `retained`: what keeps what the load left alive, when heap snapshots were taken after it
 * @property {any[]} listeners listener growth seen in the serving processes, most first, with pid
 * @property {{ agent: string, maxSockets: number, maxQueued: number, maxInUse: number }[]} agents outgoing pools that queued or filled
 * @property {import('./signals-env.js').EnvReadSignal[]} env the environment variables the serving processes read,
 *   earliest first
 * @property {OutgoingSignal[]} outgoing outgoing HTTP calls made by the serving processes during the window, the
 *   longest waited on first
 * @property {import('./signals-cost.js').CostTrend | null} cost how the CPU per request moved through the window
 *   against the requests served (null with too few half-seconds)
 * @property {import('./floating-work.js').FloatingWork[]} floating work the traced requests started and left pending
 *   when their responses finished (promises fired and not awaited), by site
 * @property {import('./waits.js').WaitSignals} waits where the traced requests of the serving threads waited
 * @property {import('./calls-after.js').CallsAfter | null} calls for a server too busy to trace in the window, the
 *   calls to other servers its requests made in a traced load after it
 * @property {import('./signals-avoidable.js').AvoidableSignals} avoidable work on the serving threads that the request
 *   path need not do (a stack read, a sync call with an async form, require()), what the app replaced of the runtime
 *   that ran within it, and the built-ins it replaced with userland code
 * @property {{ closedLoop: boolean, connections: number, latencyMeanMs: number } | null} load how hotpath's own load
 *   drove the server (null with --on-port, --attach's own load aside, or a run without a load result)
 * @property {ThreadSummary[]} threads every thread that sampled during the window
 * @property {{ pid: number, threadId: number, at: number }[]} exitedThreads worker threads of the serving processes
 *   that exited during the load (seconds into it): what was sent to them is lost, or waits
 * @property {number[]} otherPorts the other ports the target served HTTP on by the window's end: not loaded
 * @property {number | null} otherCores cores' worth of CPU that processes other than hotpath, the target and its
 *   backends used during the window (null when the run did not record it): a busy machine distorts every figure
 * @property {{ cores: number, processes: { pid: number, name: string, cpuMs: number, port: number }[] } | null} backends
 *   the processes on this machine that listen where the serving processes' client sockets connect (a database, a
 *   cache) and their children, with the cores' worth of CPU they used: what the server waits on, not a busy machine
 */

/**
 * Computes the figures the rules judge, over the load window, for the threads that serve the loaded port.
 * @param {RunData} data
 * @returns {Signals}
 */
export function computeSignals (data) {
  const { start, end } = data.run.loadWindow
  const seconds = Math.max(0.001, (end - start) / 1000)
  const port = data.run.listening.port
  const serving = servingThreads(data, port, start, end)
  const { finished } = requestCounts(serving.samples, port, seconds)
  const rate = finished / seconds
  // The server's own figures come from the part of the window the probe measured it alone, when it has one.
  const mains = mainThreads(data, serving)
  const measured = measuredPart(serving, mains, port, seconds)
  const measuredSamples = serving.threads.flatMap(measured.of)
  const counted = requestCounts(measuredSamples, port, measured.seconds)
  // CPU is process-wide: counted once per serving process, from its main thread's samples.
  const processSamples = mains.flatMap(measured.of)
  const own = ownMs(processSamples)
  const cpuMs = Math.max(0, processSamples.reduce((a, x) => a + x.cpu.user + x.cpu.system, 0) - own)
  const cpuPerRequestMs = counted.finished > 0 ? cpuMs / counted.finished : 0
  // Little's law: mean time on the server = mean requests in flight ÷ requests finished per ms. In flight is counted
  // between turns of the loop, so a request that starts and ends within one (a synchronous handler) is never seen: it
  // held the server for at least its CPU time, which is therefore the floor.
  const littleMs = counted.finished > 0 ? counted.inflightMean / (counted.finished / (measured.seconds * 1000)) : 0
  // An observed window times every request itself (--observe): that is the mean, where Little's law would miss the
  // requests on connections opened before an attached probe began to watch them.
  const timed = timedRequests(serving.threads)
  const serverTimeMean = timed.requests > 0 ? Math.max(timed.totalMs / timed.requests, cpuPerRequestMs) : Math.max(littleMs, cpuPerRequestMs)
  const backends = localBackends(data, serving.processThreads, seconds)

  const waits = savingsAtMeanTime(computeWaits(serving.threads, start, end, data.run.cwd), serverTimeMean)
  return {
    window: { start, end, seconds },
    port,
    servingProcesses: serving.pids.size,
    samples: serving.samples.length,
    coverage: serving.samples.reduce((a, x) => a + x.interval, 0) / 1000 / Math.max(1, serving.threads.length),
    requests: { finished, rate, serverTimeMean, inflightMean: counted.inflightMean },
    measured: { part: measured.part, seconds: measured.seconds, ownMs: own },
    cpu: {
      ms: cpuMs,
      percent: cpuMs / (measured.seconds * 1000),
      perRequestMs: cpuPerRequestMs
    },
    loop: loopFigures(measuredSamples),
    helpers: {
      count: serving.helpers.length,
      utilization: Math.max(0, ...serving.helpers.map(t => loopUtilization(serving.of(t))))
    },
    // GC time is the whole window's (the pauses a request meets wherever it runs), beside the whole window's CPU.
    gc: gcFigures(serving.samples, seconds * 1000 * Math.max(1, serving.threads.length), mains.flatMap(serving.of).reduce((a, x) => a + x.cpu.user + x.cpu.system, 0)),
    memory: memoryFigures(data, serving, start, rate),
    listeners: listenerGrowth(data, serving.processThreads),
    agents: agentPressure(serving.processThreads, start, end),
    env: envReads(serving.processThreads, data.run.cwd),
    outgoing: outgoingCalls(data, serving.processThreads, start, end, finished, serverTimeMean),
    cost: costTrend(serving.samples, { serving: measuredSamples, processes: processSamples }, port, start, COST_LIMITS),
    waits,
    calls: callsAfterWindow(serving.threads, data.run, waits.traced),
    floating: runFloatingWork(serving.threads, start, end, data.run),
    avoidable: avoidableSignals(data, port),
    load: loadShape(data.run),
    otherPorts: recordedOtherPorts(data, port, end),
    otherCores: otherCores(data, serving.of, seconds, backends),
    backends,
    threads: data.threads.map(t => summarizeThread(t, serving.of(t), serving.keys.has(threadKey(t)), port, seconds, roleOf(t, data.threads))).filter(t => t.samples > 0),
    exitedThreads: serving.processThreads
      .filter(t => t.threadId > 0 && t.exitedAt !== undefined && t.exitedAt >= start && t.exitedAt < end)
      .map(t => ({ pid: t.pid, threadId: t.threadId, at: Math.round((/** @type {number} */ (t.exitedAt) - start) / 100) / 10 }))
  }
}

/**
 * How the load drove the server: a closed loop keeps `connections` requests in flight whatever the server does, so
 * once it saturates, each request waits for those ahead of it.
 * @param {import('../run/doctor-run.js').RunRecord} run
 * @returns {Signals['load']}
 */
function loadShape (run) {
  const l = /** @type {any} */ (run.load)
  if (!l || run.onPort || typeof l.connections !== 'number' || typeof l.latency?.mean !== 'number') return null
  const rate = Number(l.hotpath?.options?.rate ?? 0)
  return { closedLoop: !(rate > 0), connections: l.connections, latencyMeanMs: l.latency.mean }
}

/**
 * What batching an N+1 would save an average request. The traced requests can be slower than the average one (the
 * tracer costs them time, and on a busy machine they queue for a CPU): on a saturated host they took 37 ms against a
 * mean of 17 ms, and their saving of 34 ms exceeded the whole request. The saving is scaled to the mean time on the
 * server; the other figures stay what the traced requests saw.
 * @param {import('./waits.js').WaitSignals} waits
 * @param {number} serverTimeMean ms
 * @returns {import('./waits.js').WaitSignals}
 */
function savingsAtMeanTime (waits, serverTimeMean) {
  if (!(waits.meanMs > serverTimeMean) || serverTimeMean <= 0) return waits
  const scale = serverTimeMean / waits.meanMs
  for (const w of waits.sites) {
    if (w.sequential) w.sequential = { ...w.sequential, savedMs: w.sequential.savedMs * scale }
  }
  return waits
}

/**
 * Listener growth the serving processes' probes saw, most first, with where it was added.
 * @param {RunData} data
 * @param {ThreadRecord[]} threads the serving processes'
 */
function listenerGrowth (data, threads) {
  return threads
    .flatMap(t => t.listeners.map(l => ({
      ...l,
      site: l.site ? { ...l.site, file: displayPath(String(l.site.file), String(t.hello.cwd ?? data.run.cwd)) } : null,
      pid: t.pid,
      threadId: t.threadId
    })))
    .sort((a, b) => b.count - a.count)
}

/**
 * The requests an observing probe timed on the serving threads, and their time on the server in all.
 * @param {import('./run-data.js').ThreadRecord[]} threads
 */
function timedRequests (threads) {
  let requests = 0
  let totalMs = 0
  for (const t of threads) {
    for (const r of t.routes?.routes ?? []) {
      requests += r.requests
      totalMs += r.totalMs
    }
  }
  return { requests, totalMs }
}
