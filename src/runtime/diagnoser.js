// On-demand diagnosis in production: doctor's probe put into this very process for N seconds of its real traffic
// (what `hotpath doctor --attach <pid> --observe` does from outside), its run directory written privately, for
// `hotpath doctor --analyse <dir>` to read anywhere — copied out of a pod with `kubectl cp`. Triggered by a signal, a
// call, or the token-guarded HTTP trigger the app chooses to mount. The probe is the attached one (attach-entry.js),
// driven by the window below through a link within the process (no socket); when the window closes it takes out
// everything it put in, as after `--attach`. Until a diagnosis is asked for, none of it is loaded. (Not the words of
// doctor's diagnosis: those are src/report/words/diagnosis.js.)
// Once set up, nothing here throws into the host app or keeps its process alive; a bad option throws when it is given.
import { EventEmitter } from 'node:events'
import { chmod, mkdir, readdir } from 'node:fs/promises'
import os, { constants } from 'node:os'
import { join, resolve } from 'node:path'
import { isMainThread } from 'node:worker_threads'
import { checkOptions, rule } from './options.js'
import { checkProfileDir, defaultProfileDir, unguessable, writeExclusive } from './profile-files.js'
import { OnDemand } from './on-demand.js'
import { httpTrigger } from './profile-trigger.js'

/**
 * @typedef {object} DiagnoserOptions
 * @property {string} [dir] where run directories are written; the same rules as the profiler's (docs/runtime.md):
 *   created 0700 when missing, a directory of this user's, not writable by others (default:
 *   `<os tmpdir>/hotpath-profiles-<uid>`, closed to others)
 * @property {NodeJS.Signals | false} [signal] the signal that starts a diagnosis (default `false`: none — the profiler
 *   has SIGUSR2); not one the profiler refuses
 * @property {number} [duration] seconds a diagnosis watches the traffic (default 30)
 * @property {(result: DiagnosisResult) => void} [onDiagnosis] told of every diagnosis, done or refused
 * @property {(error: Error) => void} [onError] told when one fails (default: a process warning)
 */

/**
 * What a diagnosis did. It never rejects.
 * @typedef {{ ok: true, dir: string, files: string[], startedAt: number, duration: number }
 *   | { ok: false, reason: 'busy' | 'closed' | 'failed', error?: string }} DiagnosisResult
 *   dir: the run directory (read it with `hotpath doctor --analyse <dir>`); files: its files, absolute; duration:
 *   seconds watched
 */

const RESERVED_SIGNALS = new Set(['SIGKILL', 'SIGSTOP', 'SIGINT', 'SIGTERM', 'SIGUSR1', 'SIGPROF', 'SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL'])

/** @type {Record<string, import('./options.js').OptionRule>} */
const DIAGNOSER_OPTIONS = {
  dir: rule.string(),
  signal: {
    types: ['string', 'boolean'],
    expect: "the name of a signal this process can listen to (e.g. 'SIGUSR2'; not SIGKILL, SIGSTOP, SIGINT, SIGTERM, SIGUSR1, SIGPROF or a fault), or false",
    valid: (v) => v === false || (typeof v === 'string' && Object.hasOwn(constants.signals, v) && !RESERVED_SIGNALS.has(v))
  },
  duration: rule.positive('seconds'),
  onDiagnosis: rule.fn(),
  onError: rule.fn()
}

/** @type {Record<string, import('./options.js').OptionRule>} */
const RUN_OPTIONS = {
  duration: rule.positive('seconds')
}

/** ms the probe is given to start, and to report the servers it found */
const START_MS = 3000
/** ms the probe is given to write the window's profiles and events */
const STOP_MS = 15000

/** @extends {OnDemand<DiagnosisResult>} */
export class Diagnoser extends OnDemand {
  /** @param {DiagnoserOptions} [opts] */
  constructor (opts = {}) {
    checkOptions('diagnoser()', opts, DIAGNOSER_OPTIONS)
    super(opts.signal ?? false, opts.onDiagnosis)
    /** @private */
    this.privateDir = opts.dir === undefined
    this.dir = opts.dir === undefined ? defaultProfileDir() : resolve(opts.dir)
    this.duration = opts.duration ?? 30
    /** @private */
    this.onError = opts.onError ?? ((/** @type {Error} */ err) => process.emitWarning(`hotpath diagnosis: ${err.message}`, 'HotpathWarning'))
  }

