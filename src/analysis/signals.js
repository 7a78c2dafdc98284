import { displayPath } from './paths.js'
import { linearFit, mean } from './stats.js'
import { computeWaits } from './waits.js'

/** @typedef {import('./run-data.js').RunData} RunData */
/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {ThreadRecord['samples'][number]} Sample */

/**
 * @typedef {object} HeapTrend
 * @property {'major-gc' | 'floor'} basis what was fitted: the heap after each full collection, or its floor
 * @property {number} points how many values were fitted
 * @property {number} slope bytes per second
 * @property {number} r2
 * @property {number} t slope ÷ its standard error
 * @property {number} start bytes at the start of the window
 * @property {number} growth bytes gained over the window
 * @property {number} seconds
 * @property {number} fullCollections full (mark-compact) collections in the window
 * @property {number | null} rise heap after the last full collection minus after the first (null with fewer than two)
 */

/**
 * @typedef {object} ThreadSummary
 * @property {number} pid
 * @property {number} threadId
 * @property {string} role
 * @property {boolean} serving listens on the loaded port
 * @property {number} samples in the load window
 * @property {number} utilization mean event-loop utilisation
 * @property {number} delayP99 ms
 * @property {number} delayMax ms
 * @property {number | null} cpuPercent of one core, process-wide (main threads only)
 * @property {number} heapUsed bytes at the end of the window
 * @property {number} gcShare of the window spent in GC
 * @property {number} requests finished on the loaded port
 */

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
 *   port; the mean server time follows from the others by Little's law
 * @property {{ percent: number, perRequestMs: number, ms: number }} cpu process-wide CPU of the serving processes
 * @property {{ utilization: number, delayP50: number, delayP99: number, delayMax: number }} loop serving threads
 * @property {{ count: number, utilization: number }} helpers the serving processes' other threads (worker pools): how
 *   many, and the busiest one's mean event-loop utilisation
 * @property {{ share: number, cpuShare: number, byKind: Record<string, { share: number, count: number }>, count: number }} gc
 * @property {{ trend: HeapTrend | null, heapUsed: number, heapLimit: number, rss: number, perRequest: number | null }} memory
 * @property {any[]} listeners listener growth seen in the serving processes, most first, with pid
 * @property {{ agent: string, maxSockets: number, maxQueued: number, maxInUse: number }[]} agents outgoing pools that queued or filled
 * @property {OutgoingSignal[]} outgoing outgoing HTTP calls made by the serving processes during the window, the
 *   longest waited on first
 * @property {import('./waits.js').WaitSignals} waits where the traced requests of the serving threads waited
 * @property {ThreadSummary[]} threads every thread that sampled during the window
 * @property {{ pid: number, threadId: number, at: number }[]} exitedThreads worker threads of the serving processes
 *   that exited during the load (seconds into it): what was sent to them is lost, or waits
 * @property {number | null} otherCores cores' worth of CPU that processes other than hotpath, the target and its
 *   backends used during the window (null when the run did not record it): a busy machine distorts every figure
 * @property {{ cores: number, processes: { pid: number, name: string, cpuMs: number, port: number }[] } | null} backends
 *   the processes on this machine that listen where the serving processes' client sockets connect (a database, a
 *   cache) and their children, with the cores' worth of CPU they used: what the server waits on, not a busy machine
 */

/**
 * Whether a sample's interval lies (mostly) inside the window.
 * @param {Sample} s
 * @param {number} start
 * @param {number} end
 */
const inWindow = (s, start, end) => {
  const mid = s.time - s.interval / 2
  return mid >= start && mid <= end
}

/**
 * Percentile by nearest rank of an unsorted list.
 * @param {number[]} values
 * @param {number} p 0..100
 */
