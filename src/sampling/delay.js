import { monitorEventLoopDelay } from 'node:perf_hooks'

/**
 * @typedef {object} DelayStats event-loop delay in ms
 * @property {number} min
 * @property {number} mean
 * @property {number} p50
 * @property {number} p90
 * @property {number} p99
 * @property {number} max
 */

/**
 * Event-loop delay from Node's own monitor: a libuv timer (in C++, no JavaScript per tick) fires every `resolution` ms
 * and records the time between ticks in an HDR histogram. A tick that should come after `resolution` ms but comes after
 * `resolution + d` means the loop was busy for `d`; so every statistic here has the resolution taken off.
 */
export class DelayHistogram {
  /**
   * @param {number} resolution ms, an integer >= 1
   * @param {{ exact?: boolean }} [opts] `exact: false` skips the bucket walks while every tick is under a millisecond
   *   late (timer granularity, not a busy loop): the percentiles are then reported as max, an upper bound, and the
   *   mean as the middle of min and max
   */
  constructor (resolution, opts = {}) {
    this.resolution = resolution
    this.exact = opts.exact !== false
    this.histogram = monitorEventLoopDelay({ resolution })
  }

  enable () { this.histogram.enable() }
  disable () { this.histogram.disable() }
  reset () { this.histogram.reset() }

  /** How many ticks were recorded since the last reset. */
  get count () { return this.histogram.count }

  /**
   * Reads the statistics since the last reset; zeros when no tick was recorded.
   *
   * `missed` is a delay (ms) the histogram could not see: a reset forgets when the last tick was, so the tick that
   * spans a reset records nothing. When the loop blocks, the sampler's own timer comes due during the block and may
   * run (and reset) before the monitor's tick does, which would lose exactly the delay that matters. The sampler
   * passes its own timer's lateness; when it exceeds everything recorded, it is counted as one more tick — the largest.
   * @param {number} [missed]
   * @returns {DelayStats}
   */
  read (missed = 0) {
    const h = this.histogram
    const n = h.count
    const r = this.resolution
    // An empty histogram's percentiles walk every bucket (~20 µs): the idle case returns early.
    if (n === 0) {
      const m = missed > 0 ? round(missed) : 0
      return { min: m, mean: m, p50: m, p90: m, p99: m, max: m }
    }
    const max = delayMs(h.max, r)
    // Percentiles and the mean walk the buckets up to the value (~100 KB at 10 ms, ~15 µs each, more with cold caches).
    // One tick — the usual sample when the resolution is the interval — needs no walk: every percentile is its
    // bucket's highest value, which is max, and HDR's mean is the bucket's middle.
    const one = n === 1
    if (!one && !this.exact && max < 1 && !(missed > max)) {
      return { min: delayMs(h.min, r), mean: delayMs((h.min + h.max) / 2, r), p50: max, p90: max, p99: max, max }
    }
    const hMean = one ? h.min + (h.max - h.min + 1) / 2 : h.mean
    if (!(missed > max)) {
      return {
        min: delayMs(h.min, r),
        mean: delayMs(hMean, r),
        p50: one ? max : delayMs(h.percentile(50), r),
        p90: one ? max : delayMs(h.percentile(90), r),
        p99: one ? max : delayMs(h.percentile(99), r),
        max
      }
    }
    // n recorded ticks plus the missed one, which is the largest: ranks up to n are the histogram's own.
    return {
      min: delayMs(h.min, r),
      mean: round((delayMs(hMean, r) * n + missed) / (n + 1)),
      p50: withLargest(h, r, n, 50, missed),
      p90: withLargest(h, r, n, 90, missed),
      p99: withLargest(h, r, n, 99, missed),
      max: round(missed)
    }
  }
}

/**
 * The p-th percentile of the histogram's n values plus one larger value.
 * @param {import('node:perf_hooks').IntervalHistogram} h
 * @param {number} resolution
 * @param {number} n
 * @param {number} p
 * @param {number} largest ms
 */
function withLargest (h, resolution, n, p, largest) {
  const rank = Math.ceil(p / 100 * (n + 1))
  return rank > n ? round(largest) : delayMs(h.percentile(Math.min(100, 100 * rank / n)), resolution)
}

/** ms to the microsecond. @param {number} ms */
function round (ms) {
  return Math.round(ms * 1000) / 1000
}

/**
 * A tick's lateness in ms, to the microsecond.
 * @param {number} ns time between ticks
 * @param {number} resolution ms
 */
function delayMs (ns, resolution) {
  const ms = ns / 1e6 - resolution
  return ms > 0 ? round(ms) : 0
}

/**
 * The resolution that gives a histogram of several ticks per interval without waking the loop more than needed:
 * a tenth of the interval, between 1 ms and 10 ms (the resolution @fastify/under-pressure and prom-client use).
 * @param {number} interval ms
 */
export function resolutionFor (interval) {
  return Math.min(10, Math.max(1, Math.floor(interval / 10)))
}
