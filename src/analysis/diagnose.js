import { VERSION } from '../version.js'
import { collectCulprits } from './culprits.js'
import { recommend } from './recommendations.js'
import { collectEvidence, decide } from './rules.js'
import { runFailure } from './run-failure.js'
import { runWarnings } from './run-warnings.js'
import { computeSignals } from './signals.js'

/**
 * doctor's verdict, DESIGN.md §5's JSON contract.
 * @typedef {object} Diagnosis
 * @property {'hotpath'} tool
 * @property {string} version
 * @property {import('./rules.js').Category | 'load-failed' | 'target-failed'} category the verdict; `load-failed` and
 *   `target-failed` say the run did not measure what was asked (see `failure`), whatever its figures say
 * @property {string} summary
 * @property {import('./run-warnings.js').RunWarning[]} warnings files of the run that were missing or corrupt, and
 *   what that cost: the verdict (`affects: 'verdict'`) or the culprits rest on less than was recorded
 * @property {import('./run-failure.js').RunFailure | null} failure what went wrong with the run, when it did
 * @property {{ category: import('./rules.js').Category, summary: string }} measured what the figures of the run say, on
 *   their own (for a failed run: until it failed)
 * @property {import('./rules.js').Evidence[]} evidence
 * @property {import('./culprits.js').Culprit[]} culprits
 * @property {string[]} recommendations
 * @property {import('../load/result.js').LoadResult | null} load
 * @property {ProcessSummary[]} processes
 * @property {{ dir: string, command: string[], url: string, window: { start: number, end: number }, exit: { code: number | null, signal: string | null, crashed: boolean }, aborted: boolean, stderr: string[] }} run
 */

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
  const rule = decide(signals)
  const failure = runFailure(data, signals)
  const culprits = rule.category === 'insufficient-data' ? [] : collectCulprits(data, signals, rule.category)
  const warnings = runWarnings(data, rule.category)
  const damaged = warnings.some(w => w.affects !== 'nothing')
  return {
    tool: 'hotpath',
    version: VERSION,
    category: failure?.category ?? rule.category,
    summary: failure ? failureSummary(failure, rule) : rule.summary,
    warnings,
    failure,
    measured: rule,
    evidence: collectEvidence(signals, rule.category),
    culprits,
    recommendations: [
      ...(failure ? failureAdvice(failure, data.run) : []),
      ...(damaged ? [`Record the run again for a diagnosis that rests on everything it measured: hotpath doctor -- ${data.run.command.join(' ') || '<command>'}`] : []),
      ...(failed(failure, rule.category) ? [] : recommend(rule.category, signals, culprits, data.run))
    ],
    load: data.run.load,
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
  return f.category === 'load-failed' || category === 'healthy' || category === 'insufficient-data'
}

/**
 * The headline of a run that failed: what happened first, then what the figures said until then.
 * @param {import('./run-failure.js').RunFailure} f
 * @param {{ category: string, summary: string }} rule
 */
function failureSummary (f, rule) {
  const when = f.at !== null ? `, ${f.at} s into the load` : ''
  const error = f.error ? `: ${f.error.message}${f.error.at ? ` (at ${f.error.at.file}:${f.error.at.line})` : ''}` : ''
  const head = f.category === 'target-failed'
    ? `The run did not measure the server: ${f.what}${when}${error}.`
    : `The run did not measure the server: ${f.what}.`
  return rule.category === 'insufficient-data' || rule.category === 'healthy'
    ? head
    : `${head} Until then, the figures said ${rule.category}: ${rule.summary}`
}

/**
 * What to do about a run that failed, before anything else.
 * @param {import('./run-failure.js').RunFailure} f
 * @param {import('../run/doctor-run.js').RunRecord} run
 * @returns {string[]}
 */
function failureAdvice (f, run) {
  if (f.category === 'target-failed') {
    if (f.error) return [`Fix what stopped the target first: ${f.error.message}${f.error.at ? `, thrown at ${f.error.at.file}:${f.error.at.line}` : ''}. Its last lines of stderr are in the run (${run.stderr.length} kept).`]
    return ['Find why the target stopped: its last lines of stderr are above; run it without hotpath to see it fail the same way.']
  }
  if (run.onPort) return [`Run the --on-port command yourself, with PORT set to the server's port, and make it exit 0: ${run.onPort.command}`]
  return ['Load a path the server answers with 2xx (--path /api/...), with the method, headers and body it expects (-m, -H, -b), and check it with hotpath load first.']
}
