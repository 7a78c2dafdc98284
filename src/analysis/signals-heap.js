// Whether the heap grows under load: the trend of what survives garbage collection, per serving process and combined.
import { linearFit, slopeT } from '../stats.js'

/** @typedef {import('./run-data.js').ThreadRecord['samples'][number]} Sample */

/**
 * @typedef {object} HeapTrend
 * @property {'major-gc' | 'floor'} basis what was fitted: the heap after each full collection, or its floor
 * @property {number} points how many values were fitted
 * @property {number} slope bytes per second
 * @property {number} r2
 * @property {number} t slope ÷ its standard error
 * @property {number} start bytes at the start of the window
 * @property {number} growth bytes gained over the window
 * @property {number} seconds
 * @property {number} fullCollections full (mark-compact) collections in the window
 * @property {number | null} rise what the load left alive: the heap after the full collection the probe ran just after
 *   the load minus that just before it; in runs without those, the heap after the last full collection in the window
 *   minus after the first (null with fewer than two)
 * @property {boolean} settled whether `rise` comes from the probe's collections at both ends of the load
 * @property {number | null} [released] how much of the heap at the load's end full collections in the seconds after it,
 *   with no load on, found let go (null: not looked at — the load left too little, or a run recorded before)
 */

/**
 * The trend of what survives garbage collection. Best evidence: the heap left right after each full (mark-compact)
 * collection — old-generation garbage is gone then, so only live data remains. With fewer than three full collections
 * in the window, the heap's floor (its lowest point in each quarter second, after the scavenges) is fitted instead,
 * with how much the heap after the last full collection exceeds that after the first: that floor also rises with
 * old-generation garbage not yet collected, so the rules ask more of it.
 * @param {Sample[]} samples
 * @param {number} start
 * @param {{ start?: number, end?: number, later?: number }} [settled] the heap after the probe's full collections around
 *   the load, and seconds after it
 * @returns {HeapTrend | null}
 */
export function heapTrend (samples, start, settled = {}) {
  const afterMajor = samples.filter(s => (s.gc.byKind?.['mark-compact']?.count ?? 0) > 0)
  if (afterMajor.length >= 3) {
    return fitTrend(afterMajor.map(s => (s.time - start) / 1000), afterMajor.map(s => s.memory.heapUsed), 'major-gc', samples, afterMajor, settled)
  }
  /** @type {Map<number, number>} */
  const floor = new Map()
  for (const s of samples) {
    const bucket = Math.floor((s.time - start) / FLOOR_BUCKET)
    const v = s.memory.heapUsed
    const low = floor.get(bucket)
    if (low === undefined || v < low) floor.set(bucket, v)
  }
  if (floor.size < 3) return null
  return fitTrend([...floor.keys()].map(x => (x + 0.5) * FLOOR_BUCKET / 1000), [...floor.values()], 'floor', samples, afterMajor, settled)
}

const FLOOR_BUCKET = 250

/**
 * @param {number[]} xs seconds into the window
 * @param {number[]} ys bytes
 * @param {HeapTrend['basis']} basis
 * @param {Sample[]} samples
 * @param {Sample[]} afterMajor samples that saw a full collection
 * @param {{ start?: number, end?: number, later?: number }} settled
 * @returns {HeapTrend}
 */
function fitTrend (xs, ys, basis, samples, afterMajor, settled) {
  const fit = linearFit(xs, ys)
  const seconds = samples.length > 1 ? (samples[samples.length - 1].time - samples[0].time) / 1000 : 0
  const isSettled = settled.start !== undefined && settled.end !== undefined
  return {
    basis,
    points: xs.length,
    fullCollections: afterMajor.length,
    rise: isSettled
      ? /** @type {number} */ (settled.end) - /** @type {number} */ (settled.start)
      : afterMajor.length >= 2 ? afterMajor[afterMajor.length - 1].memory.heapUsed - afterMajor[0].memory.heapUsed : null,
    settled: isSettled,
    released: isSettled && settled.later !== undefined ? /** @type {number} */ (settled.end) - settled.later : null,
    slope: fit.slope,
    r2: fit.r2,
    t: slopeT(fit),
    start: Math.min(...ys.slice(0, 2)),
    growth: fit.slope * seconds,
    seconds
  }
}

/**
 * Serving processes leak together or not at all (cluster workers run the same code): add their slopes, keep the
 * weakest evidence.
 * @param {HeapTrend[]} trends
 * @returns {HeapTrend | null}
 */
export function combineTrends (trends) {
  if (trends.length === 0) return null
  if (trends.length === 1) return trends[0]
  const rises = trends.map(t => t.rise)
  const released = trends.map(t => t.released ?? null)
  return {
    basis: trends.every(t => t.basis === 'major-gc') ? 'major-gc' : 'floor',
    settled: trends.every(t => t.settled),
    fullCollections: Math.min(...trends.map(t => t.fullCollections)),
    rise: rises.every(r => r !== null) ? rises.reduce((a, r) => a + /** @type {number} */ (r), 0) : null,
    released: released.every(r => r !== null) ? released.reduce((a, r) => a + /** @type {number} */ (r), 0) : null,
    points: Math.min(...trends.map(t => t.points)),
    slope: trends.reduce((a, t) => a + t.slope, 0),
    r2: Math.min(...trends.map(t => t.r2)),
    t: Math.min(...trends.map(t => t.t)),
    start: trends.reduce((a, t) => a + t.start, 0),
    growth: trends.reduce((a, t) => a + t.growth, 0),
    seconds: Math.max(...trends.map(t => t.seconds))
  }
}
