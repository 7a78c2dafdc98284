// doctor's diagnosis in words: the analysis returns facts (src/analysis/diagnose.js); this turns them into the
// sentences the terminal, the HTML report and the JSON show, and is the one place that does. The JSON keeps every
// sentence it had, next to the facts they were made from.
import { adviceText } from './advice.js'
import { culpritReason } from './culprits.js'
import { evidenceWords } from './evidence.js'
import { wordExperiment } from './experiments.js'
import { retrySummary } from './heap-retry.js'
import { failureSummary, verdictSummary } from './verdict.js'
import { wordWarning } from './warnings.js'

/** @typedef {import('../../analysis/diagnose.js').Diagnosis} DiagnosisFacts */

/**
 * @typedef {import('../../analysis/evidence.js').Evidence & { label: string, verdict: string }} WordedEvidence an
 *   evidence row with what its signal is called (`label`) and what its value says (`verdict`)
 */

/**
 * @typedef {import('../../analysis/culprits.js').Culprit & { reason?: string }} WordedCulprit a culprit with why it is
 *   blamed, in words, when it was found other than by sampling
 */

/**
 * doctor's verdict, the JSON contract (docs/json.md, schema/doctor.schema.json): the facts of the analysis with their sentences.
 * @typedef {object} Diagnosis
 * @property {'hotpath'} tool
 * @property {string} version
 * @property {DiagnosisFacts['category']} category
 * @property {string} summary the verdict in a sentence or two (for a failed run: what went wrong, then what the
 *   figures said until then)
 * @property {import('./warnings.js').WordedWarning[]} warnings files of the run that were missing or corrupt, what that cost
 *   (`cost`, and as facts `loss`) and all of it in a sentence (`message`)
 * @property {DiagnosisFacts['failure']} failure
 * @property {{ category: import('../../analysis/rules.js').Category, summary: string, facts: import('../../analysis/rules.js').VerdictFacts }} measured
 * @property {WordedEvidence[]} evidence
 * @property {WordedCulprit[]} culprits
 * @property {string[]} recommendations
 * @property {import('./experiments.js').WordedExperiment[]} [experiments] the runtime settings doctor measured before
 *   advising them (src/analysis/experiments.js), each with its sentence
 * @property {import('../../analysis/heap-retry.js').HeapRetry & { summary: string }} [heapRetry] after a crash on heap
 *   exhaustion, the target loaded again with the larger limit the advice proposes: what it gave, and in a sentence
 * @property {DiagnosisFacts['load']} load
 * @property {DiagnosisFacts['observed']} [observed]
 * @property {DiagnosisFacts['traffic']} [traffic]
 * @property {DiagnosisFacts['routes']} [routes]
 * @property {DiagnosisFacts['processes']} processes
 * @property {DiagnosisFacts['run']} run
 * @property {{ summary: SummaryFacts, recommendations: import('../../analysis/recommendations.js').Advice[] }} facts
 *   what `summary` and each of `recommendations` (same order) say, as facts
 */

/**
 * What the headline says: the verdict's facts, or for a failed run that it failed (the `failure` tells how).
 * @typedef {import('../../analysis/rules.js').VerdictFacts
 *   | { kind: 'run-failed', failure: 'target-failed' | 'load-failed', measured: import('../../analysis/rules.js').Category }} SummaryFacts
 */

/**
 * Words a diagnosis. One read back from a JSON file is in words already, and is returned as it is.
 * @param {DiagnosisFacts | Diagnosis} d
 * @returns {Diagnosis}
 */
export function wordDiagnosis (d) {
  if (isWorded(d)) return d
  const measured = { category: d.measured.category, summary: verdictSummary(d.measured.facts), facts: d.measured.facts }
  const failure = d.failure
  return {
    tool: d.tool,
    version: d.version,
    category: d.category,
    summary: failure ? failureSummary(failure, measured) : measured.summary,
    warnings: d.warnings.map(wordWarning),
    failure,
    measured,
    evidence: d.evidence.map(e => {
      const { label, verdict } = evidenceWords(e)
      return { signal: e.signal, label, value: e.value, unit: e.unit, threshold: e.threshold, verdict, decisive: e.decisive, state: e.state, facts: e.facts }
    }),
    culprits: d.culprits.map(wordCulprit),
    recommendations: d.recommendations.map(adviceText),
    ...(d.experiments ? { experiments: d.experiments.map(wordExperiment) } : {}),
    ...(d.heapRetry ? { heapRetry: { ...d.heapRetry, summary: retrySummary(d.heapRetry) } } : {}),
    load: d.load,
    ...(d.observed ? { observed: d.observed } : {}),
    ...(d.traffic ? { traffic: d.traffic } : {}),
    ...(d.routes ? { routes: d.routes } : {}),
    processes: d.processes,
    run: d.run,
    facts: {
      summary: failure ? { kind: 'run-failed', failure: failure.category, measured: measured.category } : measured.facts,
      recommendations: d.recommendations
    }
  }
}

/**
 * A culprit with its reason in words, where its facts are (the place `reason` has always had in the JSON).
 * @param {import('../../analysis/culprits.js').Culprit} c
 * @returns {WordedCulprit}
 */
function wordCulprit (c) {
  if (!c.facts) return c
  /** @type {Record<string, unknown>} */
  const out = {}
  for (const [k, v] of Object.entries(c)) {
    if (k === 'facts') out.reason = culpritReason(c.facts)
    out[k] = v
  }
  return /** @type {WordedCulprit} */ (out)
}

/**
 * @param {DiagnosisFacts | Diagnosis} d
 * @returns {d is Diagnosis}
 */
function isWorded (d) {
  return typeof (/** @type {Diagnosis} */ (d)).summary === 'string'
}
