// The load generator's per-second figures (requests, errors, latency percentiles from its histograms) on the grid of
// seconds.
import { mergeEncoded } from '../../load/histogram.js'
import { num, round } from './series-grid.js'

/** @typedef {import('./series-grid.js').Values} Values */
/** @typedef {import('./series-grid.js').Grid} Grid */

/**
 * The load generator's per-second bins, placed on the grid of seconds.
 * @param {import('../../load/recorder.js').Bin[]} bins
 * @param {Grid} g
 * @returns {NonNullable<import('./series.js').RunSeries['load']>}
 */
export function loadSeries (bins, g) {
  const empty = () => /** @type {Values} */ (new Array(g.n).fill(null))
  const out = { rps: empty(), errors: empty(), p50: empty(), p90: empty(), p99: empty(), max: empty() }
  /** @type {Map<number, import('../../load/recorder.js').Bin[]>} */
  const byBucket = new Map()
  for (const bin of bins) {
    if (!(bin.duration > 0)) continue
    const i = Math.floor((bin.start + bin.duration / 2 - g.origin) / g.step)
    if (i < 0 || i >= g.n) continue
    const list = byBucket.get(i)
    if (list) list.push(bin)
    else byBucket.set(i, [bin])
  }
  for (const [i, list] of byBucket) {
    const ms = list.reduce((a, b) => a + b.duration, 0)
    const requests = list.reduce((a, b) => a + num(b.requests), 0)
    out.rps[i] = round((requests * 1000) / ms, 1)
    out.errors[i] = round((list.reduce((a, b) => a + num(b.errors), 0) * 1000) / ms, 1)
    if (requests === 0) continue
    try {
      const h = mergeEncoded(list.filter(b => num(b.requests) > 0 && typeof b.histogram === 'string').map(b => b.histogram))
      out.p50[i] = round(h.getValueAtPercentile(50) / 1000, 3)
      out.p90[i] = round(h.getValueAtPercentile(90) / 1000, 3)
      out.p99[i] = round(h.getValueAtPercentile(99) / 1000, 3)
      out.max[i] = round(h.maxValue / 1000, 3)
      h.destroy()
    } catch {}
  }
  return out
}
