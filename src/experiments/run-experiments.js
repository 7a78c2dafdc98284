// doctor's experiments: after the diagnosed run, the target is started afresh for short phases that alternate a
// baseline with a candidate setting (node flags in NODE_OPTIONS, or environment variables), each warmed up and then
// loaded as doctor loaded it. This is the loop between two layers: each phase is run (src/run/phases/experiment-phase.js),
// judged (src/analysis/experiment-judging.js), and the judgement picks the next phase — so it lives above both.
import { runPhase, WARMUP_SECONDS } from '../run/phases/experiment-phase.js'
import { semiSpaceLadder, variantOf } from '../analysis/experiments.js'
import { chooseValue, experimentVerdict, judgeValue, stopAfter } from '../analysis/experiment-judging.js'
import { withAgentFigures } from '../analysis/agent-limits.js'
import { findLimitVariable } from './limit-variable.js'

/** @typedef {import('../run/phases/experiment-phase.js').Variant} Variant */
/** @typedef {import('../run/phases/experiment-phase.js').PhaseRecord} PhaseRecord */
/** @typedef {import('../run/phases/experiment-phase.js').PhaseOptions} PhaseOptions */
/** @typedef {import('../run/phases/gauge-readings.js').Gauge} Gauge */

/**
 * Phases per value: baseline, candidate, baseline, candidate, baseline — each candidate between two baselines, so that
 * a drift of the machine falls on both arms. The last baseline opens the next value's phases.
 */
const PATTERN = /** @type {const} */ (['baseline', 'candidate', 'baseline', 'candidate', 'baseline'])
/** Seconds a phase costs beyond its load, before one has been timed: starting and stopping the target. */
const START_SECONDS = 2

/**
 * Runs each plan's ladder within the time budget, one value after another, and says what each value did. An agent's
 * limit is first traced to the variable it follows (limit-variable.js), or found to be in the code.
 * @param {import('../analysis/experiments.js').ExperimentPlan[]} plans
 * @param {PhaseOptions} o
 * @param {{ budgetMs: number, status: (line: string) => void }} run
 * @returns {Promise<import('../analysis/experiments.js').Experiment[]>}
 */
export async function runExperiments (plans, o, run) {
  /** @type {Clock} */
  const clock = { began: Date.now(), phaseMs: (o.seconds + WARMUP_SECONDS + START_SECONDS) * 1000 }
  /** @type {import('../analysis/experiments.js').Experiment[]} */
  const out = []
  for (let plan of plans) {
    const started = Date.now()
    if (plan.kind === 'code') {
      const found = await findLimitVariable(plan, o, { ...run, began: clock.began })
      if ('record' in found) {
        out.push(found.record)
        continue
      }
      plan = found.plan
    }
    out.push(await runLadder(plan, o, run, clock, started))
  }
  return out
}

/**
 * The most measuring the plans takes, in seconds: every value of each ladder (semi-space: three), its phases at what a
 * phase costs before one is timed, and for an agent's limit the starts that find its variable. The ladders often stop
 * sooner (a plateau, a loss).
 * @param {import('../analysis/experiments.js').ExperimentPlan[]} plans
 * @param {number} seconds each phase's measured load
 */
export function plannedSeconds (plans, seconds) {
  const phase = seconds + WARMUP_SECONDS + START_SECONDS
  let total = 0
  for (const p of plans) {
    if (p.kind === 'code') total += SEARCH_SECONDS
    const values = p.setting === 'max-semi-space-size' ? 3 : p.kind === 'code' ? 3 : Math.max(1, p.ladder.length)
    total += phase * (PATTERN.length + (PATTERN.length - 1) * (values - 1))
  }
  return total
}

/** What finding the variable an agent's limit follows takes, usually: a start or two (limit-variable.js). */
const SEARCH_SECONDS = 8

/** @typedef {{ began: number, phaseMs: number }} Clock when the experiments began, and the longest phase so far */

/**
 * One plan's ladder: each value's phases, judged, until one stops it (a loss, a plateau, the budget).
 * @param {import('../analysis/experiments.js').ExperimentPlan} plan
 * @param {PhaseOptions} o
 * @param {{ budgetMs: number, status: (line: string) => void }} run
 * @param {Clock} clock
 * @param {number} started when this experiment began (an agent's, with the starts that found its variable)
 * @returns {Promise<import('../analysis/experiments.js').Experiment>}
 */
