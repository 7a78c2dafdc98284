import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { UsageError } from '../errors.js'
import { GC_KINDS } from '../sampling/gc.js'
import { correctUtilization } from './profile-utilization.js'

/**
 * @typedef {object} ThreadRecord
 * @property {number} pid
 * @property {number} threadId 0 for a process's main thread
 * @property {Record<string, any>} hello what the probe said of itself (argv, role, node version…)
 * @property {(import('../sampling/sampler.js').Sample & { requests: import('../probe/requests.js').RequestStats[] })[]} samples
 * @property {{ time: number, port: number, address: string }[]} listening
 * @property {any[]} listeners the latest listener-growth snapshot
 * @property {{ time: number, agents: any[] }[]} agents every agent-pool snapshot
 * @property {{ time: number, outgoing: any[] }[]} outgoing every snapshot of outgoing calls (counts since the start)
 * @property {{ time: number, ops: import('../sampling/sockets.js').TripStats[], endpoints: import('../sampling/sockets.js').EndpointStats[] }[]} sockets
 *   every snapshot of client-socket round trips (counts since the start)
 * @property {{ endpoint: string, pool: import('../sampling/pools.js').PoolSite }[]} pools where the app created the
 *   pools behind its connections, as last seen
 * @property {WaitData} waits the traced requests and what they waited on
 * @property {{ cpu?: string, heapAllocations?: string, heapRetained?: string }} profiles file names in the run directory:
 *   the CPU profile of the load window, and heap samples of every allocation (first part) and of survivors (the rest)
 * @property {boolean} exited the probe saw the thread exit
 * @property {number} [exitedAt] when, epoch ms
 * @property {import('./profile-utilization.js').Clock | null} clock both clocks when the load began, to place the CPU
 *   profile among the samples
 */

/**
 * @typedef {object} WaitData
 * @property {import('../sampling/waits.js').WaitRecord[]} traces
 * @property {Map<number, import('../sampling/waits.js').WaitSite>} sites
 * @property {Map<number, string[]>} resources [type, operation, target]
 * @property {Map<number, string>} kinds
 */

/**
 * @typedef {object} RunData
 * @property {string} dir
 * @property {import('../run/doctor-run.js').RunRecord} run
 * @property {ThreadRecord[]} threads
 */

/**
 * Reads a recorded run: run.json and every probe's event log. Lines that do not parse (a target killed mid-write) are
 * skipped; a directory without run.json is refused.
 * @param {string} dir
 * @returns {RunData}
 */
export function readRun (dir) {
  const abs = resolve(dir)
  const runFile = join(abs, 'run.json')
  if (!existsSync(runFile)) throw new UsageError(`no hotpath run in '${dir}' (run.json is missing)`)
  let run
  try {
    run = JSON.parse(readFileSync(runFile, 'utf8'))
  } catch {
    throw new UsageError(`'${runFile}' is not valid JSON`)
  }
  if (run?.kind !== 'hotpath-run' || typeof run.loadWindow?.start !== 'number' || typeof run.loadWindow.end !== 'number') {
    throw new UsageError(`'${runFile}' is not a hotpath run record`)
  }
  // The analysis needs only the window; a record written by hand, by another tool or an older hotpath may lack the rest.
  if (run.listening === null || typeof run.listening !== 'object') run.listening = { pid: 0, port: 0 }
  if (run.exit === null || typeof run.exit !== 'object') run.exit = { code: null, signal: null, crashed: false }
  if (!Array.isArray(run.command)) run.command = []
  if (!Array.isArray(run.stderr)) run.stderr = []
  if (typeof run.cwd !== 'string') run.cwd = abs
  run.aborted = run.aborted === true
  const threads = readdirSync(abs)
    .filter(f => /^events-\d+-\d+\.ndjson$/.test(f))
    .map(f => readThread(join(abs, f)))
    .filter(t => t !== null)
    .sort((a, b) => a.pid - b.pid || a.threadId - b.threadId)
  const data = { dir: abs, run, threads }
  // libuv misreads utilisation while the CPU profiler runs; the profile itself knows (see profile-utilization.js)
  for (const t of threads) {
    if (t.clock !== null && t.profiles.cpu) correctUtilization(t.samples, readRunProfile(data, t.profiles.cpu), t.clock)
  }
  return data
}

