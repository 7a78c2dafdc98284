// Reading one probe's event log (events-<pid>-<thread>.ndjson) into a thread's record, with the CPU reads and GC
// pauses placed in the samples they belong to.
import { readFileSync } from 'node:fs'
import { parseJsonLines } from '../ndjson.js'
import { GC_KINDS } from '../sampling/gc.js'
import { RECORD } from '../probe-protocol.js'

/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {import('./run-data.js').WaitData} WaitData */
/** @typedef {import('./run-data.js').RunDamage} RunDamage */

/** The profiles a probe writes for its thread, by the names its 'profiles' record gives them (probe-protocol.js). */
export const PROFILE_KINDS = /** @type {const} */ (['cpu', 'heapAllocations', 'heapRetained'])

/**
 * @param {string} file
 * @param {RunDamage[]} damage where to record lines that are damaged
 * @returns {ThreadRecord | null}
 */
export function readThread (file, damage) {
  // The probe names its log after its process and thread: that still says whose it is when the hello line is lost.
  const [, pid, threadId] = /** @type {RegExpExecArray} */ (/events-(\d+)-(\d+)\.ndjson$/.exec(file))
  /** @type {ThreadRecord} */
  const t = { pid: Number(pid), threadId: Number(threadId), hello: {}, samples: [], listening: [], listeners: [], agents: [], outgoing: [], sockets: [], pools: [], env: [], waits: { traces: [], sites: new Map(), resources: new Map(), kinds: new Map() }, profiles: {}, scripts: [], exited: false, clock: null, settled: {}, instruments: [], constructions: [], routes: null }
  /** @type {unknown[]} */
  const gcTrace = []
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    damage.push({ file, kind: 'events', pid: t.pid, threadId: t.threadId, problem: `unreadable: ${/** @type {NodeJS.ErrnoException} */ (err).code ?? err}`, lines: 0 })
    return null
  }
  const { values, bad } = parseJsonLines(text)
  if (bad.length > 0) {
    const first = bad[0]
    const where = `line ${first.line.toLocaleString('en-US')}, at byte ${first.byte.toLocaleString('en-US')}`
    const problem = bad.length === 1 ? `${where}, is not JSON` : `${bad.length.toLocaleString('en-US')} lines are not JSON, the first ${where}`
    damage.push({ file, kind: 'events', pid: t.pid, threadId: t.threadId, problem, lines: bad.length })
  }
  for (const { value: e } of values) {
    switch (e.type) {
      case RECORD.HELLO:
        t.hello = e
        t.pid = Number(e.pid) || t.pid
        t.threadId = Number(e.threadId) || 0
        break
      case RECORD.SAMPLE:
        if (typeof e.time === 'number' && typeof e.interval === 'number') t.samples.push(e)
        break
      case RECORD.LOAD_START:
        if (typeof e.time === 'number' && typeof e.monotonic === 'number') t.clock = { time: e.time, monotonic: e.monotonic }
        break
      case RECORD.LISTENING:
        t.listening.push(e)
        break
      case RECORD.ROUTES:
        t.routes = routesOf(e)
        break
      case RECORD.LISTENERS:
        if (Array.isArray(e.listeners)) t.listeners = e.listeners
        break
      case RECORD.AGENTS:
        if (Array.isArray(e.agents)) t.agents.push(e)
        break
      case RECORD.ENV_READS:
        for (const r of Array.isArray(e.reads) ? e.reads : []) {
          if (r !== null && typeof r === 'object' && typeof r.name === 'string') t.env.push(r)
        }
        break
      case RECORD.OUTGOING:
        if (Array.isArray(e.outgoing) && typeof e.time === 'number') t.outgoing.push(e)
        break
      case RECORD.SOCKETS:
        if (Array.isArray(e.ops) && Array.isArray(e.endpoints) && typeof e.time === 'number') t.sockets.push(e)
        break
      case RECORD.POOLS:
        if (Array.isArray(e.pools)) t.pools = e.pools
        break
      case RECORD.WAITS:
        addWaits(t.waits, e)
        break
      case RECORD.PROFILES:
        for (const k of PROFILE_KINDS) {
          if (typeof e[k] === 'string') t.profiles[k] = e[k]
        }
        break
      case RECORD.SCRIPTS:
        for (const r of Array.isArray(e.scripts) ? e.scripts : []) {
          if (typeof r?.url === 'string' && typeof r.source === 'string' && /^scripts\/[\w.-]+$/.test(r.source)) t.scripts.push({ url: r.url, source: r.source })
        }
        break
      case RECORD.GC_TRACE:
        if (Array.isArray(e.events)) gcTrace.push(...e.events)
        break
      case RECORD.CONSTRUCTIONS:
        for (const c of Array.isArray(e.constructions) ? e.constructions : []) {
          if (Array.isArray(c?.classes) && typeof c.site?.file === 'string') t.constructions.push({ classes: c.classes.map(String), site: c.site })
        }
        break
      case RECORD.RUNTIME_HOOKS:
        // What the app replaced of the runtime (runtime-hooks.js), as the load began: the last load's word stands.
        t.runtime = {
          hooks: (Array.isArray(e.hooks) ? e.hooks : []).filter((/** @type {any} */ h) => typeof h?.kind === 'string' && typeof h.name === 'string').map(runtimeHook),
          stackTraceLimit: Number.isFinite(e.stackTraceLimit) ? e.stackTraceLimit : 10
        }
        break
      case RECORD.INSTRUMENT:
        if ((e.what === 'trace' || e.what === 'profile') && typeof e.on === 'boolean' && typeof e.time === 'number') t.instruments.push({ what: e.what, on: e.on, time: e.time })
        break
      case RECORD.HEAP_SETTLED:
        if (e.phase === 'start' || e.phase === 'end') {
          // Read while request handlers still ran (the probe waited for them, within a bound): what they held is in it.
          if (typeof e.heapUsed === 'number' && !(Number(e.inflight) > 0)) t.settled[/** @type {'start' | 'end'} */ (e.phase)] = e.heapUsed
        }
        break
      case RECORD.THREADS_UNCLOSED:
        // The main thread gave up waiting for these worker threads to write their profiles (thread-windows.js).
        if (Array.isArray(e.threads)) t.unclosed = { threads: e.threads.filter(Number.isInteger), waitedMs: Number(e.waitedMs) || 0 }
        break
      case RECORD.EXIT:
        t.exited = true
        if (typeof e.time === 'number') t.exitedAt = e.time
        break
    }
  }
  spreadCpu(t.samples)
  if (t.clock !== null && gcTrace.length > 0) addTracedGc(t.samples, gcTrace, t.clock)
  // A log with nothing readable in it says nothing of its thread (its damage, if any, is recorded above).
  return t.pid > 0 && values.length > 0 ? t : null
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
    const floating = Array.isArray(trace.floating) ? trace.floating.filter((/** @type {unknown} */ f) => Array.isArray(f) && f.length >= 5 && f.every(Number.isFinite)) : []
    waits.traces.push({ time: trace.time, ms: trace.ms, spans: trace.spans.filter((/** @type {unknown} */ s) => Array.isArray(s) && s.length >= 9 && s.every(Number.isFinite)), ...(typeof trace.route === 'string' ? { route: trace.route } : {}), ...(trace.cut === 1 ? { cut: /** @type {1} */ (1) } : {}), ...(floating.length > 0 ? { floating } : {}) })
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
 * A hook the probe recorded, its fields checked.
 * @param {any} h
 * @returns {import('../probe/runtime-hooks.js').RuntimeHook}
 */
