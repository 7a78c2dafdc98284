import { spawn } from 'node:child_process'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { load } from '../load/load.js'
import { VERSION } from '../version.js'
import { listeningUrl, TargetProcess } from './target/target-process.js'
import { clearRunThatMeasuredNothing, freshRunDir } from './run-dir.js'
import { EVENT_LOG, eventLogs } from '../run-files.js'
import { attachedTarget, inspectProcess } from './target/attach.js'
import { hostNow, hostUseSince } from './host/host-use.js'
import { planMemoryPhases, recordMemoryPhases, watchRelease } from './phases/memory-phases.js'
import { recordRetainers, removeSnapshots, retainerPhaseSeconds, retainerSeconds } from './phases/retainer-phases.js'
import { callsUntraced, traceRequests } from './phases/tracing-phase.js'
import { COMMAND, MESSAGE } from '../probe-protocol.js'
import { observeFor } from './observe.js'
import { oomKills } from '../memory-cgroup.js'

/**
 * @typedef {object} RunOptions
 * @property {string[]} command the target, e.g. ['node', 'server.js']; empty with `attach`
 * @property {number} [attach] the pid of a running Node process to attach the probe to, instead of starting `command`
 * @property {string} runDir where the run is recorded (created if needed)
 * @property {Omit<import('../load/load.js').LoadOptions, 'url'>} load built-in load options
 * @property {string} path what to load on the target
 * @property {number} [port] which port to load (default: the first it listens on)
 * @property {string} [onPort] a shell command to run instead of the built-in load; $PORT is set
 * @property {number} [observe] seconds to watch the traffic the server gets instead of loading it (`--observe`): no
 *   load is sent, and the probes time each request by route
 * @property {number} listenTimeout seconds
 * @property {number} interval ms between runtime samples in the probe
 * @property {boolean} [runtime] whether the probe samples the runtime and counts requests and listeners (default
 *   true); without, it records only the profiles (hotpath flame)
 * @property {number} profileInterval µs between CPU samples (0: no CPU profile)
 * @property {{ from: number, seconds: number } | null} [profileSlice] the part of the load window the CPU profiler
 *   runs in, in seconds from its start (profile-interval.js says why); null or absent: all of it
 * @property {number} heapInterval bytes between heap samples (0: none): taken after the window, in the phases `memory`
 *   asks for, never in the window itself (memory-phases.js says why)
 * @property {AbortSignal} [signal] aborting ends the load early; the run is still recorded
 * @property {(message: string) => void} [status] progress lines for a terminal
 * @property {(bin: import('../load/recorder.js').Bin) => void} [onBin]
 * @property {Omit<import('./phases/memory-phases.js').MemoryPhaseOptions, 'heapInterval'> | null} [memory] the heap phases
 *   after the window (allocation samples, retainer snapshots), when its figures ask for them; null: none
 * @property {(line: string) => void} [notice] a line for a person that is not progress (a directory's files replaced)
 * @property {(record: RunRecord) => Promise<void>} [onVerdict] when the heap snapshots are asked for after the window:
 *   called with the window's record (written to run.json, the snapshots `pending`) while the target still runs, so
 *   that the verdict comes before them; recordRun then takes them and writes the final record
 */

/**
 * What a run recorded besides the probes' own files; saved as run.json in the run directory.
 * @typedef {object} RunRecord
 * @property {'hotpath-run'} kind
 * @property {string} version
 * @property {string[]} command
 * @property {number} [attached] the pid the probe was attached to (`--attach`): the command is that process's
 * @property {string} cwd
 * @property {number} startedAt epoch ms
 * @property {{ pid: number, port: number, host: string, tls: boolean }} listening what was loaded
 * @property {string} url
 * @property {{ start: number, end: number }} loadWindow epoch ms, as announced to the probes
 * @property {import('../load/result.js').LoadResult | null} load the built-in load's result (null with --on-port)
 * @property {{ command: string, code: number | null } | null} onPort
 * @property {{ seconds: number }} [observed] the window watched the traffic the server got, with no load sent
 * @property {{ code: number | null, signal: string | null, crashed: boolean }} exit how the target ended
 * @property {boolean} aborted the user stopped the run early
 * @property {string[]} stderr the target's last lines of stderr (or stdout)
 * @property {{ interval: number, profileInterval: number, heapInterval: number, profileSlice?: { from: number, seconds: number } | null }} probe
 * @property {import('./phases/retainer-phases.js').RetainerRecord} [retainers] the heap snapshots taken after the load
 * @property {import('./phases/allocation-phases.js').AllocationRecord} [allocations] the heap samples taken after the load
 * @property {import('./phases/tracing-phase.js').TracingRecord} [tracing] the load after the window whose requests were
 *   traced, when the window left megabytes alive and traced too few
 * @property {Limits} [limits] what the loaded process's heap lived under, as its probe said at once on the channel
 * @property {import('./phases/memory-phases.js').ReleaseRecord} [released] the heap after full collections in the seconds after
 *   the load, when it had left megabytes alive
 * @property {{ cores: number, busyMs: number, ownCpuMs: number, model: string, platform: string, release: string, arch: string, memory: number, processes?: import('./host/processes.js').ProcessCpu[] }} host
 *   the machine, and the CPU it and hotpath itself (with its load threads) used during the load window: what other
 *   processes took is the rest minus the target's
 * @property {string[]} [events] the event logs the probes wrote (runs recorded before it was kept have none)
 */

