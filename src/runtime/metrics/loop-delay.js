import { performance } from 'node:perf_hooks'

/** Upper bounds (s) of the delay histogram's buckets: timer jitter at the bottom, a frozen process at the top. */
export const DELAY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** ms between ticks: the resolution @fastify/under-pressure and prom-client use. */
const RESOLUTION = 10

/**
 * @typedef {object} DelayTotals cumulative since the source started: what a Prometheus histogram exposes
 * @property {number[]} buckets ticks whose delay was at most DELAY_BUCKETS[i] (cumulative, the +Inf bucket is `count`)
 * @property {number} sum seconds of delay
 * @property {number} count ticks
 */

/**
 * Event-loop delay as running totals that no reader resets: a tick every 10 ms records how late it came into fixed
 * buckets, so any number of scrapers (two registries, an HA pair of Prometheus servers, an OpenTelemetry reader) read
 * the same counts and none of them takes a stall away from another. A histogram that is read and reset per scrape
 * (the previous design) cannot be shared. Costs one unref'd JavaScript timer for the whole process, however many
 * registrations read it: a few microseconds a tick.
 */
class LoopDelay {
  /** non-cumulative: ticks that fell in bucket i (the last slot: above the top bound) */
  #counts = new Float64Array(DELAY_BUCKETS.length + 1)
  #sum = 0
  #count = 0
  #last = 0
  /** @type {ReturnType<typeof setInterval> | null} */
  #timer = null
  /** @type {Set<(seconds: number) => void>} */
  #observers = new Set()
  users = 0

  start () {
    if (this.#timer !== null) return
    this.#last = performance.now()
    this.#timer = setInterval(() => this.#tick(), RESOLUTION)
    this.#timer.unref()
  }

  stop () {
    if (this.#timer !== null) clearInterval(this.#timer)
    this.#timer = null
  }

  #tick () {
    const now = performance.now()
    const late = Math.max(0, now - this.#last - RESOLUTION) / 1000
    this.#last = now
    let i = 0
    while (i < DELAY_BUCKETS.length && late > DELAY_BUCKETS[i]) i++
    this.#counts[i]++
    this.#sum += late
    this.#count++
    for (const observe of this.#observers) {
      try { observe(late) } catch {}
    }
  }

  /** @param {(seconds: number) => void} fn called with each tick's delay */
  observe (fn) { this.#observers.add(fn) }

  /** @param {(seconds: number) => void} fn */
  unobserve (fn) { this.#observers.delete(fn) }

  /** @returns {DelayTotals} */
  totals () {
    const buckets = []
    let running = 0
    for (let i = 0; i < DELAY_BUCKETS.length; i++) {
      running += this.#counts[i]
      buckets.push(running)
    }
    return { buckets, sum: this.#sum, count: this.#count }
  }
}

/** One per process: every registration reads the same totals. */
const shared = new LoopDelay()

/**
 * Takes a reference on the process's delay totals; the returned release stops its timer once nobody reads it.
 * The totals go on from where they were: a counter that restarts at zero in a live process would read as a reset.
 * @returns {{ source: LoopDelay, release: () => void }}
 */
export function acquireLoopDelay () {
  shared.users++
  shared.start()
  let released = false
  return {
    source: shared,
    release () {
      if (released) return
      released = true
      if (--shared.users === 0) shared.stop()
    }
  }
}

/** @typedef {LoopDelay} LoopDelaySource */
