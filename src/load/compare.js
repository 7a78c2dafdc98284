// Two load results compared figure by figure, each change judged against the noise of the runs' seconds. The same
// thing one layer up, as the command: src/cli/compare.js.
import { mean, variance, welch } from '../stats.js'
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
 * @property {number} [times] when the change was judged by its size: how many times the steadier run's spread it is
 */

/** A change smaller than this is reported as the same, however significant: nobody acts on 1%. */
const MIN_EFFECT = 0.02
const ALPHA = 0.05
/**
 * A change this many times the spread of the steadier run's seconds, with every second of one run beyond every second
 * of the other, is no noise whatever the t-test says: a run whose tail flips between 4 ms and 99 ms from second to
 * second has a large variance, which makes its t-test weak, but none of its seconds was like the steady run's.
 */
const CLEAR_TIMES = 5
/** Seconds each run needs for that judgement: with fewer, one run's seconds lie beyond the other's too often by chance. */
const CLEAR_SECONDS = 3
/** Per-second figures never repeat closer than this, relative to their level (histogram precision, timer jitter). */
const MIN_SPREAD = 0.01

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
  const direction = (change > 0) === (good === 'higher') ? 'better' : 'worse'
  const times = Math.abs(change) < MIN_EFFECT ? NaN : timesTheSpread(a, b, samplesA, samplesB)
  /** @type {Comparison['verdict']} */
  let verdict
  if (Math.abs(change) < MIN_EFFECT) verdict = 'same'
  else if (times >= CLEAR_TIMES) verdict = direction
  else if (Number.isNaN(p)) verdict = 'unknown'
  else if (p >= ALPHA) verdict = 'same'
  else verdict = direction
  return { figure, unit, a, b, change, p, verdict, ...(times >= CLEAR_TIMES ? { times: Math.round(times * 10) / 10 } : {}) }
}

/**
 * How many times the spread of the steadier run's seconds the change from a to b is, when every second of one run lies
 * beyond every second of the other, on the side the change goes; NaN otherwise (or with too few seconds).
 * @param {number} a
 * @param {number} b
 * @param {number[]} samplesA
 * @param {number[]} samplesB
 */
function timesTheSpread (a, b, samplesA, samplesB) {
  if (samplesA.length < CLEAR_SECONDS || samplesB.length < CLEAR_SECONDS) return NaN
  const up = Math.max(...samplesA) < Math.min(...samplesB)
  const down = Math.min(...samplesA) > Math.max(...samplesB)
  if (!(up && b > a) && !(down && b < a)) return NaN
  const spread = (/** @type {number[]} */ xs) => Math.max(Math.sqrt(variance(xs)), MIN_SPREAD * Math.abs(mean(xs)))
  const noise = Math.min(spread(samplesA), spread(samplesB))
  return noise > 0 ? Math.abs(b - a) / noise : Infinity
}

/**
 * @typedef {object} SettingDifference
 * @property {string} setting
 * @property {string | number} before
 * @property {string | number} after
 */

/**
 * The load settings in which two runs differ: their figures then differ for that reason too, whatever the server did.
 * The port is not compared (a server started by hotpath listens on a new one each run), nor the Host header.
 * @param {LoadResult} a
 * @param {LoadResult} b
 * @returns {SettingDifference[]}
 */
export function settingDifferences (a, b) {
  const sa = settingsOf(a)
  const sb = settingsOf(b)
  /** @type {SettingDifference[]} */
  const out = []
  for (const key of /** @type {(keyof typeof sa)[]} */ (Object.keys(sa))) {
    const before = sa[key]
    const after = sb[key]
    if (before === null || after === null || before === after) continue
    out.push({ setting: key, before, after })
  }
  return out
}

/**
 * What shaped a run's load, each as it reads in a message; null where the result does not say.
 * @param {LoadResult} r
 */
function settingsOf (r) {
  const o = r.hotpath.options
  // Results that do not record the asked duration: the measured one, to the second, unless --amount bounded the run.
  const duration = o.duration !== undefined
    ? (o.duration > 0 ? `${o.duration} s` : null)
    : o.amount > 0 ? null : `${Math.round(r.duration)} s`
  return {
    connections: r.connections,
    pipelining: r.pipelining,
    workers: r.workers,
    rate: o.rate > 0 ? `${o.rate} req/s` : 'closed loop',
    duration,
    amount: o.amount > 0 ? o.amount : 'none',
    warmup: `${o.warmup ?? 0} s`,
    method: o.method,
    url: portless(r.url) + (r.socketPath ? ` (socket ${r.socketPath})` : ''),
    requests: o.requestsHash ?? null
  }
}

/** @param {string} url */
function portless (url) {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.hostname}${u.pathname}${u.search}`
  } catch {
    return url
  }
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
