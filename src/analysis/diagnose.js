import { VERSION } from '../version.js'
import { collectCulprits } from './culprits.js'
import { heapTarget, recommend } from './recommendations.js'
import { collectEvidence } from './evidence.js'
import { decide } from './rules.js'
import { runFailure } from './run-failure.js'
import { runWarnings, sourceMapWarnings } from './run-warnings.js'
import { computeSignals } from './signals.js'
import { computeRoutes } from './route-signals.js'

/**
 * doctor's verdict as facts: categories, numbers, units, places and stable names, no sentences. The report layer
 * words it (src/report/words/diagnosis.js) into the JSON contract (docs/json.md), which the terminal and HTML reports print.
 * @typedef {object} Diagnosis
 * @property {'hotpath'} tool
 * @property {string} version
 * @property {import('./rules.js').Category | 'load-failed' | 'target-failed'} category the verdict; `load-failed` and
 *   `target-failed` say the run did not measure what was asked (see `failure`), whatever its figures say
 * @property {import('./run-warnings.js').RunWarning[]} warnings files of the run that were missing or corrupt, and
 *   what that cost: the verdict (`affects: 'verdict'`) or the culprits rest on less than was recorded
 * @property {import('./run-failure.js').RunFailure | null} failure what went wrong with the run, when it did
 * @property {{ category: import('./rules.js').Category, facts: import('./rules.js').VerdictFacts }} measured what the figures
 *   of the run say, on their own (for a failed run: until it failed), and the figures the verdict cites
 * @property {import('./evidence.js').Evidence[]} evidence
 * @property {import('./culprits.js').Culprit[]} culprits
 * @property {import('./recommendations.js').Advice[]} recommendations what to do, most useful first
 * @property {import('./experiments.js').Experiment[]} [experiments] runtime settings measured after the run (doctor
 *   adds them: src/cli/doctor.js), already reflected in `recommendations`
 * @property {import('./heap-retry.js').HeapRetry} [heapRetry] after a crash on heap exhaustion: the target loaded again
 *   with the larger heap limit the advice proposes, and what that gave (src/cli/doctor-heap-retry.js)
 * @property {import('../load/result.js').LoadResult | null} load
 * @property {true} [observed] the window watched the traffic the server got (`--observe`): no load was sent, and
 *   `traffic` says what the probe counted
 * @property {Traffic} [traffic] with `observed`: the requests the server served in the window
 * @property {import('./route-signals.js').RouteSignal[]} [routes] with `observed`: the window's figures by route, busiest first
 * @property {ProcessSummary[]} processes
 * @property {{ dir: string, command: string[], url: string, window: { start: number, end: number }, exit: { code: number | null, signal: string | null, crashed: boolean }, aborted: boolean, stderr: string[] }} run
 */

/**
 * @typedef {object} Traffic the requests an observed window counted
 * @property {number} requests finished on the observed port
 * @property {number} seconds the window's length
 * @property {number} rate requests a second
 * @property {'thin' | 'fair' | 'good'} sample what the count supports: `thin` under 30 requests (a verdict from them
 *   is a hint), `good` from 300
 */

/** Requests of an observed window under which it is a thin sample, and from which a good one. */
const THIN_TRAFFIC = 30
const GOOD_TRAFFIC = 300

/**
 * @typedef {object} ProcessSummary
 * @property {number} pid
 * @property {string} role
 * @property {boolean} serving
 * @property {number} samples samples in the load window, all threads
 * @property {import('./signals.js').ThreadSummary[]} threads
 */

/**
 * Diagnoses a recorded run. Pure: everything comes from the run directory's data, so a saved run gives the same
 * verdict when analysed again.
 * @param {import('./run-data.js').RunData} data
 * @returns {Diagnosis}
 */
export function diagnose (data) {
  const signals = computeSignals(data)
  const decided = decide(signals)
  const failure = runFailure(data, signals)
  const culprits = decided.category === 'insufficient-data' ? [] : collectCulprits(data, signals, decided.category)
  const warnings = [...runWarnings(data, decided.category), ...sourceMapWarnings(data, culprits)]
  const damaged = warnings.some(w => w.affects !== 'nothing')
  // Samples that cover too little of the load because the event logs that held them are gone are not a load too
  // short: the verdict says so, and the advice is to record the run again, not to load longer.
  const lost = warnings.filter(w => w.kind === 'events' && w.problem === 'missing').length
  const counted = lost > 0 && decided.facts.kind === 'short-coverage' ? { ...decided, facts: { ...decided.facts, logsMissing: lost } } : decided
  const rule = { ...counted, facts: { ...counted.facts, snapshots: snapshotFacts(data.run, signals) } }
  return {
    tool: 'hotpath',
    version: VERSION,
    category: failure?.category ?? rule.category,
    warnings,
    failure,
    measured: rule,
    evidence: collectEvidence(signals, rule.category),
    culprits,
    recommendations: [
      ...(failure ? failureAdvice(failure, data.run) : []),
      ...(damaged ? recordAgain(data.run) : []),
      ...(failed(failure, rule.category) || lost > 0 ? [] : recommend(rule.category, signals, culprits, data.run))
    ],
    load: data.run.load,
    ...(data.run.observed ? observedOf(data, signals, culprits) : {}),
    processes: processesOf(signals),
    run: {
      dir: data.dir,
      command: data.run.command,
      url: data.run.url,
      window: data.run.loadWindow,
      exit: data.run.exit,
      aborted: data.run.aborted,
      stderr: data.run.stderr
    }
  }
}