async function runLadder (plan, o, run, clock, started) {
  const fixedRate = (o.load.rate ?? 0) > 0
  // An agent's experiment watches the agent in both arms alike: its limit, and the requests that waited for it.
  /** @type {Record<string, string>} */
  const gauge = plan.why === 'agent-pool' ? { HOTPATH_EXPERIMENT_AGENTS: '1' } : {}
  /** @type {Variant} */
  const baseline = { flags: [], env: gauge }
  /** @type {import('../analysis/experiments.js').TriedValue[]} */
  const tried = []
  /** @type {import('../analysis/experiments.js').Experiment['stopped']} */
  let stopped = 'ladder-end'
  let current = plan.current
  let ladder = plan.ladder
  /** @type {PhaseRecord | null} the baseline phase that ended the previous value's, and opens the next one's */
  let carried = null
  /** @type {string[]} the values the time or Ctrl-C left untried */
  let untried = []
  for (let i = 0; i < ladder.length; i++) {
    let value = ladder[i]
    if (o.signal.aborted) { stopped = 'interrupted'; untried = ladder.slice(i); break }
    const needed = PATTERN.length - (carried ? 1 : 0)
    if (run.budgetMs - (Date.now() - clock.began) < clock.phaseMs * needed) { stopped = 'budget'; untried = ladder.slice(i); break }
    /** @type {PhaseRecord[]} */
    const phases = carried ? [carried] : []
    while (phases.length < PATTERN.length && !o.signal.aborted) {
      const k = phases.length
      const arm = PATTERN[k]
      const name = plan.kind === 'try' ? value : `${plan.kind === 'flag' ? '--' : ''}${plan.setting}=${value}`
      const used = Math.round((Date.now() - clock.began) / 1000)
      const against = plan.kind === 'try' ? 'none' : current ?? (plan.why === 'agent-pool' ? 'unset' : 'the default')
      const what = current === null && plan.setting === 'max-semi-space-size'
        ? `${plan.setting}: phase ${k + 1}/${PATTERN.length}, baseline, reading the young generation's size in effect`
        : `${name} against ${against}: phase ${k + 1}/${PATTERN.length}, ${arm}`
      run.status(`Experiment ${what} (${used} s of ${Math.round(run.budgetMs / 1000)} s; Ctrl-C skips)…`)
      const candidate = variantOf(plan, value)
      const phase = await runPhase(arm === 'baseline' ? baseline : { flags: candidate.flags, env: { ...gauge, ...candidate.env } }, o, { arm, value: arm === 'baseline' ? '' : value })
      phases.push(phase)
      if (phase.failed !== null) break
      // The young generation's size in effect is what V8 grew it to under this load: the ladder starts above it,
      // and this baseline phase is the first of its first value's.
      if (plan.setting === 'max-semi-space-size' && current === null && phase.gauge && phase.gauge.newSpace > 0) {
        const mb = Math.round(phase.gauge.newSpace / 2 / 1048576)
        current = String(mb)
        ladder = semiSpaceLadder(mb)
        if (ladder.length === 0) break
        if (!ladder.includes(value)) {
          i = 0
          value = ladder[0]
        }
      }
    }
    if (ladder.length === 0) break
    if (o.signal.aborted && phases.length < PATTERN.length) { stopped = 'interrupted'; break }
    const measured = phases.filter(p => p.failed === null && p !== carried)
    if (measured.length > 0) clock.phaseMs = Math.max(...measured.map(p => p.ms))
    const judged = judgeValue(phases, value, fixedRate)
    tried.push(plan.why === 'agent-pool' ? withAgentFigures(judged, phases, plan) : judged)
    const last = /** @type {PhaseRecord} */ (phases.at(-1))
    carried = last.arm === 'baseline' && last.failed === null ? last : null
    const why = stopAfter(tried)
    if (why !== null) { stopped = why; break }
  }
  const chosen = chooseValue(tried)
  return {
    setting: plan.setting,
    kind: plan.kind,
    why: plan.why,
    current,
    tried,
    chosen,
    verdict: experimentVerdict(tried, chosen),
    stopped,
    ...(untried.length > 0 ? { untried } : {}),
    seconds: Math.round((Date.now() - started) / 100) / 10,
    phaseSeconds: o.seconds,
    ...(plan.facts ? { facts: plan.facts } : {})
  }
}