/**
 * Runs a target under the probe and a load, recording everything in `runDir`.
 * @param {RunOptions} options
 * @returns {Promise<RunRecord>}
 */
export async function recordRun (options) {
  // A process that cannot be attached to is refused before anything is made.
  if (options.attach) inspectProcess(options.attach)
  const replaced = clearRunThatMeasuredNothing(options.runDir, isDoctorFile)
  if (replaced !== null) options.notice?.(`Recording into '${options.runDir}', which held ${replaced}: its files are replaced`)
  const runDir = freshRunDir(options.runDir, f => f === 'run.json' || EVENT_LOG.test(f))
  const target = probedTarget(options, runDir)
  const startedAt = Date.now()
  try {
    return await record(options, runDir, target, startedAt)
  } catch (err) {
    // A run that failed before its load window still says so in its directory: --analyse and compare repeat the
    // line and the exit code, and the next run may record there.
    writeFailedRecord(runDir, target, startedAt, err)
    throw err
  }
}

/**
 * The files a doctor run writes into its directory (run.json, the probes' event logs and profiles, the heap phases'
 * files, experiments, the report).
 * @param {string} name
 */
export function isDoctorFile (name) {
  return name === 'run.json' || name === 'retainers.json' || name === 'experiments.json' || name === 'report.html' ||
    EVENT_LOG.test(name) || /^(cpu|heap-allocations|heap-retained)-\d+-\d+\.(cpuprofile|heapprofile)$/.test(name) ||
    /^retained-\d+\.heapsnapshot$/.test(name)
}

/**
 * @param {string} runDir
 * @param {{ command: string[], tail: () => string[] }} target
 * @param {number} startedAt
 * @param {unknown} err
 */
function writeFailedRecord (runDir, target, startedAt, err) {
  const e = /** @type {{ message?: string, exitCode?: unknown, stderr?: unknown }} */ (err)
  /** @type {import('../run-files.js').FailedRun} */
  const failed = {
    message: String(e?.message ?? err),
    exitCode: typeof e?.exitCode === 'number' ? e.exitCode : 70,
    stderr: Array.isArray(e?.stderr) ? e.stderr : target.tail()
  }
  // A run that measured (its verdict printed, then the report could not be written) keeps its record.
  if (existsSync(resolve(runDir, 'run.json'))) return
  try {
    writeFileSync(resolve(runDir, 'run.json'), JSON.stringify({ kind: 'hotpath-run', version: VERSION, command: target.command, cwd: process.cwd(), startedAt, failed, loadWindow: null }, null, 2))
  } catch {}
}

/**
 * @param {RunOptions} options
 * @param {string} runDir
 * @param {TargetProcess | import('./target/attach.js').AttachedTarget} target
 * @param {number} startedAt
 * @returns {Promise<RunRecord>}
 */
