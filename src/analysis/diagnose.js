import { VERSION } from '../version.js'
import { collectCulprits } from './culprits.js'
import { recommend } from './recommendations.js'
import { collectEvidence, decide } from './rules.js'
import { computeSignals } from './signals.js'

/**
 * doctor's verdict, DESIGN.md §5's JSON contract.
 * @typedef {object} Diagnosis
 * @property {'hotpath'} tool
 * @property {string} version
 * @property {import('./rules.js').Category} category
 * @property {string} summary
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
  const culprits = rule.category === 'insufficient-data' ? [] : collectCulprits(data, signals, rule.category)
  return {
    tool: 'hotpath',
    version: VERSION,
    category: rule.category,
    summary: rule.summary,
    evidence: collectEvidence(signals, rule.category),
    culprits,
    recommendations: recommend(rule.category, signals, culprits, data.run),
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
