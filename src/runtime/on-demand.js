// What on-demand profiling and on-demand diagnosis share: one job at a time, started by a call, a signal or the HTTP
// trigger, refused while one runs or after close(), and close() ending a running one early with its files still written.
import { isMainThread } from 'node:worker_threads'

/** @typedef {{ ok: false, reason: 'busy' | 'closed' | 'failed', error?: string }} Refused */

/**
 * @template {{ ok: boolean }} R what a job gives: its files, or why it did not run
 */
export class OnDemand {
  /**
   * @param {NodeJS.Signals | false} signal the signal that starts a job (false: none)
   * @param {((result: R) => void) | undefined} onResult told of every job, done or refused
   */
  constructor (signal, onResult) {
    /** @private @type {{ stop: () => void, done: Promise<R> } | null} */
    this.running = null
    /** @private */
    this.closed = false
    /** @private */
    this.onResult = onResult
    this.signal = signal
    /** @private */
    this.onSignal = () => { this.fromSignal() }
    // Signals are delivered to the main thread only.
    if (this.signal && isMainThread) process.on(this.signal, this.onSignal)
  }

  /** Whether a job is running now. */
  get busy () {
    return this.running !== null
  }

  /**
   * What the signal starts; each kind of job says.
   * @protected
   */
  fromSignal () {}

  /**
   * Why a job cannot start now, or null.
   * @protected
   * @returns {Refused | null}
   */
  refusal () {
    if (this.closed) return { ok: false, reason: 'closed' }
    if (this.running) return { ok: false, reason: 'busy' }
    return null
  }

  /**
   * Tells of a refusal and gives it back as the job's result.
   * @protected
   * @param {Refused} refused
   * @returns {Promise<R>}
   */
  refuse (refused) {
    const result = /** @type {R} */ (/** @type {unknown} */ (refused))
    this.tell(result)
    return Promise.resolve(result)
  }

  /**
   * Runs a job: `job` gets a promise that resolves when close() ends it early.
   * @protected
   * @param {(stopped: Promise<void>) => Promise<R>} job
   * @returns {Promise<R>}
   */
  launch (job) {
    /** @type {() => void} */
    let stop = () => {}
    /** @type {Promise<void>} */
    const stopped = new Promise((resolve) => { stop = resolve })
    const done = job(stopped).then((result) => {
      this.running = null
      this.tell(result)
      return result
    })
    this.running = { stop, done }
    return done
  }

  /** @private @param {R} result */
  tell (result) {
    try {
      this.onResult?.(result)
    } catch {}
  }

  /**
   * Stops listening for the signal; a running job ends now and is still written.
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