async function record (options, runDir, target, startedAt) {
  const status = options.status ?? (() => {})
  await target.start()
  const { channel } = target
  // A probe that connects late (a cluster worker forked mid-run) learns whether the load is on.
  /** @type {{ loading: boolean, port: number | undefined, profile: { from: number, to: number } | undefined }} */
  const loadState = { loading: false, port: undefined, profile: undefined }
  const observe = options.observe !== undefined
  channel.on('peer', (peer) => peer.send({ type: COMMAND.STATE, loading: loadState.loading, port: loadState.port, profile: loadState.profile, ...(observe ? { observe } : {}) }))

  let listening
  try {
    listening = await target.waitForListening({ timeout: options.listenTimeout, port: options.port })
    await settle(target, listening.port)
  } catch (err) {
    await target.stop()
    throw err
  }
  const url = listeningUrl(listening, options.path)
  status(observe
    ? `Target listening on ${url} (pid ${listening.pid}); observing the traffic it gets for ${options.observe} s, no load sent…`
    : `Target listening on ${url} (pid ${listening.pid}); loading it…`)

  const abort = new AbortController()
  const onAbort = () => abort.abort()
  options.signal?.addEventListener('abort', onAbort, { once: true })
  target.exited.then((exit) => { if (!exit.stoppedByUs) abort.abort() })

  const acks = expectAcks(channel, MESSAGE.STARTED)
  loadState.loading = true
  loadState.port = listening.port
  // The profile's slice, on the epoch clock every probe shares: a probe that joins late profiles what is left of it.
  const slice = options.profileSlice ?? null
  const now = Date.now()
  loadState.profile = slice === null ? undefined : { from: now + slice.from * 1000, to: now + (slice.from + slice.seconds) * 1000 }
  channel.broadcast({ type: COMMAND.LOAD_START, time: now, port: listening.port, profile: loadState.profile, ...(observe ? { observe } : {}) })
  await acks.all(3000)
  const limits = limitsOf(channel, acks.messages, listening.pid)
  const windowStart = Date.now()
  const hostStart = hostNow()
  const { result, onPort, failure } = await driveLoad(options, url, listening.port, abort.signal)
  const windowEnd = Date.now()
  // A load that failed at once most often has a target that just died: its exit is reported, not the load's error.
  if (failure !== null) await target.exitsWithin(1000)
  const hostUse = hostUseSince(hostStart, target)
  loadState.loading = false
  const stopped = expectAcks(channel, MESSAGE.STOPPED)
  channel.broadcast({ type: COMMAND.LOAD_STOP, time: windowEnd })
  // The probes write their profiles now; a big one takes a moment.
  await stopped.all(15000)
  // A signal before here cut the load short; from here on it skips what comes after the window.
  const aborted = Boolean(options.signal?.aborted)
  const window = { start: windowStart, end: windowEnd }
  const plan = options.memory && failure === null && !abort.signal.aborted && ((result !== null && !result.failed) || observe)
    ? planMemoryPhases({ phases: { ...options.memory, heapInterval: options.heapInterval }, stopped: stopped.messages, listening, window })
    : null
  // Before the samples of what survives: a heap let go a moment after the load needs none.
  const released = plan ? await watchRelease(target, { plan, listening, signal: abort.signal, status }) : null
  /** @type {Pick<RunRecord, 'allocations' | 'retainers' | 'tracing'>} */
  const phases = plan ? await recordMemoryPhases(target, { plan, heapInterval: options.heapInterval, listening, url, load: phaseLoad(options), observe, signal: abort.signal, status }) : {}
  // One traced load after the window, for what the busy window's untraced requests left pending or the calls they made.
  const traceWhy = plan?.trace
    ? `The ${observe ? 'traffic' : 'load'} left ${(plan.keptBytes / 1048576).toFixed(1)} MB alive with its requests untraced (a busy server is not): ${observe ? 'observing' : 'loading'} once more with them traced, to see what work they leave pending (Ctrl-C skips)…`
    : !observe && result !== null && !result.failed && failure === null && callsUntraced(stopped.messages, listening.pid)
        ? 'The server was too busy to trace its requests, and it holds connections to other servers: loading once more with its requests traced, to count the calls each makes (Ctrl-C skips)…'
        : null
  if (traceWhy !== null && !abort.signal.aborted && target.exitInfo === null) {
    status(traceWhy)
    phases.tracing = await traceRequests(target, { pid: listening.pid, url, load: phaseLoad(options), observe, signal: abort.signal })
  }
  /**
   * @param {RunRecord['exit']} exit
   * @returns {RunRecord}
   */
  const recordOf = (exit) => ({
    kind: 'hotpath-run',
    version: VERSION,
    command: target.command,
    ...(options.attach ? { attached: options.attach } : {}),
    cwd: process.cwd(),
    startedAt,
    listening: { pid: listening.pid, port: listening.port, host: listening.host, tls: listening.tls },
    url,
    loadWindow: window,
    load: result,
    onPort,
    ...(observe ? { observed: { seconds: (windowEnd - windowStart) / 1000 } } : {}),
    exit,
    aborted,
    stderr: target.tail(),
    probe: { interval: options.interval, profileInterval: options.profileInterval, heapInterval: options.heapInterval, profileSlice: options.profileSlice ?? null },
    ...phases,
    ...(released ? { released } : {}),
    // After its exit: whether the kernel's out-of-memory killer killed a process of its memory group meanwhile.
    ...(limits ? { limits: { ...limits, oomKillsAtEnd: limits.oomKillsAtStart === null ? null : oomKills(limits.memoryGroup) } } : {}),
    host: hostUse,
    // What the probes wrote, so that a log deleted or lost since is said missing rather than read as a thread that
    // never ran.
    events: eventLogs(readdirSync(runDir)).map(l => l.name)
  })
  const asked = plan?.retainers ?? null
  if (asked !== null && options.memory) {
    const budgetMs = options.memory.snapshotBudgetMs
    // The verdict first, from the window and the samples after it, while the target runs on for the snapshots.
    if (options.onVerdict && target.exitInfo === null) {
      const pending = { heapBytes: asked.heapBytes, seconds: Math.round(retainerSeconds({ ...asked, phaseSeconds: retainerPhaseSeconds(phaseLoad(options)) })), budget: Math.round(budgetMs / 1000) }
      const early = { ...recordOf({ code: null, signal: null, crashed: false }), retainers: { phases: [], snapshots: [], keptBytes: asked.keptBytes, reason: asked.reason, error: null, pending } }
      writeFileSync(resolve(runDir, 'run.json'), JSON.stringify(early, null, 2))
      try {
        await options.onVerdict(early)
      } catch (err) {
        await target.stop()
        options.signal?.removeEventListener('abort', onAbort)
        throw err
      }
    }
    const before = target.exitInfo
    phases.retainers = before === null && !abort.signal.aborted
      ? await recordRetainers(target, { pid: listening.pid, url, load: phaseLoad(options), observe, runDir, plan: asked, heapInterval: options.heapInterval, budgetMs, signal: abort.signal, status })
      : { phases: [], snapshots: [], keptBytes: asked.keptBytes, reason: asked.reason, error: null, skipped: { why: before === null ? 'interrupted' : 'not-asked', heapBytes: asked.heapBytes, seconds: 0, budget: Math.round(budgetMs / 1000) } }
    const exit = await target.stop()
    options.signal?.removeEventListener('abort', onAbort)
    if (phases.retainers.skipped) removeSnapshots(runDir)
    // The target ended during the snapshots, after the verdict: the window measured it whole, and the snapshots' record
    // says it ended them.
    const crashed = !exit.stoppedByUs && before !== null
    const record = recordOf({ code: exit.code, signal: exit.signal, crashed })
    writeFileSync(resolve(runDir, 'run.json'), JSON.stringify(record, null, 2))
    return record
  }
  const exit = await target.stop()
  options.signal?.removeEventListener('abort', onAbort)
  if (failure && exit.stoppedByUs) throw failure
  const record = recordOf({ code: exit.code, signal: exit.signal, crashed: !exit.stoppedByUs })
  writeFileSync(resolve(runDir, 'run.json'), JSON.stringify(record, null, 2))
  return record
}

