import * as hdr from 'hdr-histogram-js'

/** @typedef {import('hdr-histogram-js').Histogram} Histogram */

// The percentiles autocannon reports, by the key it uses; hotpath keeps the same keys so existing tooling reads them.
export const PERCENTILES = /** @type {const} */ ([
  ['p0_001', 0.001], ['p0_01', 0.01], ['p0_1', 0.1], ['p1', 1], ['p2_5', 2.5], ['p10', 10], ['p25', 25],
  ['p50', 50], ['p75', 75], ['p90', 90], ['p97_5', 97.5], ['p99', 99], ['p99_9', 99.9], ['p99_99', 99.99],
  ['p99_999', 99.999]
])

/**
 * @typedef {{ average: number, mean: number, stddev: number, min: number, max: number, totalCount: number } &
 *   Record<typeof PERCENTILES[number][0], number>} Summary
 */

/**
 * A latency histogram in microseconds: 3 significant digits (0.1% error) from 1 µs, growing on demand.
 * @returns {Histogram}
 */
export function createHistogram () {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
    autoResize: true
  })
}

/** Latencies under this many µs (65.5 ms) are counted per µs before they reach the histogram. */
const DIRECT = 1 << 16

/**
 * A latency histogram (µs) with a cheap record(): hdr-histogram-js finds each value's bucket with Math.pow and
 * Math.log2, about 1.3% of the generator's CPU per request at -c 100 (perf, bench/load.js). Values under 65.5 ms are
 * counted per µs in a plain array and go into the histogram at flush(), once per distinct value with its count: the
 * same histogram, for one bucket lookup per distinct latency instead of one per response.
 */
export class LatencyHistogram {
  constructor () {
    this.histogram = createHistogram()
    this.counts = new Uint32Array(DIRECT)
    this.pending = 0
  }

  /** @param {number} us a non-negative integer */
  record (us) {
    if (us < DIRECT) {
      this.counts[us]++
      this.pending++
    } else {
      this.histogram.recordValue(us)
    }
  }

  /** @returns {Histogram} everything recorded since the last reset */
  flush () {
    if (this.pending > 0) {
      const counts = this.counts
      for (let us = 0; us < DIRECT; us++) {
        const n = counts[us]
        if (n !== 0) {
          this.histogram.recordValueWithCount(us, n)
          counts[us] = 0
        }
      }
      this.pending = 0
    }
    return this.histogram
  }

  reset () {
    if (this.pending > 0) this.counts.fill(0)
    this.pending = 0
    this.histogram.reset()
  }
}

/**
 * @param {Histogram} histogram
 * @returns {string} compressed base64, the HdrHistogram interchange format (readable by HdrHistogram in other languages)
 */
export function encodeHistogram (histogram) {
  return hdr.encodeIntoCompressedBase64(histogram)
}

/**
 * @param {string} encoded
 * @returns {Histogram}
 */
export function decodeHistogram (encoded) {
  const h = hdr.decodeFromCompressedBase64(encoded, 32, false)
  h.autoResize = true
  return h
}

/**
 * @param {Iterable<string>} encoded
 * @returns {Histogram}
 */
export function mergeEncoded (encoded) {
  const total = createHistogram()
  for (const e of encoded) {
    const h = decodeHistogram(e)
    total.add(h)
    h.destroy()
  }
  return total
}

/**
 * Summarises a histogram in autocannon's shape, scaling recorded values (µs) to the reported unit.
 * @param {Histogram} h
 * @param {number} [scale] divide recorded values by this (1000: µs to ms)
 * @returns {Summary}
 */
export function summarize (h, scale = 1000) {
  const empty = h.totalCount === 0
  const round = (/** @type {number} */ v) => Math.round((v / scale) * 1000) / 1000
  /** @type {Record<string, number>} */
  const out = {
    average: empty ? 0 : round(h.mean),
    mean: empty ? 0 : round(h.mean),
    stddev: empty ? 0 : round(h.stdDeviation),
    min: empty ? 0 : round(h.minNonZeroValue),
    max: empty ? 0 : round(h.maxValue)
  }
  for (const [key, p] of PERCENTILES) out[key] = empty ? 0 : round(h.getValueAtPercentile(p))
  out.totalCount = h.totalCount
  return /** @type {Summary} */ (out)
}

/**
 * The same summary over a small list of plain samples (requests or bytes per second), exact by nearest rank.
 * @param {number[]} values
 * @returns {Summary}
 */
export function summarizeSamples (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const n = sorted.length
  const mean = n === 0 ? 0 : sorted.reduce((a, b) => a + b, 0) / n
  const variance = n === 0 ? 0 : sorted.reduce((a, v) => a + (v - mean) ** 2, 0) / n
  const round = (/** @type {number} */ v) => Math.round(v * 100) / 100
  /** @type {Record<string, number>} */
  const out = {
    average: round(mean),
    mean: round(mean),
    stddev: round(Math.sqrt(variance)),
    min: n === 0 ? 0 : round(sorted[0]),
    max: n === 0 ? 0 : round(sorted[n - 1])
  }
  for (const [key, p] of PERCENTILES) {
    out[key] = n === 0 ? 0 : round(sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))])
  }
  out.totalCount = n
  return /** @type {Summary} */ (out)
}
