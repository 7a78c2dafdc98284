// doctor's experiments, as facts: which runtime settings a verdict calls for, the values worth trying, how a
// candidate's phases are judged against the baseline's (compare's noise test, on the phases' seconds pooled), and
// which value to recommend. The phases themselves are run by src/run/experiments.js; docs/diagnosis.md says how.
import { freemem, totalmem } from 'node:os'
import { compareResults } from '../load/compare.js'
import { mergeEncoded, summarize } from '../load/histogram.js'
import { dominantGc } from './rules.js'
import { THRESHOLDS } from './thresholds.js'

const MB = 1048576

/**
 * A setting to try and why: `flag` settings go in NODE_OPTIONS as --name=value, `env` ones in the environment; `try`
 * is the user's own variant (--try), node flags and NAME=value words together.
 * @typedef {object} ExperimentPlan
 * @property {'max-semi-space-size' | 'max-old-space-size' | 'UV_THREADPOOL_SIZE' | 'try'} setting
 * @property {'flag' | 'env' | 'try'} kind
 * @property {'scavenges' | 'heap-near-limit' | 'thread-pool' | 'try'} why
 * @property {string | null} current the value in effect in the diagnosed run, as far as doctor knows (null: V8's
 *   own, read from the baseline phase where it can be)
 * @property {string[]} ladder candidate values, smallest first (semi-space: rebuilt once the baseline shows the
 *   young generation's size)
 * @property {{ heapUsed?: number, heapLimit?: number, share?: number, site?: string, resource?: string }} [facts]
 *   what asked for it
 */

/**
 * One value tried, with its figures against the baseline's.
 * @typedef {object} TriedValue
 * @property {string} value
 * @property {'better' | 'worse' | 'same' | 'unknown' | 'failed'} verdict
 * @property {string | null} failed why its phases measured nothing
 * @property {number} phases candidate phases measured (and as many baseline phases around them)
 * @property {Figure} requestsPerSecond
 * @property {Figure} p99Ms
 * @property {{ baseline: number, candidate: number } | null} gcShare GC pause time ÷ time, from the target's own gauge
 * @property {{ baseline: number, candidate: number } | null} rssBytes highest RSS of a phase, mean over the phases
 * @property {{ baseline: number, candidate: number } | null} heapBytes highest heap used of a phase, mean over the phases
 * @property {number} score the gain it was chosen by: relative req/s gain (closed loop) or p99 cut (at a fixed rate)
 */

/**
 * @typedef {{ baseline: number, candidate: number, change: number, p: number, verdict: 'better' | 'worse' | 'same' | 'unknown' }} Figure
 */

/**
 * An experiment's outcome, as the JSON carries it in `experiments`.
 * @typedef {object} Experiment
 * @property {ExperimentPlan['setting']} setting
 * @property {ExperimentPlan['kind']} kind
 * @property {ExperimentPlan['why']} why
 * @property {string | null} current
 * @property {TriedValue[]} tried in the order tried
 * @property {string | null} chosen the smallest value that gave most of the gain (80% of the best), or null
 * @property {'helps' | 'no-gain' | 'worse' | 'failed' | 'not-run'} verdict
 * @property {'plateau' | 'worse' | 'ladder-end' | 'budget' | 'interrupted' | 'failed' | 'no-command'} stopped why no more values were tried
 * @property {number} seconds the experiment's wall time
 * @property {number} phaseSeconds each phase's measured load, after its warm-up
 * @property {ExperimentPlan['facts']} [facts]
 */

/** Thread-pool work as the wait tracer names it (src/sampling/wait-resources.js). */
const POOL_WAITS = new Set(['thread pool', 'fs', 'dns'])
/** A value whose score is within this of the best is "most of the gain". */
const MOST_OF_GAIN = 0.8

/**
 * The settings a diagnosis calls for, each only when its signal does.
 * @param {import('./rules.js').Category | 'load-failed' | 'target-failed'} category
 * @param {import('./signals.js').Signals} s
 * @param {NodeJS.ProcessEnv} env the environment the target was started in
 * @returns {ExperimentPlan[]}
 */
export function plannedExperiments (category, s, env) {
  /** @type {ExperimentPlan[]} */
  const out = []
  if (category === 'load-failed' || category === 'target-failed' || category === 'insufficient-data') return out
  const m = s.memory
  if ((category === 'gc' || category === 'memory-leak') && m.heapLimit > 0 && m.heapUsed > 0.7 * m.heapLimit) {
    const limitMb = Math.round(m.heapLimit / MB)
    // Never past what the machine has: a limit above its memory trades a heap error for the OOM killer.
    const room = Math.min(totalmem() * 0.75, freemem() + m.heapLimit) / MB
    const ladder = [2, 4].map(k => Math.round((limitMb * k) / 64) * 64).filter(v => v <= room)
    if (ladder.length > 0) out.push({ setting: 'max-old-space-size', kind: 'flag', why: 'heap-near-limit', current: String(limitMb), ladder: ladder.map(String), facts: { heapUsed: m.heapUsed, heapLimit: m.heapLimit } })
  }
  // After the heap's limit, when both are called for: a bigger young generation on a heap near its limit can only
  // bring the limit nearer.
  if (category === 'gc' && dominantGc(s) === 'scavenge') {
    const current = flagValue(env.NODE_OPTIONS, 'max-semi-space-size')
    out.push({ setting: 'max-semi-space-size', kind: 'flag', why: 'scavenges', current, ladder: semiSpaceLadder(Number(current ?? 0)) })
  }
  const pool = s.waits.sites.find(w => POOL_WAITS.has(w.resource.type) && w.share >= THRESHOLDS.waitShare)
  if (pool) {
    const current = Number(env.UV_THREADPOOL_SIZE) || 4
    out.push({
      setting: 'UV_THREADPOOL_SIZE',
      kind: 'env',
      why: 'thread-pool',
      current: String(current),
      ladder: [8, 16, 32, 64].filter(v => v > current).slice(0, 3).map(String),
      facts: { share: pool.share, site: `${pool.site.file}:${pool.site.line}`, resource: pool.resource.name }
    })
  }
  return out
}