export function percentile (values, p) {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

/**
 * Computes the figures the rules judge, over the load window, for the threads that serve the loaded port.
 * @param {RunData} data
 * @returns {Signals}
 */
export function computeSignals (data) {
  const { start, end } = data.run.loadWindow
  const seconds = Math.max(0.001, (end - start) / 1000)
  const port = data.run.listening.port
  let serving = data.threads.filter(t => t.listening.some(l => l.port === port))
  if (serving.length === 0) serving = data.threads.filter(t => t.pid === data.run.listening.pid && t.threadId === 0)
  const servingKeys = new Set(serving.map(key))
  const servingPids = new Set(serving.map(t => t.pid))
  const windowed = new Map(data.threads.map(t => [key(t), t.samples.filter(s => inWindow(s, start, end))]))
  const samplesOf = (/** @type {ThreadRecord} */ t) => /** @type {Sample[]} */ (windowed.get(key(t)))
  const servingSamples = serving.flatMap(samplesOf)
  const helpers = data.threads.filter(t => servingPids.has(t.pid) && !servingKeys.has(key(t)) && samplesOf(t).length > 0)

  // Requests on the loaded port. In flight is time-weighted: a sample stands for its interval.
  let finished = 0
  let inflightMs = 0
  for (const s of servingSamples) {
    for (const r of s.requests ?? []) {
      if (r.port !== port) continue
      finished += r.finished
      inflightMs += r.inflight * s.interval
    }
  }
  // Summed over the serving threads: a cluster's workers each hold their own requests in flight.
  const inflightMean = inflightMs / (seconds * 1000)

  // CPU is process-wide: count it once per serving process, from its main thread.
  let cpuMs = 0
  for (const pid of servingPids) {
    const main = data.threads.find(t => t.pid === pid && t.threadId === 0)
    if (main) for (const s of samplesOf(main)) cpuMs += s.cpu.user + s.cpu.system
  }

  const delays = servingSamples.map(s => s.delay.max)
  let gcMs = 0
  let gcCount = 0
  /** @type {Record<string, { share: number, count: number }>} */
  const byKind = {}
  for (const s of servingSamples) {
    gcMs += s.gc.duration
    gcCount += s.gc.count
    for (const [kind, k] of Object.entries(s.gc.byKind ?? {})) {
      const entry = byKind[kind] ?? (byKind[kind] = { share: 0, count: 0 })
      entry.share += k.duration
      entry.count += k.count
    }
  }
  const threadWallMs = seconds * 1000 * Math.max(1, serving.length)
  for (const entry of Object.values(byKind)) entry.share /= threadWallMs

  const trends = serving.map(t => heapTrend(samplesOf(t), start)).filter(t => t !== null)
  const trend = combineTrends(/** @type {HeapTrend[]} */ (trends))
  const backends = localBackends(data, data.threads.filter(t => servingPids.has(t.pid)), seconds)
  const last = serving.map(t => samplesOf(t).at(-1)).filter(s => s !== undefined)
  const heapUsed = last.reduce((a, s) => a + s.memory.heapUsed, 0)
  const heapLimit = serving.reduce((a, t) => a + (Number(t.hello.heapLimit) || 0), 0)
  const rate = finished / seconds
  const cpuPerRequestMs = finished > 0 ? cpuMs / finished : 0
  // Little's law: mean time on the server = mean requests in flight ÷ requests finished per ms. In flight is counted
  // between turns of the loop, so a request that starts and ends within one (a synchronous handler) is never seen: it
  // held the server for at least its CPU time, which is therefore the floor.
  const littleMs = finished > 0 ? inflightMean / (finished / (seconds * 1000)) : 0

  return {
    window: { start, end, seconds },
    port,
    servingProcesses: servingPids.size,
    samples: servingSamples.length,
    coverage: servingSamples.reduce((a, x) => a + x.interval, 0) / 1000 / Math.max(1, serving.length),
    requests: {
      finished,
      rate,
      serverTimeMean: Math.max(littleMs, cpuPerRequestMs),
      inflightMean
    },
    cpu: {
      ms: cpuMs,
      percent: cpuMs / (seconds * 1000),
      perRequestMs: cpuPerRequestMs
    },
    loop: {
      utilization: mean(servingSamples.map(s => s.utilization)),
      delayP50: percentile(delays, 50),
      delayP99: percentile(delays, 99),
      delayMax: delays.length > 0 ? Math.max(...delays) : 0
    },
    helpers: {
      count: helpers.length,
      utilization: Math.max(0, ...helpers.map(t => mean(samplesOf(t).map(x => x.utilization))))
    },
    gc: { share: gcMs / threadWallMs, cpuShare: cpuMs > 0 ? gcMs / cpuMs : 0, byKind, count: gcCount },
    memory: {
      trend,
      heapUsed,
      heapLimit,
      rss: last.reduce((a, s) => a + s.memory.rss, 0),
      perRequest: trend && rate > 0 ? trend.slope / rate : null
    },
    listeners: data.threads
      .filter(t => servingPids.has(t.pid))
      .flatMap(t => t.listeners.map(l => ({
        ...l,
        site: l.site ? { ...l.site, file: displayPath(String(l.site.file), String(t.hello.cwd ?? data.run.cwd)) } : null,
        pid: t.pid,
        threadId: t.threadId
      })))
      .sort((a, b) => b.count - a.count),
    agents: agentPressure(data.threads.filter(t => servingPids.has(t.pid)), start, end),
    outgoing: outgoingCalls(data, data.threads.filter(t => servingPids.has(t.pid)), start, end, finished, Math.max(littleMs, cpuPerRequestMs)),
    waits: computeWaits(serving, start, end, data.run.cwd),
    otherCores: otherCores(data, samplesOf, seconds, backends),
    backends,
    threads: data.threads.map(t => summarize(t, samplesOf(t), servingKeys.has(key(t)), port, seconds, roleOf(t, data.threads))).filter(t => t.samples > 0),
    exitedThreads: data.threads
      .filter(t => t.threadId > 0 && servingPids.has(t.pid) && t.exitedAt !== undefined && t.exitedAt >= start && t.exitedAt < end)
      .map(t => ({ pid: t.pid, threadId: t.threadId, at: Math.round((/** @type {number} */ (t.exitedAt) - start) / 100) / 10 }))
  }
}

/** @param {ThreadRecord} t */
const key = (t) => `${t.pid}-${t.threadId}`

/**
 * The trend of what survives garbage collection. Best evidence: the heap left right after each full (mark-compact)
 * collection — old-generation garbage is gone then, so only live data remains. With fewer than three full collections
 * in the window, the heap's floor (its lowest point in each quarter second, after the scavenges) is fitted instead,
 * with how much the heap after the last full collection exceeds that after the first: that floor also rises with
 * old-generation garbage not yet collected, so the rules ask more of it.
 * @param {Sample[]} samples
 * @param {number} start
 * @returns {HeapTrend | null}
 */
export function heapTrend (samples, start) {
  const afterMajor = samples.filter(s => (s.gc.byKind?.['mark-compact']?.count ?? 0) > 0)
  if (afterMajor.length >= 3) {
    return fitTrend(afterMajor.map(s => (s.time - start) / 1000), afterMajor.map(s => s.memory.heapUsed), 'major-gc', samples, afterMajor)
  }
  /** @type {Map<number, number>} */
  const floor = new Map()
  for (const s of samples) {
    const bucket = Math.floor((s.time - start) / FLOOR_BUCKET)
    const v = s.memory.heapUsed
    const low = floor.get(bucket)
    if (low === undefined || v < low) floor.set(bucket, v)
  }
  if (floor.size < 3) return null
  return fitTrend([...floor.keys()].map(x => (x + 0.5) * FLOOR_BUCKET / 1000), [...floor.values()], 'floor', samples, afterMajor)
}

const FLOOR_BUCKET = 250

/**
 * @param {number[]} xs seconds into the window
 * @param {number[]} ys bytes
 * @param {HeapTrend['basis']} basis
 * @param {Sample[]} samples
 * @param {Sample[]} afterMajor samples that saw a full collection
 * @returns {HeapTrend}
 */
function fitTrend (xs, ys, basis, samples, afterMajor) {
  const fit = linearFit(xs, ys)
  const seconds = samples.length > 1 ? (samples[samples.length - 1].time - samples[0].time) / 1000 : 0
  return {
    basis,
    points: xs.length,
    fullCollections: afterMajor.length,
    rise: afterMajor.length >= 2 ? afterMajor[afterMajor.length - 1].memory.heapUsed - afterMajor[0].memory.heapUsed : null,
    slope: fit.slope,
    r2: fit.r2,
    t: Number.isFinite(fit.slopeStdErr) && fit.slopeStdErr > 0 ? fit.slope / fit.slopeStdErr : (fit.slope > 0 ? Infinity : 0),
    start: Math.min(...ys.slice(0, 2)),
    growth: fit.slope * seconds,
    seconds
  }
}

/**
 * Serving processes leak together or not at all (cluster workers run the same code): add their slopes, keep the
 * weakest evidence.
 * @param {HeapTrend[]} trends
 * @returns {HeapTrend | null}
 */
function combineTrends (trends) {
  if (trends.length === 0) return null
  if (trends.length === 1) return trends[0]
  const rises = trends.map(t => t.rise)
  return {
    basis: trends.every(t => t.basis === 'major-gc') ? 'major-gc' : 'floor',
    fullCollections: Math.min(...trends.map(t => t.fullCollections)),
    rise: rises.every(r => r !== null) ? rises.reduce((a, r) => a + /** @type {number} */ (r), 0) : null,
    points: Math.min(...trends.map(t => t.points)),
    slope: trends.reduce((a, t) => a + t.slope, 0),
    r2: Math.min(...trends.map(t => t.r2)),
    t: Math.min(...trends.map(t => t.t)),
    start: trends.reduce((a, t) => a + t.start, 0),
    growth: trends.reduce((a, t) => a + t.growth, 0),
    seconds: Math.max(...trends.map(t => t.seconds))
  }
}

/**
 * @param {RunData} data
 * @param {(t: ThreadRecord) => Sample[]} samplesOf
 * @param {number} seconds
 * @param {Signals['backends']} backends
 */
function otherCores (data, samplesOf, seconds, backends) {
  const host = data.run.host
  if (!host) return null
  let targetMs = 0
  for (const t of data.threads) {
    if (t.threadId === 0) for (const s of samplesOf(t)) targetMs += s.cpu.user + s.cpu.system
  }
  const backendMs = (backends?.cores ?? 0) * seconds * 1000
  return Math.max(0, host.busyMs - host.ownCpuMs - targetMs - backendMs) / (seconds * 1000)
}

const LOCAL = /^(127\.\d+\.\d+\.\d+|\[::1\]|\[::ffff:127\.\d+\.\d+\.\d+\]|localhost):(\d+)$/

/**
 * The machine's processes that serve the target's client sockets: those listening on a local port the serving
 * processes connected to, and their children (PostgreSQL serves each connection from a child of its postmaster).
 * @param {RunData} data
 * @param {ThreadRecord[]} threads the serving processes' threads
 * @param {number} seconds
 * @returns {Signals['backends']}
 */
function localBackends (data, threads, seconds) {
  const processes = data.run.host?.processes
  if (!Array.isArray(processes) || processes.length === 0) return null
  /** @type {Set<number>} */
  const ports = new Set()
  for (const t of threads) {
    for (const snap of t.sockets) {
      for (const e of snap.endpoints) {
        const m = LOCAL.exec(String(e.endpoint))
        if (m) ports.add(Number(m[2]))
      }
    }
  }
  if (ports.size === 0) return null
  /** @type {Map<number, number>} pid → the port its family serves */
  const serving = new Map()
  for (const p of processes) {
    const port = (p.listens ?? []).find(x => ports.has(x))
    if (port !== undefined) serving.set(p.pid, port)
  }
  // Children of a backend that listen on nothing of their own: PostgreSQL serves each connection from such a child.
  for (let round = 0; round < 2; round++) {
    for (const p of processes) {
      if (!serving.has(p.pid) && serving.has(p.ppid) && (p.listens ?? []).length === 0) serving.set(p.pid, /** @type {number} */ (serving.get(p.ppid)))
    }
  }
  if (serving.size === 0) return null
  const list = processes.filter(p => serving.has(p.pid)).map(p => ({ pid: p.pid, name: p.name, cpuMs: p.cpuMs, port: /** @type {number} */ (serving.get(p.pid)) }))
  // A parent's time includes the children it reaped during the window, whole lives of them: never more than the
  // machine had to give.
  const host = /** @type {NonNullable<RunData['run']['host']>} */ (data.run.host)
  const spare = Math.max(0, host.busyMs - host.ownCpuMs)
  return { cores: Math.min(spare, list.reduce((a, p) => a + p.cpuMs, 0)) / (seconds * 1000), processes: list }
}

/**
 * Outgoing agent pools that ran out of sockets during the window.
 * @param {ThreadRecord[]} threads
 * @param {number} start
 * @param {number} end
 */
function agentPressure (threads, start, end) {
  /** @type {Map<string, { agent: string, maxSockets: number, maxQueued: number, maxInUse: number }>} */
  const byAgent = new Map()
  for (const t of threads) {
    for (const snap of t.agents) {
      if (snap.time < start || snap.time > end + 1500) continue
      for (const a of snap.agents) {
        const name = String(a.agent ?? 'agent')
        const entry = byAgent.get(name) ?? { agent: name, maxSockets: Number(a.maxSockets) || Infinity, maxQueued: 0, maxInUse: 0 }
        entry.maxQueued = Math.max(entry.maxQueued, Number(a.maxQueued ?? a.queued) || 0)
        entry.maxInUse = Math.max(entry.maxInUse, Number(a.socketsInUse) || 0)
        byAgent.set(name, entry)
      }
    }
  }
  return [...byAgent.values()].filter(a => a.maxQueued > 0 || a.maxInUse >= a.maxSockets).sort((a, b) => b.maxQueued - a.maxQueued)
}

/**
 * The outgoing calls of the window: each thread's counts (kept since it started) at the window's end less those at
 * its start.
 * @param {RunData} data
 * @param {ThreadRecord[]} threads
 * @param {number} start
 * @param {number} end
 * @param {number} requests finished on the loaded port in the window
 * @param {number} serverTimeMs per request
 * @returns {OutgoingSignal[]}
 */
function outgoingCalls (data, threads, start, end, requests, serverTimeMs) {
  /** @type {Map<string, { target: string, calls: number, finished: number, failed: number, totalMs: number, maxMs: number, site: any }>} */
  const byTarget = new Map()
  for (const t of threads) {
    // Counts at the last snapshot before the load and the first after it (snapshots come once a second while calls
    // are made), scaled by the window over the span they cover.
    const i = t.outgoing.findLastIndex(snap => snap.time <= start)
    const before = i >= 0 ? t.outgoing[i] : null
    const j = t.outgoing.findIndex(snap => snap.time >= end)
    const after = j >= 0 ? t.outgoing[j] : t.outgoing.at(-1)
    if (after === undefined || after === before) continue
    const scale = Math.min(1, (end - start) / Math.max(1, after.time - (before?.time ?? start)))
    /** @type {Map<string, any>} */
    const baseline = new Map((before?.outgoing ?? []).map(o => [String(o.target), o]))
    /** @type {Map<string, number>} */
    const longest = new Map()
    for (const snap of t.outgoing.slice(i + 1, j >= 0 ? j + 1 : undefined)) {
      for (const o of snap.outgoing) longest.set(String(o.target), Math.max(longest.get(String(o.target)) ?? 0, Number(o.maxMs) || 0))
    }
    const cwd = String(t.hello.cwd ?? data.run.cwd)
    for (const o of after.outgoing) {
      const target = String(o.target)
      const b = baseline.get(target)
      const diff = (/** @type {string} */ k) => Math.max(0, (Number(o[k]) || 0) - (Number(b?.[k]) || 0)) * scale
      const entry = byTarget.get(target) ?? { target, calls: 0, finished: 0, failed: 0, totalMs: 0, maxMs: 0, site: null }
      entry.calls += diff('started')
      entry.finished += diff('finished')
      entry.failed += diff('failed')
      entry.totalMs += diff('totalMs')
      entry.maxMs = Math.max(entry.maxMs, longest.get(target) ?? 0)
      if (entry.site === null && o.site) entry.site = { function: String(o.site.function || '(anonymous)'), file: displayPath(String(o.site.file), cwd), line: Number(o.site.line) || 0 }
      byTarget.set(target, entry)
    }
  }
  const requestMs = requests * serverTimeMs
  return [...byTarget.values()]
    .filter(e => e.calls > 0)
    .map(e => ({
      target: e.target,
      calls: Math.round(e.calls),
      finished: Math.round(e.finished),
      failed: Math.round(e.failed),
      meanMs: e.finished > 0 ? e.totalMs / e.finished : 0,
      maxMs: e.maxMs,
      perRequest: requests > 0 ? e.calls / requests : 0,
      share: requestMs > 0 ? Math.min(1, e.totalMs / requestMs) : 0,
      site: e.site
    }))
    .sort((a, b) => b.share - a.share || b.calls - a.calls)
}

/**
 * The probe knows a cluster worker from inside; a primary is known by its workers.
 * @param {ThreadRecord} t
 * @param {ThreadRecord[]} all
 */
function roleOf (t, all) {
  const role = String(t.hello.role ?? (t.threadId === 0 ? 'main' : 'worker-thread'))
  if (role === 'main' && all.some(o => o.hello.role === 'cluster-worker' && o.hello.ppid === t.pid)) return 'cluster-primary'
  return role
}

/**
 * @param {ThreadRecord} t
 * @param {Sample[]} samples
 * @param {boolean} serving
 * @param {number} port
 * @param {number} seconds
 * @param {string} role
 * @returns {ThreadSummary}
 */
function summarize (t, samples, serving, port, seconds, role) {
  const delays = samples.map(s => s.delay.max)
  const cpuMs = samples.reduce((a, s) => a + s.cpu.user + s.cpu.system, 0)
  return {
    pid: t.pid,
    threadId: t.threadId,
    role,
    serving,
    samples: samples.length,
    utilization: mean(samples.map(s => s.utilization)),
    delayP99: percentile(delays, 99),
    delayMax: delays.length > 0 ? Math.max(...delays) : 0,
    cpuPercent: t.threadId === 0 ? cpuMs / (seconds * 1000) : null,
    heapUsed: samples.at(-1)?.memory.heapUsed ?? 0,
    gcShare: samples.reduce((a, s) => a + s.gc.duration, 0) / (seconds * 1000),
    requests: samples.reduce((a, s) => a + (s.requests ?? []).filter(r => r.port === port).reduce((b, r) => b + r.finished, 0), 0)
  }
}
