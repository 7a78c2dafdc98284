import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { ARM, BUFFER_SIZE, DEADLINE_OFFSET, FIRED, monotonicMs, STOP } from './pacer-clock.js'

// In Node since 16, typed only from TypeScript's es2024 library.
const waitAsync = /** @type {(cells: Int32Array, index: number, value: number) => { async: boolean, value: Promise<string> | string }} */ (
  /** @type {any} */ (Atomics).waitAsync)

/**
 * Wakes the load thread at a given time to within the system's wake-up latency, without blocking it meanwhile.
 *
 * An open loop must send each request when it is due. setTimeout counts in whole milliseconds from the loop's cached
 * clock, so a send scheduled with it is up to a millisecond or more late, and that lateness lands in every corrected
 * latency. Atomics.wait sleeps to the microsecond but blocks the thread: responses that arrive meanwhile would be read
 * (and timed) late. So a thread of its own sleeps until the deadline and wakes this one's event loop, which sleeps in
 * epoll, ready to read, until then. The last stretch, shorter than the usual wake-up latency, is left to the caller.
 */
export class Pacer {
  constructor () {
    const buffer = new SharedArrayBuffer(BUFFER_SIZE)
    this.cells = new Int32Array(buffer, 0, 4)
    this.deadline = new Float64Array(buffer, DEADLINE_OFFSET, 1)
    // perf-clock ms + offset = monotonicMs()
    this.offset = monotonicMs() - performance.now()
    this.thread = new Worker(new URL('./pacer-thread.js', import.meta.url), { workerData: { buffer } })
    this.thread.unref()
    /** settles when the thread runs: until then a wake-up would come as late as the thread's start (tens of ms) */
    this.ready = new Promise((resolve) => {
      this.thread.once('message', resolve)
      this.thread.once('exit', resolve)
    })
    /** the thread is gone (it failed, or was stopped): wake-ups fall back to a millisecond timer */
    this.gone = false
    this.thread.once('error', () => {}) // its exit says it; an error event with no listener would end the process
    this.thread.once('exit', () => {
      this.gone = true
      if (this.waiting) this.onFired()
    })
    this.waiting = false
    /** @type {(() => void) | null} */
    this.callback = null
    /** perf-clock ms the pending wake-up was asked for */
    this.at = 0
    /**
     * How late wake-ups come, in ms: the latest lateness, or the longest lately (it decays by 2% a wake-up), so that
     * the caller polls long enough to cover it. From ~0.09 ms on a busy 2-core VM to 0.2–0.5 ms when its CPUs idle.
     */
    this.late = 0.1
    this.onFired = () => {
      this.waiting = false
      if (this.callback !== null) this.late = Math.max(performance.now() - this.at, this.late * 0.98)
      const callback = this.callback
      this.callback = null
      callback?.()
    }
  }

  /**
   * Calls `callback` at `at` (or soon after); replaces any wake-up not yet delivered.
   * @param {number} at perf-clock ms
   * @param {() => void} callback
   */
  wakeAt (at, callback) {
    if (this.gone) {
      setTimeout(callback, Math.max(0, at - performance.now()))
      return
    }
    this.callback = callback
    this.at = at
    this.deadline[0] = at + this.offset
    const fired = Atomics.load(this.cells, FIRED)
    Atomics.add(this.cells, ARM, 1)
    Atomics.notify(this.cells, ARM)
    if (this.waiting) return
    this.waiting = true
    const wait = waitAsync(this.cells, FIRED, fired)
    if (wait.async) /** @type {Promise<string>} */ (wait.value).then(this.onFired)
    else queueMicrotask(this.onFired)
  }

  /** Ends the thread; a wake-up not yet delivered never is. */
  stop () {
    this.callback = null
    Atomics.store(this.cells, STOP, 1)
    Atomics.notify(this.cells, ARM)
    // settles a pending waitAsync, so nothing waits on a thread that is gone
    Atomics.add(this.cells, FIRED, 1)
    Atomics.notify(this.cells, FIRED)
  }
}
