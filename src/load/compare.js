import { welch } from '../analysis/stats.js'
import { decodeHistogram } from './histogram.js'

/** @typedef {import('./result.js').LoadResult} LoadResult */

/**
 * @typedef {object} Comparison
 * @property {string} figure
 * @property {'ms' | 'req/s' | 'B/s' | 'count'} unit
 * @property {number} a
 * @property {number} b
 * @property {number} change relative change from a to b (0.1 = +10%)
 * @property {number} p two-sided p-value of the per-second samples (NaN when there are too few)
 * @property {'better' | 'worse' | 'same' | 'unknown'} verdict
 */

/** A change smaller than this is reported as the same, however significant: nobody acts on 1%. */
const MIN_EFFECT = 0.02
const ALPHA = 0.05

/** @type {{ figure: string, key: 'p50' | 'p90' | 'p99' | 'p99_9' | 'max' | 'mean' }[]} */
const LATENCY_FIGURES = [
  { figure: 'Latency p50', key: 'p50' },
  { figure: 'Latency p90', key: 'p90' },
  { figure: 'Latency p99', key: 'p99' },
  { figure: 'Latency p99.9', key: 'p99_9' },
  { figure: 'Latency max', key: 'max' },
  { figure: 'Latency mean', key: 'mean' }
]

/**
 * Compares two load results figure by figure. Noise is judged from second-to-second variation within each run: each
 * full second gives one sample of the rate and of each latency percentile (from that second's HDR histogram), and
 * Welch's t-test says whether the two runs' seconds differ more than chance would explain.
 * @param {LoadResult} a
 * @param {LoadResult} b
 * @returns {Comparison[]}
 */
export function compareResults (a, b) {
  const sa = secondsOf(a)
  const sb = secondsOf(b)
  /** @type {Comparison[]} */
  const rows = [judge('Requests/s', 'req/s', a.requests.mean, b.requests.mean, sa.map(s => s.rate), sb.map(s => s.rate), 'higher')]
  for (const { figure, key } of LATENCY_FIGURES) {
    rows.push(judge(figure, 'ms', a.latency[key], b.latency[key], sa.map(s => s.latency[key]), sb.map(s => s.latency[key]), 'lower'))
  }
  rows.push(judge('Throughput', 'B/s', a.throughput.mean, b.throughput.mean, sa.map(s => s.bytes), sb.map(s => s.bytes), 'higher'))
  const errorsA = a.errors / Math.max(1, a.requests.sent)
  const errorsB = b.errors / Math.max(1, b.requests.sent)
  rows.push({
    figure: 'Errors',
    unit: 'count',
    a: a.errors,
    b: b.errors,
    change: a.errors === 0 ? (b.errors === 0 ? 0 : Infinity) : (b.errors - a.errors) / a.errors,
    p: NaN,
    verdict: errorsA === errorsB ? 'same' : errorsB > errorsA && b.errors > 0 ? 'worse' : 'better'
  })
  return rows
}

/**
 * @param {string} figure
 * @param {Comparison['unit']} unit
 * @param {number} a
 * @param {number} b
 * @param {number[]} samplesA
 * @param {number[]} samplesB
 * @param {'higher' | 'lower'} good
 * @returns {Comparison}
 */
function judge (figure, unit, a, b, samplesA, samplesB, good) {
  const change = a === 0 ? (b === 0 ? 0 : Infinity) : (b - a) / a
  const { p } = welch(samplesA, samplesB)
  /** @type {Comparison['verdict']} */
  let verdict
  if (Math.abs(change) < MIN_EFFECT) verdict = 'same'
  else if (Number.isNaN(p)) verdict = 'unknown'
  else if (p >= ALPHA) verdict = 'same'
  else verdict = (change > 0) === (good === 'higher') ? 'better' : 'worse'
  return { figure, unit, a, b, change, p, verdict }
}

/**
 * The run's full seconds as samples: request rate, byte rate and latency percentiles (ms).
 * @param {LoadResult} r
 */
function secondsOf (r) {
  return r.hotpath.shard.series.filter(bin => bin.duration >= 500 && bin.requests > 0).map((bin) => {
    const h = decodeHistogram(bin.histogram)
    const ms = (/** @type {number} */ v) => v / 1000
    const latency = {
      p50: ms(h.getValueAtPercentile(50)),
      p90: ms(h.getValueAtPercentile(90)),
      p99: ms(h.getValueAtPercentile(99)),
      p99_9: ms(h.getValueAtPercentile(99.9)),
      max: ms(h.maxValue),
      mean: ms(h.mean)
    }
    h.destroy()
    return { rate: (bin.requests * 1000) / bin.duration, bytes: (bin.bytes * 1000) / bin.duration, latency }
  })
}
