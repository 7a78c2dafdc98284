// `hotpath heap`'s run: the target under the probe, loaded in three phases — warm-up, growth, settle — with a heap
// snapshot (after a full GC) at the end of each. What the growth phase made and the settle phase did not free is what
// the load leaves behind; the snapshots stay in the run directory for DevTools or a later --analyse.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { load } from '../load/load.js'
import { observeFor } from './observe.js'
import { TargetError, UsageError } from '../errors.js'
import { TargetProcess, describeExit, listeningUrl } from './target/target-process.js'
import { otherHttpPorts } from '../other-ports.js'
import { parseTarget } from '../load/target.js'
import { freshRunDir } from './run-dir.js'
import { attachedTarget, inspectProcess } from './target/attach.js'
import { COMMAND, MESSAGE } from '../probe-protocol.js'

export const PHASES = /** @type {const} */ (['warm-up', 'growth', 'settle'])

/**
 * @typedef {object} HeapRunOptions
 * @property {string[]} command empty with `attach`
 * @property {number} [attach] the pid of a running Node process to attach the probe to, instead of starting `command`
 * @property {string} runDir
 * @property {Omit<import('../load/load.js').LoadOptions, 'url'>} load each phase's load
 * @property {string} path
 * @property {number} [port]
 * @property {number} listenTimeout seconds
 * @property {number} snapshotTimeout seconds one snapshot may take
 * @property {AbortSignal} [signal]
 * @property {(line: string) => void} [status]
 * @property {() => { start(): void, stop(): void, onBin(bin: import('../load/recorder.js').Bin): void }} [progress] a
 *   progress display for each phase's load
 */

/**
 * @typedef {object} PhaseRecord
 * @property {typeof PHASES[number]} name
 * @property {number} requests requests that ended in the phase
 * @property {number} duration seconds
 * @property {string | null} failed why the phase's load did not measure the server, or null
 * @property {import('../load/result.js').LoadResult | null} result
 */

/**
 * @typedef {object} HeapRunRecord
 * @property {string} runDir
 * @property {string} url
 * @property {number} pid the process whose heap was taken
 * @property {number[]} otherPorts the other ports the target served HTTP on, which were not loaded
 * @property {PhaseRecord[]} phases the phases that ran
 * @property {{ name: string, file: string, bytes: number, ms: number }[]} snapshots taken
 * @property {{ file: string } | { error: string } | null} allocations the allocation profile of the growth and settle
 *   phases (what was still alive at the last snapshot), or why there is none; null when the run ended before
 * @property {{ category: 'target-failed' | 'load-failed', detail: string, stderr: string[] } | null} failure
 * @property {boolean} interrupted
 */

/**
 * @param {HeapRunOptions} options
 * @returns {Promise<HeapRunRecord>}
 */