function runtimeHook (h) {
  const kinds = ['prepareStackTrace', 'require-extension', 'loader', 'polyfill']
  return {
    kind: kinds.includes(h.kind) ? h.kind : 'loader',
    name: String(h.name),
    function: typeof h.function === 'string' ? h.function : '(anonymous)',
    file: typeof h.file === 'string' ? h.file : null,
    line: Number(h.line) || 0,
    column: Number(h.column) || 0,
    loadedBy: Array.isArray(h.loadedBy) ? h.loadedBy.filter((/** @type {unknown} */ f) => typeof f === 'string') : []
  }
}

/**
 * An observing window's requests by route, each field checked (a saved run may come from another version).
 * @param {any} e
 * @returns {import('./run-data.js').RouteRecord | null}
 */
function routesOf (e) {
  if (!Array.isArray(e.routes) || typeof e.origin !== 'number') return null
  const routes = e.routes
    .filter((/** @type {any} */ r) => r !== null && typeof r === 'object' && typeof r.route === 'string' && typeof r.method === 'string' && Number.isFinite(r.requests) && Number.isFinite(r.totalMs))
    .map((/** @type {any} */ r) => ({ method: r.method, route: r.route, requests: r.requests, totalMs: r.totalMs, maxMs: Number(r.maxMs) || 0 }))
  const intervals = Array.isArray(e.intervals) && e.intervals.every(Number.isFinite) ? e.intervals : []
  return { time: Number(e.time) || 0, origin: e.origin, routes, intervals, dropped: Number(e.dropped) || 0 }
}