  /** @protected */
  fromSignal () {
    this.run()
  }

  /**
   * Watches the traffic for `duration` seconds under doctor's probe and writes the run directory. Refused (ok: false,
   * reason: 'busy') while another runs, or while hotpath is attached from outside. Main thread only (the servers are
   * there). Bad options throw a TypeError here; the promise never rejects.
   * @param {{ duration?: number }} [opts]
   * @returns {Promise<DiagnosisResult>}
   */
  run (opts = {}) {
    checkOptions('diagnoser.run()', opts, RUN_OPTIONS)
    const refused = this.refusal() ?? (isMainThread ? null : { ok: false, reason: 'failed', error: 'a diagnosis runs on the main thread, where the servers are' })
    if (refused !== null) return this.refuse(/** @type {import('./on-demand.js').Refused} */ (refused))
    const seconds = opts.duration ?? this.duration
    return this.launch(stopped => this.diagnose(seconds, stopped))
  }

  /**
   * A request handler that starts a diagnosis, under the profiler's rules: POST only, `Authorization: Bearer <token>`
   * (compared in constant time), `?seconds=N`; it answers when the run is written: 200 with `{ dir, files }`, 401,
   * 405, 409 while one runs, 500 when it failed. Nothing is mounted unless you mount this.
   * @param {import('./profile-trigger.js').HttpTriggerOptions} opts
   * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void}
   */
  httpHandler (opts) {
    return httpTrigger({
      duration: this.duration,
      capture: ({ duration }) => this.run({ duration })
    }, opts, 'diagnoser.httpHandler()')
  }

  /**
   * @private
   * @param {number} seconds
   * @param {Promise<void>} stopped
   * @returns {Promise<DiagnosisResult>}
   */
  async diagnose (seconds, stopped) {
    /** @type {((command: any) => void) | null} the probe's commands, once it is attached */
    let command = null
    try {
      // The directory is checked before anything is put into the process: a refused one costs the app nothing.
      await checkProfileDir(this.dir, { private: this.privateDir })
      const runDir = join(this.dir, `diagnosis-${process.pid}-${new Date().toISOString().replace(/[:.]/g, '-')}-${unguessable()}`)
      // Closed to others while the probe writes into it; its files are made 0600 before it is handed over.
      await mkdir(runDir, { mode: 0o700 })
      const { attach } = await import('../probe/attach-entry.js')
      const { COMMAND, MESSAGE } = await import('../probe-protocol.js')
      const { VERSION } = await import('../version.js')
      // The probe's messages, as hotpath's end of a channel would receive them.
      const messages = new EventEmitter()
      /** @type {any[]} */
      const listening = []
      messages.on('message', (/** @type {any} */ m) => { if (m?.type === MESSAGE.LISTENING) listening.push(m) })
      const hello = nextMessage(messages, MESSAGE.HELLO, START_MS)
      // As doctor chooses it: about 1,000 samples over the window, every 1 to 10 ms.
      const profileInterval = Math.min(10000, Math.max(1000, Math.round(seconds * 1000)))
      const settings = { HOTPATH_CHANNEL: '', HOTPATH_RUN_DIR: runDir, HOTPATH_INTERVAL: '10', HOTPATH_RUNTIME: '1', HOTPATH_PROFILE_INTERVAL: String(profileInterval) }
      const attached = attach(settings, (onCommand) => {
        command = onCommand
        // Delivered at once: what listens here only notes them.
        return { send: (message) => { try { messages.emit('message', message) } catch {} }, close: () => {} }
      })
      if (!attached.ok) throw new Error(`the probe did not start: ${attached.reason}`)
      const send = /** @type {(command: any) => void} */ (/** @type {unknown} */ (command))
      await hello
      const server = listening.find(l => l.http) ?? listening[0]
      if (server === undefined) throw new Error('no server listens on the main thread')
      const host = server.address === '::' || server.address === '0.0.0.0' || server.address === '' ? '127.0.0.1' : server.address
      const started = nextMessage(messages, MESSAGE.STARTED, START_MS)
      const startedAt = Date.now()
      send({ type: COMMAND.LOAD_START, time: startedAt, port: server.port, observe: true })
      await started
      const windowStart = Date.now()
      const machineStart = machineBusyMs()
      await lasting(seconds, stopped)
      const windowEnd = Date.now()
      const cpus = os.cpus()
      // The machine's figures as doctor records them: no hotpath process of its own (ownCpuMs), and its other processes
      // not read (the analysis then tells a busy machine by the cores' busy time alone).
      const hostUse = { cores: cpus.length, busyMs: machineBusyMs() - machineStart, ownCpuMs: 0, model: cpus[0]?.model ?? 'unknown', platform: os.platform(), release: os.release(), arch: os.arch(), memory: os.totalmem() }
      const stoppedAck = nextMessage(messages, MESSAGE.STOPPED, STOP_MS)
      send({ type: COMMAND.LOAD_STOP, time: windowEnd })
      await stoppedAck
      const detached = nextMessage(messages, MESSAGE.DETACHED, START_MS)
      send({ type: COMMAND.DETACH })
      await detached
      command = null
      const names = await readdir(runDir)
      /** @type {import('../run/doctor-run.js').RunRecord} */
      const record = {
        kind: 'hotpath-run',
        version: VERSION,
        command: [...process.argv],
        attached: process.pid,
        cwd: process.cwd(),
        startedAt,
        listening: { pid: process.pid, port: server.port, host, tls: Boolean(server.tls) },
        url: `${server.tls ? 'https' : 'http'}://${host}:${server.port}/`,
        loadWindow: { start: windowStart, end: windowEnd },
        load: null,
        onPort: null,
        observed: { seconds: (windowEnd - windowStart) / 1000 },
        exit: { code: null, signal: null, crashed: false },
        aborted: false,
        stderr: [],
        probe: { interval: 10, profileInterval, heapInterval: 0, profileSlice: null },
        host: hostUse,
        events: names.filter(n => /^events-\d+-\d+\.ndjson$/.test(n))
      }
      await writeExclusive(join(runDir, 'run.json'), JSON.stringify(record, null, 2))
      const files = await privateFiles(runDir)
      return { ok: true, dir: runDir, files, startedAt, duration: (windowEnd - windowStart) / 1000 }
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err))
      try {
        this.onError(error)
      } catch {}
      return { ok: false, reason: 'failed', error: error.message }
    } finally {
      // A diagnosis that failed midway still takes the probe out.
      try { /** @type {any} */ (command)?.({ type: 'detach' }) } catch {}
    }
  }
}

