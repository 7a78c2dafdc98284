// How doctor judges an experiment's phases: a candidate's against the baseline phases run around it (compare's noise
// test on the phases' seconds pooled, each candidate phase beyond both baselines beside it, and the phases' figures
// apart beyond the spread between starts), when to stop going up the ladder, and which value to recommend. What to try
// is experiments.js; docs/diagnosis.md says why.
import { compareResults } from '../load/compare.js'
import { mergeEncoded, summarize } from '../load/histogram.js'
import { pooledT } from '../stats.js'

/** @typedef {import('./experiments.js').TriedValue} TriedValue */
/** @typedef {import('./experiments.js').Experiment} Experiment */

/** A value whose score is within this of the best is "most of the gain". */
const MOST_OF_GAIN = 0.8
/** Two-sided level of the test between phases. */
const PHASES_ALPHA = 0.05

/**
 * Judges a candidate's phases against the baseline phases run around them. Three tests, all required: compare's
 * (Welch's t on the per-second figures, or a change many times the steadier arm's spread) on each arm's seconds pooled;
 * every candidate phase beyond both baseline phases beside it; and the phases' own figures apart by more than starts
 * of the server differ (a t-test on one figure a phase). A fresh process's speed varies from one start to the next more
 * than its seconds do, which the first test cannot see; and where it varies by a fifth, two candidate phases fall
 * beyond their three baselines by chance about two times in fifteen, which the second cannot rule out.
 * @param {import('../run/phases/experiment-phase.js').PhaseRecord[]} phases in the order run: baseline, candidate, baseline…
 * @param {string} value
 * @param {boolean} fixedRate the load sent at a fixed rate: the gain is in latency, not in requests/s
 * @returns {TriedValue}
 */
export function judgeValue (phases, value, fixedRate) {
  const failed = phases.find(p => p.failed !== null)?.failed ?? null
  const a = phases.filter(p => p.arm === 'baseline' && p.result !== null)
  const b = phases.filter(p => p.arm === 'candidate' && p.result !== null)
  const none = { baseline: 0, candidate: 0, change: 0, p: NaN, verdict: /** @type {const} */ ('unknown') }
  if (failed !== null || a.length === 0 || b.length === 0) {
    return { value, verdict: 'failed', failed: failed ?? 'no phase measured', phases: b.length, requestsPerSecond: none, p99Ms: none, gcShare: null, rssBytes: null, heapBytes: null, score: 0 }
  }
  const rows = compareResults(pooled(a), pooled(b))
  const figure = (/** @type {string} */ name) => {
    const r = /** @type {import('../load/compare.js').Comparison} */ (rows.find(x => x.figure === name))
    return { baseline: r.a, candidate: r.b, change: r.change, p: r.p, verdict: r.verdict }
  }
  const rps = figure('Requests/s')
  const p99 = figure('Latency p99')
  /** @type {TriedValue['verdict']} */
  let verdict = 'same'
  // The phases' own figures must agree with the pooled seconds: each candidate beyond its neighbours, and apart.
  const bracket = bracketed(phases, fixedRate)
  const phased = bracket === phasesApart(a, b, fixedRate) ? bracket : 'mixed'
  if (((rps.verdict === 'better' && p99.verdict !== 'worse') || (p99.verdict === 'better' && rps.verdict !== 'worse')) && phased === 'better') verdict = 'better'
  else if ((rps.verdict === 'worse' || p99.verdict === 'worse') && phased === 'worse') verdict = 'worse'
  else if (rps.verdict === 'unknown' && p99.verdict === 'unknown') verdict = 'unknown'
  const gauge = (/** @type {(g: import('../run/phases/gauge-readings.js').Gauge) => number} */ pick) => {
    const ga = a.flatMap(p => p.gauge ? [pick(p.gauge)] : [])
    const gb = b.flatMap(p => p.gauge ? [pick(p.gauge)] : [])
    return ga.length > 0 && gb.length > 0 ? { baseline: meanOf(ga), candidate: meanOf(gb) } : null
  }
  const score = verdict !== 'better' ? 0 : fixedRate ? -p99.change : rps.change
  return { value, verdict, failed: null, phases: b.length, requestsPerSecond: rps, p99Ms: p99, gcShare: gauge(g => g.gcShare), rssBytes: gauge(g => g.rss), heapBytes: gauge(g => g.heapUsed), score }
}

/**
 * Whether the candidate's phases did better or worse than the baseline's, each phase one figure (requests/s under a
 * closed-loop load, p99 at a fixed rate), beyond the spread between phases of either arm.
 * @param {import('../run/phases/experiment-phase.js').PhaseRecord[]} a baseline phases
 * @param {import('../run/phases/experiment-phase.js').PhaseRecord[]} b candidate phases
 * @param {boolean} fixedRate
 * @returns {'better' | 'worse' | 'same'}
 */