export async function recordHeapRun (options) {
  // A process that cannot be attached to is refused before anything is made.
  if (options.attach) inspectProcess(options.attach)
  const runDir = freshRunDir(options.runDir, f => /^heap-\d\.heapsnapshot$/.test(f) || f === 'heap.json')
  const status = options.status ?? (() => {})
  // The probe samples nothing and profiles nothing here: it only answers snapshot commands.
  const env = { HOTPATH_RUN_DIR: runDir, HOTPATH_RUNTIME: '0', HOTPATH_PROFILE_INTERVAL: '0', HOTPATH_INTERVAL: '10' }
  const target = options.attach ? attachedTarget(options.attach, { env }) : new TargetProcess(options.command, { env })
  await target.start()
  /** @type {HeapRunRecord} */
  const record = { runDir, url: '', pid: 0, otherPorts: [], phases: [], snapshots: [], allocations: null, failure: null, interrupted: false }
  const abort = new AbortController()
  const onAbort = () => abort.abort()
  options.signal?.addEventListener('abort', onAbort, { once: true })
  target.exited.then((exit) => { if (!exit.stoppedByUs) abort.abort() })
  try {
    const listening = await target.waitForListening({ timeout: options.listenTimeout, port: options.port })
    record.url = listeningUrl(listening, options.path)
    record.pid = listening.pid
    const peer = await probeOf(target, listening.pid)
    if (peer === null) {
      throw new UsageError(`the process listening on port ${listening.port} (pid ${listening.pid}) runs no hotpath probe: hotpath heap needs a Node.js server started with NODE_OPTIONS kept`)
    }
    status(`Target listening on ${record.url} (pid ${listening.pid})`)
    for (const [k, name] of PHASES.entries()) {
      if (abort.signal.aborted) break
      status(`Phase ${k + 1}/3, ${name}: loading…`)
      const progress = options.progress?.()
      progress?.start()
      const phase = await runPhase(name, { ...options, onBin: progress && (bin => progress.onBin(bin)) }, record.url, abort.signal).finally(() => progress?.stop())
      record.phases.push(phase)
      // A load that failed may have failed because the target died: its exit is what to report, and it can come a
      // moment after the load saw the connections close.
      if (phase.failed !== null) await Promise.race([target.exited, new Promise(resolve => setTimeout(resolve, 500))])
      if (target.exitInfo && !target.exitInfo.stoppedByUs) break
      // A load cut short by Ctrl-C may read as failed (too few responses): the interruption is what happened.
      if (phase.failed !== null && !options.signal?.aborted) {
        record.failure = { category: 'load-failed', detail: `the ${name} phase's load failed: ${phase.failed}`, stderr: [] }
        break
      }
      if (abort.signal.aborted) break
      status(`Phase ${k + 1}/3, ${name}: ${phase.requests} requests; full GC and heap snapshot…`)
      const shot = await snapshot(target, peer, `heap-${k + 1}.heapsnapshot`, runDir, options.snapshotTimeout)
      record.snapshots.push(shot)
      if (name === 'warm-up') await sampleAllocations(target, peer, record, 'start')
      if (name === 'settle') await sampleAllocations(target, peer, record, 'stop')
    }
  } catch (err) {
    // A target that dies after it listened is a finding of the run, with what was recorded until then.
    if (!(err instanceof TargetError) || target.exitInfo === null || record.url === '') {
      await target.stop()
      throw err
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort)
  }
  if (target.exitInfo && !target.exitInfo.stoppedByUs) {
    const during = PHASES[Math.max(0, record.phases.length - 1)]
    record.failure = { category: 'target-failed', detail: `the target exited ${describeExit(target.exitInfo)} during the ${during} phase`, stderr: target.tail() }
  }
  record.interrupted = Boolean(options.signal?.aborted) && record.failure === null
  if (record.url !== '') record.otherPorts = otherHttpPorts(target.listening, parseTarget(record.url).port)
  await target.stop()
  return record
}

/**
 * The probe of the process that listens (its main thread): the one whose heap holds the server's objects.
 * @param {TargetProcess} target
 * @param {number} pid
 * @returns {Promise<import('./target/probe-channel.js').Peer | null>}
 */