/**
 * The semi-space sizes worth trying above the one in effect (MB): Node 20 and 22 start at 16, Node 24 at 64 on a
 * machine with memory to spare, so the ladder starts above what the baseline's young generation grew to.
 * @param {number} currentMb 0 when not known yet
 */
export function semiSpaceLadder (currentMb) {
  return [16, 32, 64, 128, 256].filter(v => v > currentMb).slice(0, currentMb > 0 ? 3 : 4).map(String)
}

/**
 * `--name=value` or `--name value` in a NODE_OPTIONS string.
 * @param {string | undefined} options
 * @param {string} name
 */
function flagValue (options, name) {
  const m = new RegExp(`--${name}[= ](\\d+)`).exec(options ?? '')
  return m ? m[1] : null
}

/**
 * The user's --try: node flags (words that start with '-') and NAME=value words; null when a word is neither.
 * @param {string} text
 * @returns {{ flags: string[], env: Record<string, string> } | { error: string }}
 */
export function parseTry (text) {
  /** @type {string[]} */
  const flags = []
  /** @type {Record<string, string>} */
  const env = {}
  const words = text.trim().split(/\s+/).filter(Boolean)
  if (words.length === 0) return { error: '--try needs node flags or NAME=value (e.g. --try \'--max-semi-space-size=64\')' }
  for (const w of words) {
    const named = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(w)
    if (w.startsWith('-')) flags.push(w)
    else if (named) env[named[1]] = named[2]
    else return { error: `--try: '${w}' is neither a node flag (--name=value) nor NAME=value` }
  }
  if (flags.some(f => /^--(import|require|r)\b|^-r$/.test(f))) return { error: '--try takes settings, not modules to preload' }
  return { flags, env }
}

/**
 * How a plan's value starts the target.
 * @param {ExperimentPlan} plan
 * @param {string} value
 * @returns {{ flags: string[], env: Record<string, string> }}
 */
export function variantOf (plan, value) {
  if (plan.kind === 'flag') return { flags: [`--${plan.setting}=${value}`], env: {} }
  if (plan.kind === 'env') return { flags: [], env: { [plan.setting]: value } }
  const parsed = parseTry(value)
  return 'error' in parsed ? { flags: [], env: {} } : parsed
}

/**
 * Judges a candidate's phases against the baseline phases run around them. Two tests, both required: compare's (Welch's
 * t on the per-second figures, or a change many times the steadier arm's spread) on each arm's seconds pooled; and
 * every candidate phase beyond both baseline phases beside it — a fresh process's speed varies from one start to the
 * next more than its seconds do, which the first test cannot see.
 * @param {import('../run/experiments.js').PhaseRecord[]} phases in the order run: baseline, candidate, baseline…
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
  const bracket = bracketed(phases, fixedRate)
  if (((rps.verdict === 'better' && p99.verdict !== 'worse') || (p99.verdict === 'better' && rps.verdict !== 'worse')) && bracket === 'better') verdict = 'better'
  else if ((rps.verdict === 'worse' || p99.verdict === 'worse') && bracket === 'worse') verdict = 'worse'
  else if (rps.verdict === 'unknown' && p99.verdict === 'unknown') verdict = 'unknown'
  const gauge = (/** @type {(g: import('../run/experiments.js').Gauge) => number} */ pick) => {
    const ga = a.flatMap(p => p.gauge ? [pick(p.gauge)] : [])
    const gb = b.flatMap(p => p.gauge ? [pick(p.gauge)] : [])
    return ga.length > 0 && gb.length > 0 ? { baseline: meanOf(ga), candidate: meanOf(gb) } : null
  }
  const score = verdict !== 'better' ? 0 : fixedRate ? -p99.change : rps.change
  return { value, verdict, failed: null, phases: b.length, requestsPerSecond: rps, p99Ms: p99, gcShare: gauge(g => g.gcShare), rssBytes: gauge(g => g.rss), heapBytes: gauge(g => g.heapUsed), score }
}

/**
 * Whether every candidate phase did better (or every one worse) than each baseline phase run just before and after it:
 * requests/s under a closed-loop load, p99 at a fixed rate.
 * @param {import('../run/experiments.js').PhaseRecord[]} phases
 * @param {boolean} fixedRate
 * @returns {'better' | 'worse' | 'mixed'}
 */
function bracketed (phases, fixedRate) {
  const good = (/** @type {import('../run/experiments.js').PhaseRecord} */ p) => {
    const r = /** @type {import('../load/result.js').LoadResult} */ (p.result)
    return fixedRate ? -r.latency.p99 : r.requests.mean
  }
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
 * @param {import('../run/experiments.js').PhaseRecord[]} phases
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