/**
 * @typedef {object} Limits
 * @property {number} heapLimit V8's heap limit, bytes
 * @property {number | null} [oldGenerationLimit] the old generation's, bytes, when --max-old-space-size set it
 * @property {number | null} memoryLimit the container's (cgroup's) memory limit, bytes; null: none
 * @property {string | null} node the Node version
 * @property {number | null} heapAtStart the heap after the full collection just before the load
 * @property {string | null} [memoryGroup] the directory of its memory cgroup
 * @property {number | null} [oomKillsAtStart] the kills by the out-of-memory killer its memory group had counted when
 *   the load started (null: unknown)
 * @property {number | null} [oomKillsAtEnd] the same once the run ended
 */

/**
 * The loaded process's limits, from its main thread's hello and 'started' messages (null when its probe said none).
 * @param {import('./target/probe-channel.js').ProbeChannel} channel
 * @param {any[]} started
 * @param {number} pid
 * @returns {Limits | null}
 */
function limitsOf (channel, started, pid) {
  const hello = [...channel.peers].find(p => p.hello?.pid === pid && p.hello.threadId === 0)?.hello
  if (!hello || typeof hello.heapLimit !== 'number') return null
  const start = started.find(m => m.pid === pid && m.threadId === 0)?.heapUsed
  return {
    heapLimit: hello.heapLimit,
    oldGenerationLimit: typeof hello.oldGenerationLimit === 'number' ? hello.oldGenerationLimit : null,
    memoryLimit: typeof hello.memoryLimit === 'number' ? hello.memoryLimit : null,
    node: typeof hello.node === 'string' ? hello.node : null,
    heapAtStart: typeof start === 'number' ? start : null,
    memoryGroup: typeof hello.memoryGroup === 'string' ? hello.memoryGroup : null,
    oomKillsAtStart: typeof hello.memoryGroup === 'string' ? oomKills(hello.memoryGroup) : null
  }
}

