// The grids a report's charts share, aligned on the start of the load so every chart shares its time axis: buckets of
// one step, and each sample's interval spread over the buckets it overlaps. With the number helpers of the series.

/** @typedef {import('../../analysis/run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {ThreadRecord['samples'][number]} Sample */
/** @typedef {(number | null)[]} Values null where the thread was not sampled */

/**
 * @typedef {object} Grid
 * @property {number} origin epoch ms where bucket 0 starts (a whole number of buckets before t0)
 * @property {number} step ms
 * @property {number} n buckets
 * @property {number[]} x each bucket's middle, seconds from t0
 */

/**
 * @param {number} t0
 * @param {number} first
 * @param {number} last
 * @param {number} step
 * @returns {Grid}
 */
export function grid (t0, first, last, step) {
  const before = Math.max(0, Math.ceil((t0 - first) / step))
  const origin = t0 - before * step
  const n = Math.max(1, Math.ceil((last - origin) / step))
  const x = []
  // Each bucket is drawn at the middle of the part of it the run covers, so the first and last (partial) buckets
  // stay inside the run's time range and every chart spans the same range.
  for (let i = 0; i < n; i++) {
    const a = Math.max(first, origin + i * step)
    const b = Math.min(last, origin + (i + 1) * step)
    x.push(round(((a + b) / 2 - t0) / 1000, 3))
  }
  return { origin, step, n, x }
}

/**
 * Spreads each sample's interval over the buckets it overlaps and calls `add(bucket, sample, overlapMs)`.
 * @param {Sample[]} samples
 * @param {Grid} g
 * @param {(bucket: number, sample: Sample, overlap: number) => void} add
 */
export function overlaps (samples, g, add) {
  for (const s of samples) {
    const from = s.time - Math.max(0, s.interval)
    const to = s.time
    const i0 = Math.max(0, Math.floor((from - g.origin) / g.step))
    const i1 = Math.min(g.n - 1, Math.floor((to - g.origin) / g.step))
    for (let i = i0; i <= i1; i++) {
      const a = Math.max(from, g.origin + i * g.step)
      const b = Math.min(to, g.origin + (i + 1) * g.step)
      // a sample of zero length (the first one) still counts where it falls
      if (b > a || (s.interval <= 0 && i0 === i1)) add(i, s, Math.max(0, b - a))
    }
  }
}

/**
 * A finite number, or 0.
 * @param {unknown} v
 */
export function num (v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0
}

/** @param {number[]} values */
export function median (values) {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[(sorted.length - 1) >> 1]
}

/**
 * @param {number} v
 * @param {number} digits
 */
export function round (v, digits) {
  const f = 10 ** digits
  return Math.round(v * f) / f
}
