// Profiling the main thread from a worker thread, so that the main thread's event loop pays as little as possible.
// Three costs fall on the profiled thread whatever we do: V8 builds its answer (the profile, encoded as JSON) there;
// a profiler's start walks the heap to log every compiled function; and the in-process inspector parses the answer
// back into objects. The answer goes to this worker's session (connectToMainThread), so the parse happens here. One
// profile runs for the whole capture and is never asked for (ending it by `Profiler.disable` sends nothing), so the
// profiler starts once; what is sent are titled profiles of a second each, started and ended through the console's
// profile()/profileEnd() on the same profiler (no new start, no walk), each a second's answer rather than a minute's.
// They are joined here (profile-chunks.js).
import { Session } from 'node:inspector'
import { joinCpuProfiles } from './profile-chunks.js'
import { unguessable } from './profile-files.js'
import { post } from '../profile/capture.js'

/** @typedef {import('../profile/cpuprofile.js').CpuProfile} CpuProfile */
/** @typedef {import('../profile/cpuprofile.js').SamplingHeapProfile} SamplingHeapProfile */

export class MainThreadCapture {
  /**
   * @param {{ interval?: number, heap: boolean, heapInterval?: number }} opts
   * @returns {Promise<MainThreadCapture>}
   */
  static async start (opts) {
    const capture = new MainThreadCapture(opts.heap)
    try {
      await capture.begin(opts)
    } catch (err) {
      capture.session.disconnect()
      throw err
    }
    return capture
  }

  /** @param {boolean} heap */
  constructor (heap) {
    this.heap = heap
    this.session = new Session()
    this.session.connectToMainThread()
    this.prefix = `hotpath-${unguessable()}-`
    this.piece = 0
    /** @type {CpuProfile[]} */
    this.pieces = []
    /** @type {Map<string, (profile: CpuProfile) => void>} */
    this.waiting = new Map()
    this.session.on('Profiler.consoleProfileFinished', (/** @type {any} */ message) => {
      const { title, profile } = message?.params ?? {}
      this.waiting.get(title)?.(profile)
      this.waiting.delete(title)
    })
  }

  /**
   * @private
   * @param {{ interval?: number, heapInterval?: number }} opts
   */
  async begin (opts) {
    await post(this.session, 'Profiler.enable')
    if (opts.interval !== undefined) await post(this.session, 'Profiler.setSamplingInterval', { interval: opts.interval })
    await post(this.session, 'Profiler.start')
    await this.console(`profile(${JSON.stringify(this.title())})`)
    if (this.heap) {
      await post(this.session, 'HeapProfiler.enable')
      await post(this.session, 'HeapProfiler.startSampling', opts.heapInterval === undefined ? {} : { samplingInterval: opts.heapInterval })
    }
  }

  /** Ends the running piece and starts the next, in one turn of the main thread. */
  async next () {
    const ended = this.ended()
    this.piece++
    await this.console(`profileEnd(${JSON.stringify(this.title(this.piece - 1))}); profile(${JSON.stringify(this.title())})`)
    this.pieces.push(await ended)
  }

  /**
   * Ends the capture: the last piece, the heap profile, and the profiler (without its whole-capture answer).
   * @returns {Promise<{ cpu: CpuProfile, heap: SamplingHeapProfile | null }>}
   */
  async stop () {
    try {
      const ended = this.ended()
      await this.console(`profileEnd(${JSON.stringify(this.title())})`)
      this.pieces.push(await ended)
      /** @type {SamplingHeapProfile | null} */
      const heap = this.heap ? /** @type {{ profile: SamplingHeapProfile }} */ (await post(this.session, 'HeapProfiler.stopSampling')).profile : null
      return { cpu: joinCpuProfiles(this.pieces), heap }
    } finally {
      this.close()
    }
  }

  /** Stops everything without answers: a session's end disables its domains, which ends their profiles unsent. */
  close () {
    this.session.disconnect()
  }

  /** @private */
  title (n = this.piece) {
    return `${this.prefix}${n}`
  }

  /**
   * The current piece's profile, when V8 sends it.
   * @private
   * @returns {Promise<CpuProfile>}
   */
  ended () {
    return new Promise((resolve) => this.waiting.set(this.title(), resolve))
  }

  /**
   * Runs the console's command-line profile()/profileEnd() on the main thread: they reach the inspector's console
   * directly, whatever the app did to `console`.
   * @private
   * @param {string} expression
   */
  async console (expression) {
    const result = /** @type {{ exceptionDetails?: { text?: string } }} */ (await post(this.session, 'Runtime.evaluate', { expression, includeCommandLineAPI: true, silent: true }))
    if (result.exceptionDetails) throw new Error(`the profiler could not be driven: ${result.exceptionDetails.text ?? 'an exception'}`)
  }
}
