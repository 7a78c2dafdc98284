// On-demand profiling in production: a CPU profile (and a heap sampling profile) of this process for N seconds,
// triggered by a signal, a call, or an HTTP request the app chooses to mount, written to a directory as .cpuprofile,
// .heapprofile and pprof, privately (profile-files.js), by a worker thread (profile-worker.js); the HTTP trigger is
// profile-trigger.js. One capture at a time.
// Once set up, nothing here throws into the host app or keeps its process alive; a bad option throws when it is given.
import { constants } from 'node:os'
import { resolve } from 'node:path'
import { isMainThread, threadId } from 'node:worker_threads'
import { startCpuProfile, startHeapSampling } from '../profile/capture.js'
import { checkOptions, rule } from './options.js'
import { defaultProfileDir } from './profile-files.js'
import { OnDemand } from './on-demand.js'
import { ProfileJob } from './profile-job.js'
import { httpTrigger } from './profile-trigger.js'

/**
 * @typedef {object} ProfilerOptions
 * @property {string} [dir] where captures are written, created (0700) when missing; it must be a directory, not a
 *   symbolic link, owned by this process's user and not writable by others (default: `<os tmpdir>/hotpath-profiles-<uid>`,
 *   which must also be closed to others: mode 0700)
 * @property {NodeJS.Signals | false} [signal] the signal that starts a capture (default `SIGUSR2`; `false`: none); not
 *   one that cannot be caught or that Node.js, V8 or the process's ending rely on (SIGKILL, SIGSTOP, SIGINT, SIGTERM,
 *   SIGUSR1, SIGPROF, SIGSEGV, SIGBUS, SIGFPE, SIGILL). Signals reach the main thread only; in a worker thread, call
 *   `capture()`.
 * @property {number} [duration] seconds a capture lasts (default 10)
 * @property {number} [interval] µs between CPU samples (default 1000)
 * @property {boolean} [heap] also take a heap sampling profile (default true)
 * @property {number} [heapInterval] mean bytes between heap samples (default 32768)
 * @property {(result: CaptureResult) => void} [onCapture] told of every capture, done or refused
 * @property {(error: Error) => void} [onError] told when a capture fails (default: a process warning)
 */

/**
 * @typedef {object} CaptureOptions
 * @property {number} [duration] seconds (default: the profiler's)
 * @property {boolean} [heap] (default: the profiler's)
 */

/**
 * What a capture did. It never rejects: a refused or failed capture says why.
 * @typedef {{ ok: true, files: string[], startedAt: number, duration: number } | { ok: false, reason: 'busy' | 'closed' | 'failed', error?: string }} CaptureResult
 *   files: absolute paths written (.cpuprofile, .cpu.pb.gz, and with heap .heapprofile, .heap.pb.gz);
 *   startedAt: ms since the epoch; duration: seconds actually captured
 */

// Signals a capture may not take: uncatchable; the ones that end a process (a listener would stop them doing so);
// Node's inspector (SIGUSR1, which `hotpath --attach` uses); V8's CPU profiler's own timer (SIGPROF); and faults,
// after which Node says running JavaScript is unsafe.
const RESERVED_SIGNALS = new Set(['SIGKILL', 'SIGSTOP', 'SIGINT', 'SIGTERM', 'SIGUSR1', 'SIGPROF', 'SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL'])

/** @type {Record<string, import('./options.js').OptionRule>} */
const PROFILER_OPTIONS = {
  dir: rule.string(),
  signal: {
    types: ['string', 'boolean'],
    expect: "the name of a signal this process can listen to (e.g. 'SIGUSR2'; not SIGKILL, SIGSTOP, SIGINT, SIGTERM, SIGUSR1, SIGPROF or a fault), or false",
    valid: (v) => v === false || (typeof v === 'string' && Object.hasOwn(constants.signals, v) && !RESERVED_SIGNALS.has(v))
  },
  duration: rule.positive('seconds'),
  interval: rule.positive('µs'),
  heap: rule.boolean(),
  heapInterval: rule.positive('bytes'),
  onCapture: rule.fn(),
  onError: rule.fn()
}

/** @type {Record<string, import('./options.js').OptionRule>} */
const CAPTURE_OPTIONS = {
  duration: rule.positive('seconds'),
  heap: rule.boolean()
}

/** @extends {OnDemand<CaptureResult>} */
export class Profiler extends OnDemand {
  /** @param {ProfilerOptions} [opts] */
  constructor (opts = {}) {
    checkOptions('profiler()', opts, PROFILER_OPTIONS)
    super(opts.signal === undefined ? 'SIGUSR2' : opts.signal, opts.onCapture)
    /** @private */
    this.privateDir = opts.dir === undefined
    this.dir = opts.dir === undefined ? defaultProfileDir() : resolve(opts.dir)
    this.duration = opts.duration ?? 10
    /** @private */
    this.interval = opts.interval === undefined ? undefined : Math.max(1, Math.round(opts.interval))
    this.heap = opts.heap !== false
    /** @private */
    this.heapInterval = opts.heapInterval === undefined ? undefined : Math.max(1, Math.round(opts.heapInterval))
    /** @private */
    this.onError = opts.onError ?? ((/** @type {Error} */ err) => process.emitWarning(`hotpath profiling: ${err.message}`, 'HotpathWarning'))
  }

