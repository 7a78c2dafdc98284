import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { UsageError } from '../errors.js'
import { parseJsonLines } from '../ndjson.js'
import { parseCpuProfile, parseHeapProfile } from '../profile/cpuprofile.js'
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
 * @property {RunDamage[]} damage files of the run that could not be read whole: what they held is missing from
 *   `threads` (a damaged profile is dropped from its thread's `profiles`)
 */

/**
 * @typedef {object} RunDamage
 * @property {string} file absolute path
 * @property {'events' | 'cpu' | 'heapAllocations' | 'heapRetained'} kind what the file holds
 * @property {number} pid
 * @property {number} threadId
 * @property {string} problem what is wrong with it, in words (`not JSON at byte 18,342`)
 * @property {number} [lines] for an event log: how many of its lines are lost
 */

/**
 * Reads a recorded run: run.json, every probe's event log and the profiles they name, each checked. A last line cut
 * short (a target killed mid-write) is skipped quietly; any other line that does not parse, and a profile that is
 * missing or not a profile, is recorded in `damage` and left out. A directory without run.json is refused.
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
  const names = readdirSync(abs)
  /** @type {RunDamage[]} */
  const damage = []
  const threads = names
    .filter(f => /^events-\d+-\d+\.ndjson$/.test(f))
    .map(f => readThread(join(abs, f), damage))
    .filter(t => t !== null)
    .sort((a, b) => a.pid - b.pid || a.threadId - b.threadId)
  const data = { dir: abs, run, threads, damage }
  for (const t of threads) checkProfiles(data, t, names)
  // libuv misreads utilisation while the CPU profiler runs; the profile itself knows (see profile-utilization.js)
  for (const t of threads) {
    if (t.clock !== null && t.profiles.cpu) correctUtilization(t.samples, readRunProfile(data, t.profiles.cpu), t.clock)
  }
  return data
}

const PROFILE_KINDS = /** @type {const} */ (['cpu', 'heapAllocations', 'heapRetained'])
/** The probe names a thread's profiles after it (probe.js): how one is found when the line naming it was lost. */
const PROFILE_FILES = { cpu: 'cpu-{}.cpuprofile', heapAllocations: 'heap-allocations-{}.heapprofile', heapRetained: 'heap-retained-{}.heapprofile' }

/**
 * Checks every profile a thread's event log names: one that is missing or not a profile is recorded as damage and
 * dropped, so that nothing downstream mistakes it for a thread that was not profiled. When the thread's log is itself
 * damaged, the line naming a profile may be what was lost: a profile file by the probe's name for the thread is
 * taken then.
 * @param {RunData} data
 * @param {ThreadRecord} t
 * @param {string[]} names the files of the run directory
 */
function checkProfiles (data, t, names) {
  const logDamaged = data.damage.some(d => d.kind === 'events' && d.pid === t.pid && d.threadId === t.threadId)
  for (const kind of PROFILE_KINDS) {
    const own = PROFILE_FILES[kind].replace('{}', `${t.pid}-${t.threadId}`)
    if (t.profiles[kind] === undefined && logDamaged && names.includes(own)) t.profiles[kind] = own
    const name = t.profiles[kind]
    if (name === undefined) continue
    const problem = profileProblem(data.dir, name, kind)
    if (problem === null) continue
    data.damage.push({ file: join(data.dir, name), kind, pid: t.pid, threadId: t.threadId, problem })
    delete t.profiles[kind]
  }
}

/**
 * What is wrong with a profile file of the run, or null when it reads as the profile it should be.
 * @param {string} dir
 * @param {string} name
 * @param {'cpu' | 'heapAllocations' | 'heapRetained'} kind
 * @returns {string | null}
 */
function profileProblem (dir, name, kind) {
  if (!/^[\w.-]+$/.test(name)) return 'its name points outside the run directory'
  let text
  try {
    text = readFileSync(join(dir, name), 'utf8')
  } catch (err) {
    const code = /** @type {NodeJS.ErrnoException} */ (err).code
    return code === 'ENOENT' ? 'missing' : `unreadable: ${code ?? err}`
  }
  let json
  try {
    json = JSON.parse(text)
  } catch {
    return jsonProblem(text)
  }
  try {
    if (kind === 'cpu') parseCpuProfile(json, name)
    else parseHeapProfile(json, name)
  } catch (err) {
    const why = /** @type {Error} */ (err).message.replace(/^.*? is not a valid \.\w+: /, '')
    return `not a ${kind === 'cpu' ? 'CPU' : 'heap'} profile: ${why}`
  }
  return null
}

/**
 * Where a text stops being JSON, in bytes: cut short (a valid beginning), or the first byte no JSON could hold.
 * @param {string} text
 */
function jsonProblem (text) {
  if (text.trim() === '') return 'empty'
  let at = stopsAt(text)
  if (at >= text.trimEnd().length) return `cut short at byte ${Buffer.byteLength(text).toLocaleString('en-US')}`
  // V8 does not say where an unexpected character is; a beginning of the text either could start JSON or could not.
  if (at === -1 && text.length <= 64 * 1024 * 1024) {
    let good = 0
    let bad = text.length
    while (bad - good > 1 && at === -1) {
      const mid = Math.floor((good + bad) / 2)
      const stop = stopsAt(text.slice(0, mid))
      if (stop >= mid) good = mid
      else if (stop !== -1) at = stop
      else bad = mid
    }
    if (at === -1) at = bad - 1
  }
  return at === -1 ? 'not JSON' : `not JSON at byte ${Buffer.byteLength(text.slice(0, at)).toLocaleString('en-US')}`
}

/**
 * How far a text reads as JSON: its length when it is JSON or the beginning of some, else where V8 stopped (-1 when
 * it does not say).
 * @param {string} text
 */
function stopsAt (text) {
  try {
    JSON.parse(text)
    return text.length
  } catch (err) {
    const message = String(/** @type {Error} */ (err)?.message)
    if (/end of JSON input/.test(message)) return text.length
    const at = /at position (\d+)/.exec(message)
    return at ? Number(at[1]) : -1
  }
}

/**
 * @param {string} file
 * @param {RunDamage[]} damage where to record lines that are damaged
 * @returns {ThreadRecord | null}
 */
function readThread (file, damage) {
  // The probe names its log after its process and thread: that still says whose it is when the hello line is lost.
  const [, pid, threadId] = /** @type {RegExpExecArray} */ (/events-(\d+)-(\d+)\.ndjson$/.exec(file))
  /** @type {ThreadRecord} */
  const t = { pid: Number(pid), threadId: Number(threadId), hello: {}, samples: [], listening: [], listeners: [], agents: [], outgoing: [], sockets: [], pools: [], waits: { traces: [], sites: new Map(), resources: new Map(), kinds: new Map() }, profiles: {}, exited: false, clock: null }
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
      case 'hello':
        t.hello = e
        t.pid = Number(e.pid) || t.pid
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
        for (const k of PROFILE_KINDS) {
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
