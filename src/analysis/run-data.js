// A recorded run as the analysis reads it: run.json, and every thread's event log and profiles, each checked.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { TargetError, UsageError } from '../errors.js'
import { eventLogs, eventLogsOf, unfinishedRun } from '../run-files.js'
import { correctUtilization } from './profile-utilization.js'
import { PROFILE_KINDS, readThread } from './run-events.js'
import { checkedProfile } from './run-profile-check.js'
import { SourceCache } from '../profile/sources.js'
import { fileOfUrl } from '../profile/classify.js'
import { mapRunSites } from './run-sites.js'

/**
 * @typedef {object} ThreadRecord
 * @property {number} pid
 * @property {number} threadId 0 for a process's main thread
 * @property {Record<string, any>} hello what the probe said of itself (argv, role, node version…)
 * @property {(import('../sampling/sampler.js').Sample & { requests: import('../probe/request-tracker.js').RequestStats[] })[]} samples
 * @property {{ time: number, port: number, address: string, http?: boolean }[]} listening every port the thread
 *   listened on (`http`: whether an HTTP server, in runs recorded since the probe said)
 * @property {any[]} listeners the latest listener-growth snapshot
 * @property {{ time: number, agents: any[] }[]} agents every agent-pool snapshot
 * @property {import('../sampling/env-reads.js').EnvRead[]} env the environment variables the app read, each at its
 *   first read (runs recorded before the probe watched them have none)
 * @property {{ time: number, outgoing: any[] }[]} outgoing every snapshot of outgoing calls (counts since the start)
 * @property {{ time: number, ops: import('../sampling/sockets.js').TripStats[], endpoints: import('../sampling/sockets.js').EndpointStats[] }[]} sockets
 *   every snapshot of client-socket round trips (counts since the start)
 * @property {{ endpoint: string, pool: import('../sampling/pools.js').PoolSite }[]} pools where the app created the
 *   pools behind its connections, as last seen
 * @property {RouteRecord | null} routes an observing window's requests by route (`--observe`), or null
 * @property {WaitData} waits the traced requests and what they waited on
 * @property {{ cpu?: string, heapAllocations?: string, heapRetained?: string }} profiles file names in the run directory:
 *   the CPU profile of the load window, and heap samples of every allocation (first part) and of survivors (the rest)
 * @property {import('../probe/transformed-scripts.js').RecordedScript[]} scripts the scripts a loader transformed in
 *   memory, with the copy of the code that ran (runs recorded before the probe copied them have none)
 * @property {boolean} exited the probe saw the thread exit
 * @property {{ threads: number[], waitedMs: number }} [unclosed] a main thread's: its worker threads that had not
 *   closed their load window (written their profiles) when it stopped waiting for them
 * @property {number} [exitedAt] when, epoch ms
 * @property {import('./profile-utilization.js').Clock | null} clock both clocks when the load began, to place the CPU
 *   profile among the samples
 * @property {{ start?: number, end?: number }} settled bytes of heap left by a full collection just before the load and
 *   just after it (runs recorded before the probe took them have none)
 * @property {{ classes: string[], site: import('../sampling/stack.js').Site }[]} constructions where the app constructed
 *   its packages' event emitters while it started (class, and the classes it extends), as the load began
 * @property {import('../probe/runtime-hooks.js').RuntimeState} [runtime] what the app had replaced of the runtime as the
 *   load began: Error.prepareStackTrace, require hooks, built-ins (runs recorded before the probe looked have none)
 * @property {{ what: 'trace' | 'profile', on: boolean, time: number }[]} instruments when the probe's costly parts (the
 *   wait tracer's hooks, the CPU profiler) went on and off, in order (runs recorded before the probe said have none)
 */

/**
 * @typedef {object} RouteRecord an observing window's requests by route, as one thread's probe timed them
 * @property {number} time epoch ms the window closed
 * @property {number} origin µs of the monotonic clock (the CPU profile's) at the probe's performance.now() = 0
 * @property {import('../sampling/route-timer.js').RouteFigures[]} routes
 * @property {number[]} intervals [start ms, end ms, index into routes] per request, on performance.now()'s clock
 * @property {number} dropped requests whose interval was not kept (beyond the probe's cap)
 */

/**
 * @typedef {object} WaitData
 * @property {import('../sampling/wait-tracer.js').WaitRecord[]} traces
 * @property {Map<number, import('../sampling/wait-tracer.js').WaitSite>} sites
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
 * @property {Map<string, any>} [profiles] the profiles read while checking them, by file name: each is read and
 *   parsed once, however many parts of the analysis and the report use it
 * @property {Retainers | null} [retainers] what keeps what the load left alive, when the run looked (retainers.json)
 * @property {SourceCache} [sources] the code that ran, as the threads' probes copied it (see runSources)
 */

/**
 * What the heap snapshots taken after the load found (src/heap/run-retainers.js writes it).
 * @typedef {object} Retainers
 * @property {number} requests of the growth phase between the first two snapshots
 * @property {import('../heap/describe-groups.js').Culprit[]} culprits groups of objects that grow with load, most bytes first
 * @property {{ count: number, bytes: number } | null} survivors everything the growth phase left alive
 * @property {number} minCount objects a group needs to grow with load
 * @property {string | null} error why the snapshots could not be read
 */