/**
 * Starts on-demand diagnosis: `diagnoser.run()`, the signal given, or the HTTP trigger, watches the next N seconds of
 * traffic under doctor's probe and writes a run directory for `hotpath doctor --analyse <dir>`.
 * @param {DiagnoserOptions} [opts]
 * @returns {Diagnoser}
 */
export function diagnoser (opts) {
  return new Diagnoser(opts)
}

/** CPU time every core of the machine has spent busy, in ms. */
function machineBusyMs () {
  return os.cpus().reduce((a, c) => a + c.times.user + c.times.nice + c.times.sys + c.times.irq, 0)
}

/**
 * The next message of a type from the probe, or after `timeout` ms, nothing.
 * @param {EventEmitter} channel
 * @param {string} type
 * @param {number} timeout
 * @returns {Promise<any>}
 */
function nextMessage (channel, type, timeout) {
  return new Promise((resolve) => {
    const onMessage = (/** @type {any} */ m) => {
      if (m?.type !== type) return
      done(m)
    }
    const timer = setTimeout(() => done(null), timeout)
    timer.unref()
    const done = (/** @type {any} */ m) => {
      clearTimeout(timer)
      channel.off('message', onMessage)
      resolve(m)
    }
    channel.on('message', onMessage)
  })
}

/**
 * Makes every file of the run 0600 (and its folders 0700): the probe wrote them with the process's umask, inside the
 * directory closed to others.
 * @param {string} dir
 * @returns {Promise<string[]>} the files, absolute
 */
async function privateFiles (dir) {
  /** @type {string[]} */
  const files = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      await chmod(path, 0o700)
      files.push(...await privateFiles(path))
    } else if (entry.isFile()) {
      await chmod(path, 0o600)
      files.push(path)
    }
  }
  return files
}

/**
 * The window's time, or until close().
 * @param {number} seconds
 * @param {Promise<void>} stopped
 */
async function lasting (seconds, stopped) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer
  // Unref'd: an app that wants to exit mid-diagnosis exits.
  const elapsed = new Promise((resolve) => { timer = setTimeout(resolve, seconds * 1000).unref() })
  try {
    await Promise.race([elapsed, stopped])
  } finally {
    clearTimeout(timer)
  }
}
