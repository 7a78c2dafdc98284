// On-demand profiling in production: a CPU profile (and a heap sampling profile) of this process for N seconds,
// triggered by a signal, a call, or an HTTP request the app chooses to mount, written to a directory as .cpuprofile,
// .heapprofile and pprof. One capture at a time. Nothing here throws into the host app or keeps its process alive.
import { createHash, timingSafeEqual } from 'node:crypto'
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { isMainThread, threadId } from 'node:worker_threads'
import { startCpuProfile, startHeapSampling } from '../profile/capture.js'
import { buildHeapProfile, buildProfile } from '../profile/model.js'
import { modelToPprof } from '../profile/pprof.js'

/**
 * @typedef {object} ProfilerOptions
 * @property {string} [dir] where captures are written, created when missing (default: `<os tmpdir>/hotpath-profiles`)
 * @property {NodeJS.Signals | false} [signal] the signal that starts a capture (default `SIGUSR2`; `false`: none).
 *   Signals reach the main thread only; in a worker thread, call `capture()`.
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

/**
 * @typedef {object} HttpTriggerOptions
 * @property {string} token the secret a request must carry as `Authorization: Bearer <token>` (at least 16 characters)
 * @property {number} [maxDuration] the longest capture a request may ask for with `?seconds=N` (default 60)
 */

const MIN_TOKEN = 16

export class Profiler {
  /** @param {ProfilerOptions} [opts] */
  constructor (opts = {}) {
    this.dir = resolve(opts.dir ?? join(tmpdir(), 'hotpath-profiles'))
    this.duration = positive(opts.duration, 10, 'duration')
    /** @private */
    this.interval = opts.interval === undefined ? undefined : Math.round(positive(opts.interval, 1000, 'interval'))
    this.heap = opts.heap !== false
    /** @private */
    this.heapInterval = opts.heapInterval === undefined ? undefined : Math.round(positive(opts.heapInterval, 32768, 'heapInterval'))
    /** @private */
    this.onCapture = opts.onCapture
    /** @private */
    this.onError = opts.onError ?? ((/** @type {Error} */ err) => process.emitWarning(`hotpath profiling: ${err.message}`, 'HotpathWarning'))
    /** @private @type {{ stop: () => void, done: Promise<CaptureResult> } | null} */
    this.running = null
    /** @private */
    this.closed = false
    this.signal = opts.signal === undefined ? 'SIGUSR2' : opts.signal
    /** @private */
    this.onSignal = () => { this.capture() }
    // Signals are delivered to the main thread only.
    if (this.signal && isMainThread) process.on(this.signal, this.onSignal)
  }

  /** Whether a capture is running now. */
  get busy () {
    return this.running !== null
  }

  /**
   * Captures for `duration` seconds and writes the files. Refused (ok: false, reason: 'busy') while another runs.
   * @param {CaptureOptions} [opts]
   * @returns {Promise<CaptureResult>}
   */
  capture (opts = {}) {
    /** @type {CaptureResult} */
    let refused
    if (this.closed) refused = { ok: false, reason: 'closed' }
    else if (this.running) refused = { ok: false, reason: 'busy' }
    else return this.start(opts)
    this.tell(refused)
    return Promise.resolve(refused)
  }

  /**
   * @private
   * @param {CaptureOptions} opts
   * @returns {Promise<CaptureResult>}
   */
  start (opts) {
    const seconds = typeof opts.duration === 'number' && opts.duration > 0 && Number.isFinite(opts.duration) ? opts.duration : this.duration
    const withHeap = opts.heap ?? this.heap
    /** @type {() => void} */
    let stop = () => {}
    const stopped = new Promise((resolve) => {
      stop = () => resolve(undefined)
      // Unref'd: an app that wants to exit mid-capture exits; the capture is lost, the app is not held.
      setTimeout(resolve, seconds * 1000).unref()
    })
    const done = this.run(seconds, withHeap, stopped).then((result) => {
      this.running = null
      this.tell(result)
      return result
    })
    this.running = { stop, done }
    return done
  }

  /**
   * @private
   * @param {number} seconds
   * @param {boolean} withHeap
   * @param {Promise<unknown>} stopped
   * @returns {Promise<CaptureResult>}
   */
  async run (seconds, withHeap, stopped) {
    const startedAt = Date.now()
    /** @type {Awaited<ReturnType<typeof startCpuProfile>> | null} */
    let cpu = null
    /** @type {Awaited<ReturnType<typeof startHeapSampling>> | null} */
    let heap = null
    try {
      cpu = await startCpuProfile({ interval: this.interval })
      if (withHeap) heap = await startHeapSampling({ interval: this.heapInterval })
      await stopped
      const cpuProfile = await cpu.stop()
      const heapProfile = heap ? await heap.stop() : null
      const duration = (Date.now() - startedAt) / 1000
      const stem = join(this.dir, `${isMainThread ? '' : `t${threadId}-`}${process.pid}-${stamp(startedAt)}`)
      await mkdir(this.dir, { recursive: true })
      // No source reading here: synchronous file reads would stall the app. `hotpath flame --from` maps sources later.
      const files = [
        await writeAtomic(`${stem}.cpuprofile`, JSON.stringify(cpuProfile)),
        await writeAtomic(`${stem}.cpu.pb.gz`, modelToPprof(buildProfile(cpuProfile, { readSources: false })))
      ]
      if (heapProfile) {
        files.push(await writeAtomic(`${stem}.heapprofile`, JSON.stringify(heapProfile)))
        files.push(await writeAtomic(`${stem}.heap.pb.gz`, modelToPprof(buildHeapProfile(heapProfile, { readSources: false }))))
      }
      return { ok: true, files, startedAt, duration }
    } catch (err) {
      // Whatever failed, the profilers must not stay on.
      await Promise.allSettled([cpu?.stop(), heap?.stop()])
      const error = err instanceof Error ? err : new Error(String(err))
      try {
        this.onError(error)
      } catch {}
      return { ok: false, reason: 'failed', error: error.message }
    }
  }