/**
 * The target, not yet started, with the environment that tells its probe where and what to record (an attached
 * target's probe gets the same settings as arguments).
 * @param {RunOptions} options
 * @param {string} runDir
 */
function probedTarget (options, runDir) {
  const env = {
    HOTPATH_RUN_DIR: runDir,
    HOTPATH_INTERVAL: String(options.interval),
    HOTPATH_RUNTIME: options.runtime === false ? '0' : '1',
    HOTPATH_PROFILE_INTERVAL: String(options.profileInterval)
  }
  return options.attach ? attachedTarget(options.attach, { env }) : new TargetProcess(options.command, { env })
}

/**
 * The load window's load: the user's --on-port command, or the built-in load. A failure is returned, not thrown, so
 * that the probes are still told the load stopped and the target is still stopped.
 * @param {RunOptions} options
 * @param {string} url
 * @param {number} port
 * @param {AbortSignal} signal
 */
async function driveLoad (options, url, port, signal) {
  /** @type {import('../load/result.js').LoadResult | null} */
  let result = null
  /** @type {RunRecord['onPort']} */
  let onPort = null
  /** @type {unknown} */
  let failure = null
  try {
    if (options.observe !== undefined) {
      await observeFor(options.observe, signal)
    } else if (options.onPort) {
      onPort = { command: options.onPort, code: await runOnPort(options.onPort, port, signal) }
    } else if (!signal.aborted) {
      result = await load({ ...options.load, url, signal, onBin: options.onBin })
    }
  } catch (err) {
    failure = err
  }
  return { result, onPort, failure }
}

/**
 * The load the phases after the window measure with: doctor's, or, when it observed, the window's length (the phases
 * then observe too, for half of it).
 * @param {RunOptions} options
 */
function phaseLoad (options) {
  return options.observe !== undefined ? { ...options.load, duration: options.observe } : options.load
}

/**
 * Cluster workers listen one after another: wait until reports for the port stop arriving (at most a second), so
 * the load starts on the whole server.
 * @param {TargetProcess} target
 * @param {number} port
 */
async function settle (target, port) {
  const deadline = Date.now() + 1000
  let seen = -1
  while (Date.now() < deadline) {
    const now = target.listening.filter(l => l.port === port).length
    if (now === seen) break
    seen = now
    await new Promise(resolve => setTimeout(resolve, 150))
  }
}

/**
 * Collects one acknowledgement per probe connected now.
 * @param {import('./target/probe-channel.js').ProbeChannel} channel
 * @param {typeof MESSAGE.STARTED | typeof MESSAGE.STOPPED} type
 */
function expectAcks (channel, type) {
  const waiting = new Set([...channel.peers].filter(p => p.hello !== null))
  /** @type {() => void} */
  let done = () => {}
  const finished = new Promise(resolve => { done = () => resolve(undefined) })
  /** @type {any[]} */
  const messages = []
  const onMessage = (/** @type {any} */ message, /** @type {import('./target/probe-channel.js').Peer} */ peer) => {
    if (message?.type === type) messages.push(message)
    if (message?.type === type && waiting.delete(peer) && waiting.size === 0) done()
  }
  const onGone = (/** @type {import('./target/probe-channel.js').Peer} */ peer) => {
    if (waiting.delete(peer) && waiting.size === 0) done()
  }
  channel.on('message', onMessage)
  channel.on('gone', onGone)
  if (waiting.size === 0) done()
  return {
    messages,
    /** @param {number} timeout ms */
    async all (timeout) {
      /** @type {NodeJS.Timeout | undefined} */
      let timer
      await Promise.race([finished, new Promise(resolve => { timer = setTimeout(resolve, timeout) })])
      clearTimeout(timer)
      channel.off('message', onMessage)
      channel.off('gone', onGone)
    }
  }
}

/**
 * Runs the user's own load command with $PORT set; the load window is its lifetime.
 * @param {string} command
 * @param {number} port
 * @param {AbortSignal} signal
 * @returns {Promise<number | null>} its exit code
 */
function runOnPort (command, port, signal) {
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, PORT: String(port) }, detached: true })
    const kill = () => { try { process.kill(-(/** @type {number} */ (child.pid)), 'SIGTERM') } catch {} }
    signal.addEventListener('abort', kill, { once: true })
    child.on('error', () => resolve(127))
    child.on('exit', (code) => {
      signal.removeEventListener('abort', kill)
      resolve(code)
    })
  })
}