export async function probeOf (target, pid) {
  // Its hello is sent before the server listens; a moment covers a socket that connected late.
  for (let waited = 0; waited <= 1000; waited += 50) {
    const peer = [...target.channel.peers].find(p => p.hello?.pid === pid && p.hello.threadId === 0)
    if (peer) return peer
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return null
}

/** Seconds a load after doctor's window runs at most: enough requests to sample, snapshot or trace, and short, since
 * the verdict (or the user) waits for it. */
const AFTER_WINDOW_SECONDS = 2

/**
 * doctor's load, shortened for a phase after its window: half its duration, between 1 and AFTER_WINDOW_SECONDS, with no
 * request count and no warm-up.
 * @param {Omit<import('../load/load.js').LoadOptions, 'url'>} load
 * @returns {Omit<import('../load/load.js').LoadOptions, 'url'> & { duration: number }}
 */
export function afterWindowLoad (load) {
  const duration = Math.max(1, Math.min(AFTER_WINDOW_SECONDS, (load.duration ?? AFTER_WINDOW_SECONDS) / 2))
  return { ...load, duration, amount: undefined, warmup: undefined }
}

/**
 * @param {typeof PHASES[number]} name
 * @param {Pick<HeapRunOptions, 'load'> & { onBin?: (bin: import('../load/recorder.js').Bin) => void, observe?: boolean }} options
 *   observe: send no load, and let the traffic the server gets run for the load's duration
 * @param {string} url
 * @param {AbortSignal} signal
 * @returns {Promise<PhaseRecord>}
 */
export async function runPhase (name, options, url, signal) {
  if (options.observe) {
    const started = Date.now()
    await observeFor(options.load.duration ?? 1, signal)
    return { name, requests: 0, duration: (Date.now() - started) / 1000, failed: null, result: null }
  }
  const result = await load({ ...options.load, url, signal, ...(options.onBin ? { onBin: options.onBin } : {}) })
  return { name, requests: result.requests.total, duration: result.duration, failed: result.failed?.detail ?? null, result }
}

/**
 * Asks the probe for a snapshot and waits for it to be written.
 * @param {TargetProcess} target
 * @param {import('./target/probe-channel.js').Peer} peer
 * @param {string} name
 * @param {string} runDir
 * @param {number} timeout seconds
 */
export async function snapshot (target, peer, name, runDir, timeout) {
  const started = Date.now()
  const done = await ask(target, peer, { type: COMMAND.HEAP_SNAPSHOT, name }, MESSAGE.HEAP_SNAPSHOT_DONE, timeout, '--snapshot-timeout')
  if (done === null) throw new TargetError(`the target exited ${describeExit(/** @type {any} */ (target.exitInfo))} while its heap snapshot was taken`, { stderr: target.tail() })
  if (done.error) throw new UsageError(`heap snapshot ${name} failed: ${done.error}`, 70)
  const file = join(runDir, name)
  if (!existsSync(file)) throw new UsageError(`heap snapshot ${name} was not written`, 70)
  return { name, file, bytes: Number(done.bytes) || 0, ms: Date.now() - started }
}

/** Bytes between allocation samples: a leak of a few hundred kB still gets tens of samples. */
const ALLOCATION_INTERVAL = 4096
/** What a sampling that started says until the settle phase stops it. */
const ENDED_EARLY = 'the run ended before the settle phase'

/**
 * Starts or stops the allocation sampling of the growth and settle phases. The flame graph is a by-product: when the
 * probe cannot take it, the run goes on and says why there is none.
 * @param {TargetProcess} target
 * @param {import('./target/probe-channel.js').Peer} peer
 * @param {HeapRunRecord} record
 * @param {'start' | 'stop'} what
 */
async function sampleAllocations (target, peer, record, what) {
  const name = 'allocations.heapprofile'
  if (what === 'start') {
    const reply = await ask(target, peer, { type: COMMAND.HEAP_SAMPLING_START, interval: ALLOCATION_INTERVAL }, MESSAGE.HEAP_SAMPLING_STARTED, 30, 'allocation sampling')
    if (reply !== null) record.allocations = { error: reply.error ?? ENDED_EARLY }
    return
  }
  if (record.allocations === null || !('error' in record.allocations) || record.allocations.error !== ENDED_EARLY) return
  const reply = await ask(target, peer, { type: COMMAND.HEAP_SAMPLING_STOP, name }, MESSAGE.HEAP_SAMPLING_DONE, 60, 'allocation sampling')
  if (reply !== null) record.allocations = reply.error ? { error: reply.error } : { file: join(record.runDir, name) }
}

/**
 * Sends the probe a command and waits for its reply of the given type.
 * @param {TargetProcess} target
 * @param {import('./target/probe-channel.js').Peer} peer
 * @param {import('../probe-protocol.js').ProbeCommand & { name?: string }} command
 * @param {import('../probe-protocol.js').ProbeMessage['type']} replyType
 * @param {number} timeout seconds
 * @param {string} flag the option that sets the timeout, for the message
 * @returns {Promise<any>} the reply; `{ error }` when none came in time; null when the target exited
 */
export async function ask (target, peer, command, replyType, timeout, flag) {
  /** @type {(message: any) => void} */
  let onMessage = () => {}
  /** @type {NodeJS.Timeout | undefined} */
  let timer
  try {
    return await new Promise((resolve) => {
      onMessage = (message) => {
        if (message?.type === replyType && (command.name === undefined || message.name === command.name || message.error)) resolve(message)
      }
      target.channel.on('message', onMessage)
      target.exited.then(() => resolve(null))
      timer = setTimeout(() => resolve({ error: `no answer within ${timeout} s (${flag})` }), timeout * 1000)
      peer.send(command)
    })
  } finally {
    clearTimeout(timer)
    target.channel.off('message', onMessage)
  }
}