/**
 * @typedef {object} RunDamage
 * @property {string} file absolute path
 * @property {'events' | 'cpu' | 'heapAllocations' | 'heapRetained' | 'retainers'} kind what the file holds, or would
 *   have held (`retainers`: the heap snapshots' findings)
 * @property {number} pid
 * @property {number} threadId
 * @property {string} problem what is wrong with it, in words (`not JSON at byte 18,342`), or why it was not taken
 * @property {number} [lines] for an event log: how many of its lines are lost
 * @property {true} [notTaken] a heap phase after the window stopped short and never wrote it (`problem` says why)
 * @property {true} [notWritten] the probe never wrote it (`problem` says why)
 */

/**
 * Reads a recorded run: run.json, every probe's event log and the profiles they name, each checked. A last line cut
 * short (a target killed mid-write) is skipped quietly; any other line that does not parse, and a profile that is
 * missing or not a profile, is recorded in `damage` and left out. A directory without run.json is refused.
 * @param {string} dir
 * @param {{ live?: boolean }} [how] `live`: read by the doctor that records it, between its verdict and the heap
 *   snapshots that follow it; otherwise snapshots still `pending` in run.json were never taken (hotpath stopped first)
 * @returns {RunData}
 */
export function readRun (dir, how = {}) {
  const abs = resolve(dir)
  const runFile = join(abs, 'run.json')
  if (!existsSync(runFile)) {
    // Event logs without run.json: hotpath was stopped (killed) before it finished recording.
    const unfinished = existsSync(abs) ? unfinishedRun(readdirSync(abs)) : null
    if (unfinished !== null) {
      throw new UsageError(`'${dir}' holds an unfinished run: ${eventLogsOf(unfinished)}, but no run.json (hotpath was stopped before it finished recording): nothing to analyse — record the run again (it may record into '${dir}')`)
    }
    throw new UsageError(`no hotpath run in '${dir}' (run.json is missing)`)
  }
  let run
  try {
    run = JSON.parse(readFileSync(runFile, 'utf8'))
  } catch {
    throw new UsageError(`'${runFile}' is not valid JSON`)
  }
  // A run that failed before its load window: what it printed then, with the same exit code.
  if (run?.kind === 'hotpath-run' && typeof run.failed?.message === 'string') {
    const code = Number.isInteger(run.failed.exitCode) ? run.failed.exitCode : 2
    throw new TargetError(`'${dir}' holds a run that failed before its load: ${run.failed.message}`, { exitCode: code, stderr: Array.isArray(run.failed.stderr) ? run.failed.stderr.map(String) : [] })
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
  if (!how.live && run.retainers?.pending) {
    const { pending, ...rest } = run.retainers
    run.retainers = { ...rest, skipped: { why: 'unfinished', heapBytes: pending.heapBytes, seconds: pending.seconds, budget: pending.budget } }
  }
  const names = readdirSync(abs)
  /** @type {RunDamage[]} */
  const damage = []
  const logs = eventLogs(names)
  for (const lost of missingLogs(run, logs)) {
    damage.push({ file: join(abs, lost.name), kind: 'events', pid: lost.pid, threadId: lost.threadId, problem: 'missing' })
  }
  const threads = logs
    .map(l => readThread(join(abs, l.name), damage))
    .filter(t => t !== null)
    .sort((a, b) => a.pid - b.pid || a.threadId - b.threadId)
  const data = { dir: abs, run, threads, damage, profiles: new Map(), retainers: readRetainers(abs) }
  addPhaseProfiles(data)
  for (const t of threads) checkProfiles(data, t, names)
  for (const t of threads) addUnwrittenProfiles(data, t)
  // libuv misreads utilisation while the CPU profiler runs; the profile itself knows (see profile-utilization.js)
  for (const t of threads) {
    if (t.clock !== null && t.profiles.cpu) correctUtilization(t.samples, readRunProfile(data, t.profiles.cpu), t.clock)
  }
  // The places read off stacks, in the source the user wrote (the profiles are mapped as their models are built).
  mapRunSites(data)
  return data
}

/**
 * The event logs the run wrote that are gone: those run.json lists and the directory no longer holds; for a run saved
 * before run.json listed them, the loaded process's main thread's when no log is left at all (a probe that saw the
 * target wrote one at least).
 * @param {any} run
 * @param {{ name: string, pid: number, threadId: number }[]} logs
 * @returns {{ name: string, pid: number, threadId: number }[]}
 */
function missingLogs (run, logs) {
  const here = new Set(logs.map(l => l.name))
  if (Array.isArray(run.events)) return eventLogs(run.events.map(String)).filter(l => !here.has(l.name))
  const pid = Number(run.listening?.pid)
  if (logs.length > 0 || !(pid > 0)) return []
  return [{ name: `events-${pid}-0.ndjson`, pid, threadId: 0 }]
}

/**
 * @param {string} dir
 * @returns {Retainers | null}
 */
function readRetainers (dir) {
  try {
    const r = JSON.parse(readFileSync(join(dir, 'retainers.json'), 'utf8'))
    return r !== null && typeof r === 'object' && Array.isArray(r.culprits) && r.error === null ? r : null
  } catch {
    return null
  }
}

/**
 * The heap samples doctor takes after the window (src/run/phases/memory-phases.js) belong to the loaded process's main
 * thread: run.json names them, its probe's log does not.
 * @param {RunData} data
 */
function addPhaseProfiles (data) {
  const run = /** @type {any} */ (data.run)
  const main = data.threads.find(t => t.pid === run.listening.pid && t.threadId === 0)
  if (main === undefined) return
  /** @type {Record<string, unknown>} */
  const files = { ...run.allocations?.files, heapRetained: run.retainers?.heapRetained ?? run.allocations?.files?.heapRetained }
  for (const kind of /** @type {const} */ (['heapAllocations', 'heapRetained'])) {
    const name = files[kind]
    if (typeof name === 'string' && main.profiles[kind] === undefined) main.profiles[kind] = name
  }
  // A phase that stopped short is said, not left to look like a run that never asked for it.
  const notTaken = (/** @type {RunDamage['kind']} */ kind, /** @type {string} */ file, /** @type {unknown} */ error) =>
    data.damage.push({ file: join(data.dir, file), kind, pid: main.pid, threadId: 0, problem: String(error), notTaken: true })
  const allocations = run.allocations
  if (typeof allocations?.error === 'string') {
    const asked = Array.isArray(allocations.kinds) ? allocations.kinds : (allocations.phases ?? []).map((/** @type {any} */ p) => p.name)
    if (asked.includes('allocations') && !allocations.files?.heapAllocations) notTaken('heapAllocations', 'run.json', allocations.error)
    if (asked.includes('retained') && !allocations.files?.heapRetained) notTaken('heapRetained', 'run.json', allocations.error)
  }
  if (typeof run.retainers?.error === 'string') notTaken('retainers', 'run.json', run.retainers.error)
}

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
    const { profile, problem } = checkedProfile(data.dir, name, kind)
    if (problem === null) {
      data.profiles?.set(name, profile)
      continue
    }
    data.damage.push({ file: join(data.dir, name), kind, pid: t.pid, threadId: t.threadId, problem })
    delete t.profiles[kind]
  }
}

