import { performance } from 'node:perf_hooks'
import { Pacer } from './pacer.js'

/** @typedef {import('./connection.js').Connection} Connection */
/** @typedef {import('./runner.js').Runner} Runner */

/**
 * Open loop: the shortest last stretch before a send is due, in ms, that the thread spends polling (setImmediate:
 * responses are still read as they come) rather than sleeping; it grows to cover how late the pacer's wake-ups come
 * (Pacer.late), up to MAX_SPIN_MS. A thread woken from sleep on a 2-core VM runs ~0.09 ms late at the median (the
 * pacer's thread and Atomics.wait alike). Measured at -R 1000 against a fast server with a fixed stretch, send lateness
 * p50 / generator CPU per request (3 s runs, start-up included): no poll 87 µs / 220 µs, 0.05 ms 29 / 227, 0.1 ms
 * 3 / 273, 0.2 ms 1 / 364.
 */
const SPIN_MS = 0.1
/** the longest stretch polled before a send, in ms, however late the wake-ups */
const MAX_SPIN_MS = 1
/**
 * At most this share of the time between two sends is spent polling, so that at high rates the generator does not
 * burn a core the server may need: there the reads, as frequent as the sends, send what is due too.
 */
const SPIN_SHARE = 0.25

/**
 * The open loop's schedule (--rate): request i is due at t0 + i / rate whatever happened before — the arrival process
 * does not wait for the server. A due request goes out on the first connection with room; when none has room it waits,
 * and its latency is still measured from when it was due (coordinated omission removed, as wrk2 does). Sends are timed
 * by the pacer's thread (pacer.js), then a short poll. The runner (runner.js) owns the connections and the count of
 * requests issued, which is this schedule's index.
 */
export class OpenLoop {
  /**
   * @param {Runner} runner
   * @param {number} rate requests per second for this thread
   */
  constructor (runner, rate) {
    this.runner = runner
    this.interval = 1000 / rate
    this.maxSpinMs = Math.min(MAX_SPIN_MS, SPIN_SHARE * this.interval)
    /** perf-clock ms the schedule starts from: the run's start, then the measurement's */
    this.t0 = 0
    /** @type {Connection[]} connections with room, waiting for the next due request */
    this.idle = []
    /** @type {NodeJS.Timeout | null} */
    this.tickTimer = null
    /** wakes the open loop when the next request falls due (its own thread: see pacer.js) */
    this.pacer = new Pacer()
    this.tick = this.tick.bind(this)
  }

  /** @param {number} now perf-clock ms */
  dueCount (now) {
    return Math.floor((now - this.t0) / this.interval) + 1
  }

  /** Intended send time of the next request in the schedule; advances the schedule. */
  nextIntended () {
    return this.t0 + (this.runner.issued++) * this.interval
  }

  /**
   * Sends what is due of the `k` requests a connection has room for, and parks it while it has room left.
   * @param {Connection} conn
   * @param {number} k
   * @param {number} now perf-clock ms
   */
  fill (conn, k, now) {
    const due = this.dueCount(now) - this.runner.issued
    if (due <= 0) {
      this.park(conn)
      return
    }
    if (due < k) k = due
    conn.send(k, now)
    if (conn.capacity > 0) this.park(conn)
  }

  /** @param {Connection} conn */
  park (conn) {
    if (conn.queued) return
    conn.queued = true
    this.idle.push(conn)
  }

  /** Sends what is due on idle connections, then sleeps until the next request is due. */
  tick () {
    this.tickTimer = null
    const runner = this.runner
    if (!runner.running) return
    const now = performance.now()
    let due = this.dueCount(now) - runner.issued
    if (runner.amount > 0) due = Math.min(due, runner.amount - runner.issued)
    while (due > 0 && this.idle.length > 0) {
      const conn = /** @type {Connection} */ (this.idle.shift())
      conn.queued = false
      const k = Math.min(conn.capacity, due)
      if (k === 0) continue
      // each write takes microseconds: a later connection's requests go out later
      conn.send(k, performance.now())
      due -= k
      if (conn.capacity > 0) this.park(conn)
    }
    if (runner.amount > 0 && runner.issued >= runner.amount) return
    if (due > 0) {
      // Due, but no connection has room: a response that frees one sends it (refill); look again in a millisecond.
      this.tickTimer = setTimeout(this.tick, 1)
      return
    }
    const next = this.t0 + runner.issued * this.interval
    const spin = Math.min(this.maxSpinMs, Math.max(SPIN_MS, this.pacer.late))
    if (next - performance.now() <= spin) setImmediate(this.tick)
    else this.pacer.wakeAt(next - spin, this.tick)
  }

  /**
   * Missed: due, but no connection was free to send it. A request that fell due since the last tick and has a free
   * connection waiting is not missed, only not yet sent.
   * @param {number} now perf-clock ms
   */
  missed (now) {
    const runner = this.runner
    let due = this.dueCount(now)
    if (runner.amount > 0) due = Math.min(due, runner.amount)
    let free = 0
    for (const conn of runner.connections) free += conn.capacity
    return Math.max(0, due - runner.issued - free)
  }

  stop () {
    if (this.tickTimer) clearTimeout(this.tickTimer)
    this.pacer.stop()
  }
}