/**
 * Whether the heap snapshots after the load, asked for by what it left alive or by a cost per request that rose, are
 * still to come (the verdict printed before them), were not taken (beyond their budget of time, or skipped), or were
 * taken; null when none were asked for. Without them a leak's verdict rests on the heap's trend alone, and says so.
 * @param {import('../run/doctor-run.js').RunRecord} run
 * @param {import('./signals.js').Signals} s
 * @returns {import('./rules.js').SnapshotFacts | null}
 */
function snapshotFacts (run, s) {
  const r = run.retainers
  if (!r) return null
  const t = s.memory.trend
  const trend = t === null ? null : { r2: t.r2, kept: t.settled ? t.rise : null }
  const about = { reason: r.reason, keptBytes: r.keptBytes, target: heapTarget(run), trend }
  if (r.pending) return { state: 'pending', ...about, heapBytes: r.pending.heapBytes, seconds: r.pending.seconds, budget: r.pending.budget }
  if (r.skipped) return { state: 'skipped', why: r.skipped.why, ...about, heapBytes: r.skipped.heapBytes, seconds: r.skipped.seconds, budget: r.skipped.budget }
  return { state: r.error === null ? 'taken' : 'failed', ...about, heapBytes: null, seconds: null, budget: null }
}

/**
 * What an observed window counted, and its routes.
 * @param {import('./run-data.js').RunData} data
 * @param {import('./signals.js').Signals} signals
 * @param {import('./culprits.js').Culprit[]} culprits
 * @returns {{ observed: true, traffic: Traffic, routes?: import('./route-signals.js').RouteSignal[] }}
 */
function observedOf (data, signals, culprits) {
  const requests = signals.requests.finished
  const seconds = signals.window.seconds
  const traffic = { requests, seconds, rate: seconds > 0 ? requests / seconds : 0, sample: /** @type {Traffic['sample']} */ (requests < THIN_TRAFFIC ? 'thin' : requests < GOOD_TRAFFIC ? 'fair' : 'good') }
  const routes = computeRoutes(data, signals, culprits)
  return { observed: true, traffic, ...(routes ? { routes } : {}) }
}

/**
 * @param {import('./signals.js').Signals} signals
 * @returns {ProcessSummary[]}
 */
function processesOf (signals) {
  /** @type {Map<number, ProcessSummary>} */
  const byPid = new Map()
  for (const t of signals.threads) {
    const p = byPid.get(t.pid) ?? { pid: t.pid, role: t.threadId === 0 ? t.role : 'main', serving: false, samples: 0, threads: [] }
    if (t.threadId === 0) p.role = t.role
    p.serving ||= t.serving
    p.samples += t.samples
    p.threads.push(t)
    byPid.set(t.pid, p)
  }
  return [...byPid.values()].sort((a, b) => Number(b.serving) - Number(a.serving) || a.pid - b.pid)
}

/**
 * Whether the figures of a failed run say nothing worth advice on: a load that failed measured errors, and a target
 * that failed without a problem in its figures until then has only its failure to fix.
 * @param {import('./run-failure.js').RunFailure | null} f
 * @param {string} category what the figures say
 */
function failed (f, category) {
  if (f === null) return false
  if (timedOut(f)) return false
  return f.category === 'load-failed' || category === 'healthy' || category === 'insufficient-data'
}

/**
 * Whether a load failed because most of its requests waited past the timeout: the server answers, too slowly at this
 * load, and what it did meanwhile is measured like any run's (the figures' advice follows).
 * @param {import('./run-failure.js').RunFailure} f
 */
function timedOut (f) {
  return f.facts.kind === 'load-failed' && (f.facts.reason === 'errors' || f.facts.reason === 'no-response') && f.facts.timeouts * 2 > f.facts.errors
}

/**
 * For a run whose damaged files cost the diagnosis something: record it again.
 * @param {import('../run/doctor-run.js').RunRecord} run
 * @returns {import('./recommendations.js').Advice[]}
 */
function recordAgain (run) {
  return [{ kind: 'record-again', command: run.command.join(' ') }]
}

/**
 * What to do about a run that failed, before anything else.
 * @param {import('./run-failure.js').RunFailure} f
 * @param {import('../run/doctor-run.js').RunRecord} run
 * @returns {import('./recommendations.js').Advice[]}
 */
function failureAdvice (f, run) {
  if (f.facts.kind === 'heap-exhausted' || f.facts.kind === 'memory-killed') {
    return [{ kind: f.facts.kind, heap: f.facts, target: run.command.join(' ') }]
  }
  if (f.category === 'target-failed') {
    return f.error ? [{ kind: 'fix-target-error', error: f.error, stderrLines: run.stderr.length }] : [{ kind: 'find-why-target-stopped' }]
  }
  if (run.onPort) return [{ kind: 'fix-on-port', command: run.onPort.command }]
  if (f.facts.kind === 'load-failed' && timedOut(f)) return [{ kind: 'slower-than-timeout', timeouts: f.facts.timeouts, timeoutSeconds: f.facts.timeoutSeconds }]
  return [{ kind: 'load-a-2xx-path' }]
}