/**
 * @param {string} file
 * @returns {ThreadRecord | null}
 */
function readThread (file) {
  /** @type {ThreadRecord} */
  const t = { pid: 0, threadId: 0, hello: {}, samples: [], listening: [], listeners: [], agents: [], outgoing: [], sockets: [], pools: [], waits: { traces: [], sites: new Map(), resources: new Map(), kinds: new Map() }, profiles: {}, exited: false, clock: null }
  /** @type {unknown[]} */
  const gcTrace = []
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue
    let e
    try {
      e = JSON.parse(line)
    } catch {
      continue
    }
    if (e === null || typeof e !== 'object') continue
    switch (e.type) {
      case 'hello':
        t.hello = e
        t.pid = Number(e.pid) || 0
        t.threadId = Number(e.threadId) || 0
        break
      case 'sample':
        if (typeof e.time === 'number' && typeof e.interval === 'number') t.samples.push(e)
        break
      case 'load-start':
        if (typeof e.time === 'number' && typeof e.monotonic === 'number') t.clock = { time: e.time, monotonic: e.monotonic }
        break
      case 'listening':
        t.listening.push(e)
        break
      case 'listeners':
        if (Array.isArray(e.listeners)) t.listeners = e.listeners
        break
      case 'agents':
        if (Array.isArray(e.agents)) t.agents.push(e)
        break
      case 'outgoing':
        if (Array.isArray(e.outgoing) && typeof e.time === 'number') t.outgoing.push(e)
        break
      case 'sockets':
        if (Array.isArray(e.ops) && Array.isArray(e.endpoints) && typeof e.time === 'number') t.sockets.push(e)
        break
      case 'pools':
        if (Array.isArray(e.pools)) t.pools = e.pools
        break
      case 'waits':
        addWaits(t.waits, e)
        break
      case 'profiles':
        for (const k of /** @type {const} */ (['cpu', 'heapAllocations', 'heapRetained'])) {
          if (typeof e[k] === 'string') t.profiles[k] = e[k]
        }
        break
      case 'gc-trace':
        if (Array.isArray(e.events)) gcTrace.push(...e.events)
        break
      case 'exit':
        t.exited = true
        if (typeof e.time === 'number') t.exitedAt = e.time
        break
    }
  }
  spreadCpu(t.samples)
  if (t.clock !== null && gcTrace.length > 0) addTracedGc(t.samples, gcTrace, t.clock)
  return t.pid > 0 ? t : null
}

/**
 * Adds a 'waits' event (traced requests, and the sites, resources and kinds they first named) to a thread's record.
 * @param {WaitData} waits
 * @param {any} e
 */
function addWaits (waits, e) {
  for (const [id, site] of Array.isArray(e.sites) ? e.sites : []) {
    if (Number.isInteger(id) && site !== null && typeof site === 'object' && typeof site.file === 'string') waits.sites.set(id, site)
  }
  for (const [id, r] of Array.isArray(e.resources) ? e.resources : []) {
    if (Number.isInteger(id) && Array.isArray(r)) waits.resources.set(id, r.map(String))
  }
  for (const [id, k] of Array.isArray(e.kinds) ? e.kinds : []) {
    if (Number.isInteger(id)) waits.kinds.set(id, String(k))
  }
  for (const trace of Array.isArray(e.traces) ? e.traces : []) {
    if (trace === null || typeof trace !== 'object' || typeof trace.time !== 'number' || typeof trace.ms !== 'number' || !Array.isArray(trace.spans)) continue
    waits.traces.push({ time: trace.time, ms: trace.ms, spans: trace.spans.filter((/** @type {unknown} */ s) => Array.isArray(s) && s.length >= 9 && s.every(Number.isFinite)) })
  }
}