  /**
   * @private @param {CaptureResult} result */
  tell (result) {
    try {
      this.onCapture?.(result)
    } catch {}
  }

  /**
   * A request handler that starts a capture: mount it on a route of your choice, e.g.
   * `if (req.url.startsWith('/debug/profile')) return trigger(req, res)`, or `app.post('/debug/profile', trigger)`.
   * It answers POST only, requires `Authorization: Bearer <token>` (compared in constant time), takes `?seconds=N`
   * and `?heap=0`, and answers when the files are written: 200 with `{ files }`, 401, 405, 409 while a capture runs,
   * 500 when it failed. Nothing is mounted unless you mount this.
   * @param {HttpTriggerOptions} opts
   * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void}
   */
  httpHandler (opts) {
    // A configuration mistake is reported when the app sets it up, not at a request.
    if (typeof opts?.token !== 'string' || opts.token.length < MIN_TOKEN) {
      throw new TypeError(`the profiling HTTP trigger needs a token of at least ${MIN_TOKEN} characters`)
    }
    const expected = digest(opts.token)
    const maxDuration = positive(opts.maxDuration, 60, 'maxDuration')
    return (req, res) => {
      try {
        handle(this, req, res, expected, maxDuration)
      } catch {
        answer(res, 500, { error: 'internal error' })
      }
    }
  }

  /**
   * Stops listening for the signal; a running capture ends now and is still written.
   * @returns {Promise<void>}
   */
  async close () {
    this.closed = true
    if (this.signal && isMainThread) process.removeListener(this.signal, this.onSignal)
    const running = this.running
    if (running) {
      running.stop()
      await running.done
    }
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
 * @param {Profiler} profiler
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {Buffer} expected
 * @param {number} maxDuration
 */
function handle (profiler, req, res, expected, maxDuration) {
  // Drain any body: the request carries nothing we need, and an unread body would stall the socket.
  req.resume()
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST')
    return answer(res, 405, { error: 'use POST' })
  }
  const auth = req.headers.authorization ?? ''
  const given = auth.startsWith('Bearer ') ? auth.slice(7).trim() : ''
  // Digests of equal length, compared in constant time: neither the token nor its length leaks through timing.
  if (!timingSafeEqual(digest(given), expected)) return answer(res, 401, { error: 'a valid token is required' })
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams
  const seconds = query.has('seconds') ? Number(query.get('seconds')) : profiler.duration
  if (!(seconds > 0 && seconds <= maxDuration)) return answer(res, 400, { error: `seconds must be between 0 and ${maxDuration}` })
  const heap = query.has('heap') ? !['0', 'false', 'no'].includes(String(query.get('heap'))) : undefined
  profiler.capture({ duration: seconds, heap }).then((result) => {
    if (result.ok) answer(res, 200, { files: result.files, duration: result.duration })
    else if (result.reason === 'busy') answer(res, 409, { error: 'a capture is already running' })
    else if (result.reason === 'closed') answer(res, 503, { error: 'profiling is closed' })
    else answer(res, 500, { error: 'the capture failed' })
  })
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {object} body
 */
function answer (res, status, body) {
  try {
    if (res.headersSent || res.writableEnded || res.destroyed) return
    const text = JSON.stringify(body) + '\n'
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' })
    res.end(text)
  } catch {}
}

/** @param {string} text */
function digest (text) {
  return createHash('sha256').update(text).digest()
}

/**
 * @param {string} file
 * @param {string | Uint8Array} content
 */
async function writeAtomic (file, content) {
  // Written aside, then renamed: whoever watches the directory never reads half a profile.
  const tmp = `${file}.${process.pid}.tmp`
  await writeFile(tmp, content)
  await rename(tmp, file)
  return file
}

/** @param {number} ms */
function stamp (ms) {
  return new Date(ms).toISOString().replace(/[-:]/g, '')
}

/**
 * @param {number | undefined} value
 * @param {number} fallback
 * @param {string} name
 */
function positive (value, fallback, name) {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) throw new TypeError(`${name} must be a positive number, got ${value}`)
  return value
}