function phasesApart (a, b, fixedRate) {
  const { t, p } = pooledT(a.map(x => phaseFigure(x, fixedRate)), b.map(x => phaseFigure(x, fixedRate)))
  if (!(p < PHASES_ALPHA)) return 'same'
  return t > 0 ? 'better' : 'worse'
}

/**
 * Whether every candidate phase did better (or every one worse) than each baseline phase run just before and after it:
 * requests/s under a closed-loop load, p99 at a fixed rate.
 * @param {import('../run/phases/experiment-phase.js').PhaseRecord[]} phases
 * @param {boolean} fixedRate
 * @returns {'better' | 'worse' | 'mixed'}
 */
function bracketed (phases, fixedRate) {
  const good = (/** @type {import('../run/phases/experiment-phase.js').PhaseRecord} */ p) => phaseFigure(p, fixedRate)
  let better = true
  let worse = true
  phases.forEach((p, k) => {
    if (p.arm !== 'candidate') return
    for (const n of [phases[k - 1], phases[k + 1]]) {
      if (!n || n.arm !== 'baseline' || n.result === null) continue
      if (!(good(p) > good(n))) better = false
      if (!(good(p) < good(n))) worse = false
    }
  })
  return better ? 'better' : worse ? 'worse' : 'mixed'
}

/**
 * A phase's figure, higher better: requests/s under a closed-loop load, p99 (negated) at a fixed rate.
 * @param {import('../run/phases/experiment-phase.js').PhaseRecord} p
 * @param {boolean} fixedRate
 */
function phaseFigure (p, fixedRate) {
  const r = /** @type {import('../load/result.js').LoadResult} */ (p.result)
  return fixedRate ? -r.latency.p99 : r.requests.mean
}

/**
 * Whether to try the next value of the ladder, after this one: not after a failure or a loss, and not once the
 * gains stopped growing (a value no better than the best before it).
 * @param {TriedValue[]} tried
 * @returns {Experiment['stopped'] | null} why to stop, or null to go on
 */
export function stopAfter (tried) {
  const last = /** @type {TriedValue} */ (tried.at(-1))
  if (last.verdict === 'failed') return 'failed'
  if (last.verdict === 'worse') return 'worse'
  const before = tried.slice(0, -1).filter(t => t.verdict === 'better')
  if (before.length === 0) return null
  const best = Math.max(...before.map(t => t.score))
  return last.verdict === 'better' && last.score > best * 1.1 + 0.02 ? null : 'plateau'
}

/**
 * The value to recommend: the smallest that gave most of the best gain; null when none gained beyond noise.
 * @param {TriedValue[]} tried
 */
export function chooseValue (tried) {
  const better = tried.filter(t => t.verdict === 'better')
  if (better.length === 0) return null
  const best = Math.max(...better.map(t => t.score))
  const enough = better.filter(t => t.score >= MOST_OF_GAIN * best)
  return enough.sort((x, y) => (Number(x.value) || 0) - (Number(y.value) || 0))[0].value
}

/**
 * The experiment's verdict from what was tried.
 * @param {TriedValue[]} tried
 * @param {string | null} chosen
 * @returns {Experiment['verdict']}
 */
export function experimentVerdict (tried, chosen) {
  if (chosen !== null) return 'helps'
  if (tried.length === 0) return 'not-run'
  if (tried.every(t => t.verdict === 'failed')) return 'failed'
  if (tried.some(t => t.verdict === 'worse')) return 'worse'
  return 'no-gain'
}

/**
 * Several phases' loads as one result for compareResults: their seconds together, their latencies merged.
 * @param {import('../run/phases/experiment-phase.js').PhaseRecord[]} phases
 * @returns {import('../load/result.js').LoadResult}
 */
function pooled (phases) {
  const results = /** @type {import('../load/result.js').LoadResult[]} */ (phases.map(p => p.result))
  const series = results.flatMap(r => r.hotpath.shard.series)
  const h = mergeEncoded(series.map(bin => bin.histogram))
  const latency = summarize(h)
  h.destroy()
  const duration = results.reduce((n, r) => n + r.duration, 0)
  const total = results.reduce((n, r) => n + r.requests.total, 0)
  const bytes = results.reduce((n, r) => n + r.throughput.total, 0)
  return /** @type {any} */ ({
    requests: { mean: duration > 0 ? total / duration : 0, total, sent: results.reduce((n, r) => n + r.requests.sent, 0) },
    latency,
    throughput: { mean: duration > 0 ? bytes / duration : 0 },
    errors: results.reduce((n, r) => n + r.errors, 0),
    hotpath: { shard: { series } }
  })
}

/** @param {number[]} xs */
function meanOf (xs) {
  return xs.reduce((a, b) => a + b, 0) / xs.length
}