  /** @protected */
  fromSignal () {
    this.capture()
  }

  /**
   * Captures for `duration` seconds and writes the files. Refused (ok: false, reason: 'busy') while another runs.
   * Bad options throw a TypeError here; the promise never rejects.
   * @param {CaptureOptions} [opts]
   * @returns {Promise<CaptureResult>}
   */
  capture (opts = {}) {
    checkOptions('profiler.capture()', opts, CAPTURE_OPTIONS)
    const refused = this.refusal()
    return refused === null ? this.start(opts) : this.refuse(refused)
  }

  /**
   * @private
   * @param {CaptureOptions} opts
   * @returns {Promise<CaptureResult>}
   */
  start (opts) {
    const seconds = opts.duration ?? this.duration
    const withHeap = opts.heap ?? this.heap
    return this.launch(stopped => this.run(seconds, withHeap, stopped))
  }

  /**
   * @private
   * @param {number} seconds
   * @param {boolean} withHeap
   * @param {Promise<void>} stopped resolves when close() ends the capture early
   * @returns {Promise<CaptureResult>}
   */
  async run (seconds, withHeap, stopped) {
    // The main thread is profiled from the worker, and never holds the profile; a worker thread profiles itself.
    const attach = isMainThread
    /** @type {ProfileJob | null} */
    let job = null
    /** @type {Awaited<ReturnType<typeof startCpuProfile>> | null} */
    let cpu = null
    /** @type {Awaited<ReturnType<typeof startHeapSampling>> | null} */
    let heap = null
    try {
      job = new ProfileJob({
        dir: this.dir,
        private: this.privateDir,
        prefix: isMainThread ? '' : `t${threadId}-`,
        attach,
        heap: withHeap,
        interval: this.interval,
        heapInterval: this.heapInterval
      })
      // The directory is checked before anything is profiled: a refused one costs the app nothing.
      await job.started
      if (attach) {
        await lasting(seconds, stopped)
        job.stop()
      } else {
        const startedAt = Date.now()
        cpu = await startCpuProfile({ interval: this.interval })
        if (withHeap) heap = await startHeapSampling({ interval: this.heapInterval })
        await lasting(seconds, stopped)
        const cpuProfile = await cpu.stop()
        const heapProfile = heap ? await heap.stop() : null
        job.send({ cpu: cpuProfile, heap: heapProfile, startedAt, duration: (Date.now() - startedAt) / 1000 })
      }
      const { files, startedAt, duration } = await job.done
      return { ok: true, files, startedAt, duration }
    } catch (err) {
      // Whatever failed, the profilers must not stay on.
      await Promise.allSettled([cpu?.stop(), heap?.stop()])
      const error = err instanceof Error ? err : new Error(String(err))
      try {
        this.onError(error)
      } catch {}
      return { ok: false, reason: 'failed', error: error.message }
    } finally {
      job?.end()
    }
  }

  /**
   * A request handler that starts a capture: mount it on a route of your choice, e.g.
   * `if (req.url.startsWith('/debug/profile')) return trigger(req, res)`, or `app.post('/debug/profile', trigger)`.
   * It answers POST only, requires `Authorization: Bearer <token>` (compared in constant time), takes `?seconds=N`
   * and `?heap=0`, and answers when the files are written: 200 with `{ files }`, 401, 405, 409 while a capture runs,
   * 500 when it failed. Nothing is mounted unless you mount this.
   * @param {import('./profile-trigger.js').HttpTriggerOptions} opts
   * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void}
   */
  httpHandler (opts) {
    return httpTrigger(this, opts)
  }
}

/**
 * Starts on-demand profiling: `kill -USR2 <pid>` (or `profiler.capture()`, or the HTTP trigger) writes a CPU and a
 * heap profile of the next N seconds to `dir`. Render them with `hotpath flame --from <file>`.
 * @param {ProfilerOptions} [opts]
 * @returns {Profiler}
 */
export function profiler (opts) {
  return new Profiler(opts)
}

/**
 * The capture's time, counted from when the profilers run (a worker takes a moment to start), or until close().
 * @param {number} seconds
 * @param {Promise<void>} stopped
 */
async function lasting (seconds, stopped) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer
  // Unref'd: an app that wants to exit mid-capture exits; the capture is lost, the app is not held.
  const elapsed = new Promise((resolve) => { timer = setTimeout(resolve, seconds * 1000).unref() })
  try {
    await Promise.race([elapsed, stopped])
  } finally {
    clearTimeout(timer)
  }
}