/**
 * A worker thread that had not closed its load window when its main thread stopped waiting (it never returned to its
 * event loop: a long synchronous job) wrote no CPU profile: its CPU is in the process's figures and nowhere in the
 * culprits, which must say so.
 * @param {RunData} data
 * @param {ThreadRecord} main
 */
function addUnwrittenProfiles (data, main) {
  for (const threadId of main.unclosed?.threads ?? []) {
    const t = data.threads.find(x => x.pid === main.pid && x.threadId === threadId)
    if (t?.profiles.cpu !== undefined) continue
    if (data.damage.some(d => d.kind === 'cpu' && d.pid === main.pid && d.threadId === threadId)) continue
    const seconds = Math.round((main.unclosed?.waitedMs ?? 0) / 100) / 10
    data.damage.push({
      file: join(data.dir, PROFILE_FILES.cpu.replace('{}', `${main.pid}-${threadId}`)),
      kind: 'cpu',
      pid: main.pid,
      threadId,
      problem: `the thread did not return to its event loop within ${seconds} s of the load's end`,
      notWritten: true
    })
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
  const checked = data.profiles?.get(name)
  if (checked !== undefined) return checked
  try {
    return JSON.parse(readFileSync(join(data.dir, name), 'utf8'))
  } catch {
    return null
  }
}

/**
 * The scripts of the run as they ran, for every model and site of its analysis to share: a loader's code compiled in
 * memory read from the copies the probes made (src/probe/transformed-scripts.js), other scripts from disk, each source
 * map read once, and what could not be mapped collected once per file.
 * @param {{ dir: string, threads: ThreadRecord[], sources?: SourceCache }} data
 * @returns {SourceCache}
 */
export function runSources (data) {
  data.sources ??= sourcesOf(data.dir, data.threads)
  return data.sources
}

/**
 * The same for a run directory read for nothing else (`hotpath heap`'s, or doctor's while it records): its probes'
 * event logs name the copies.
 * @param {string} dir
 * @returns {SourceCache}
 */
export function dirSources (dir) {
  /** @type {ThreadRecord[]} */
  const threads = []
  try {
    for (const f of readdirSync(dir)) {
      if (!/^events-\d+-\d+\.ndjson$/.test(f)) continue
      const t = readThread(join(dir, f), [])
      if (t !== null) threads.push(t)
    }
  } catch {}
  return sourcesOf(dir, threads)
}

/**
 * @param {string} dir
 * @param {ThreadRecord[]} threads
 */
function sourcesOf (dir, threads) {
  /** @type {Map<string, string>} */
  const ran = new Map()
  for (const t of threads) {
    for (const s of t.scripts ?? []) {
      const file = fileOfUrl(s.url)
      if (file.startsWith('/') && !ran.has(file)) ran.set(file, join(dir, s.source))
    }
  }
  return new SourceCache(true, ran)
}