/**
 * The probe reads the process's CPU time on every few samples only (Sampler's `cpuEvery`): such a read carries the CPU
 * used over its `span`, the samples before it zeros and `span: 0`. Spread each read back over the samples it covers,
 * in proportion to their intervals, so that every sample holds its share, as if each had read the CPU: sums over a
 * window then differ from exact ones by at most a span at either end, and charts show the CPU averaged over a span.
 * Samples after the last read (a target killed before its next) keep their zeros.
 * @param {ThreadRecord['samples']} samples
 */
function spreadCpu (samples) {
  /** @type {ThreadRecord['samples']} */
  let pending = []
  for (const s of samples) {
    const cpu = s.cpu
    if (cpu === null || typeof cpu !== 'object' || typeof cpu.span !== 'number') continue
    if (cpu.span === 0) {
      pending.push(s)
      continue
    }
    delete cpu.span
    if (pending.length === 0) continue
    let ms = s.interval
    for (const p of pending) ms += p.interval
    if (ms > 0) {
      const { user, system } = cpu
      for (const p of [...pending, s]) {
        const share = p.interval / ms
        p.cpu = { user: user * share, system: system * share }
      }
    }
    pending = []
  }
}

/**
 * Counts GC pauses from V8's trace events (the probe's main thread records them instead of observing each GC) into
 * the samples, each in the sample where it ended — what a 'gc' PerformanceObserver would have counted there.
 * @param {ThreadRecord['samples']} samples
 * @param {unknown[]} events [start µs on the monotonic clock, duration µs, index into GC_KINDS]
 * @param {{ time: number, monotonic: number }} clock one instant on both clocks (ms since the epoch, µs monotonic)
 */
function addTracedGc (samples, events, clock) {
  const ends = []
  for (const e of events) {
    if (!Array.isArray(e) || typeof e[0] !== 'number' || typeof e[1] !== 'number' || GC_KINDS[e[2]] === undefined) continue
    ends.push({ at: clock.time + (e[0] + e[1] - clock.monotonic) / 1000, ms: e[1] / 1000, kind: GC_KINDS[e[2]] })
  }
  ends.sort((a, b) => a.at - b.at)
  let i = 0
  let first = true
  for (const s of samples) {
    const gc = s.gc
    // A damaged line (a target killed mid-write) keeps what it has; the pauses go to the next good sample.
    if (gc === null || typeof gc !== 'object' || !Number.isFinite(s.time) || !Number.isFinite(s.interval)) continue
    // Samples follow each other without gaps, but their times are whole milliseconds (Date.now) and their intervals
    // are not: a pause must go to the first sample at or after its end, not fall between two of them.
    if (first) {
      const from = s.time - s.interval
      while (i < ends.length && ends[i].at <= from) i++
      first = false
    }
    if (gc.byKind === null || typeof gc.byKind !== 'object') gc.byKind = /** @type {any} */ ({})
    for (; i < ends.length && ends[i].at <= s.time; i++) {
      const { ms, kind } = ends[i]
      gc.count = (Number(gc.count) || 0) + 1
      gc.duration = (Number(gc.duration) || 0) + ms
      const k = gc.byKind[kind]
      if (k !== null && typeof k === 'object') {
        k.count = (Number(k.count) || 0) + 1
        k.duration = (Number(k.duration) || 0) + ms
      } else {
        gc.byKind[kind] = { count: 1, duration: ms }
      }
    }
  }
}

/**
 * Reads a profile file a probe wrote (null when it is missing or unreadable).
 * @param {RunData} data
 * @param {string | undefined} name
 * @returns {any}
 */
export function readRunProfile (data, name) {
  if (!name || !/^[\w.-]+$/.test(name)) return null
  try {
    return JSON.parse(readFileSync(join(data.dir, name), 'utf8'))
  } catch {
    return null
  }
}
