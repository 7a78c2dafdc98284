// Which environment variable an outgoing agent's socket limit follows, found by what the server does: it is started
// with the candidate variables (src/analysis/agent-limits.js) set to distinct small values and loaded for a second, so
// that the agent takes requests, and the limit the gauge reads on the agent names the variable it came from. A start
// that tells nothing (the server does not start with one of them set, or never calls out) is split in two.
import { agentRecord, discoveryGroups, distinctValues, readStart, resolvedPlan, splitGroup } from '../analysis/agent-limits.js'
import { runPhase } from '../run/phases/experiment-phase.js'

/** @typedef {import('../analysis/experiments.js').ExperimentPlan} ExperimentPlan */
/** @typedef {import('../analysis/experiments.js').Experiment} Experiment */

/** Starts one search makes at most: one is usual, a few more when a variable stops the server starting. */
const MAX_STARTS = 6
/** Seconds of load per start: enough for the agent to take requests, not to measure anything. */
const LOAD_SECONDS = 1
/** Seconds a start waits for the server to listen, at most. */
const LISTEN_SECONDS = 10
/** What a start costs at least, to leave in the budget before one: starting, the load, stopping. */
const START_MS = 4000

/**
 * @param {ExperimentPlan} plan an agent's limit as the code sets it, with the variables that may set it instead
 * @param {import('../run/phases/experiment-phase.js').PhaseOptions} o
 * @param {{ budgetMs: number, began: number, status: (line: string) => void }} run
 * @returns {Promise<{ plan: ExperimentPlan } | { record: Experiment }>} the experiment on the variable found, or
 *   what was found instead (the limit is in the code, the starts could not tell, no time was left)
 */
export async function findLimitVariable (plan, o, run) {
  const started = Date.now()
  const candidates = plan.candidates ?? []
  const done = (/** @type {Experiment} */ record) => ({ record: { ...record, seconds: Math.round((Date.now() - started) / 100) / 10 } })
  // The app reads nothing that could set it: no start is needed to say the limit is in the code.
  if (candidates.length === 0) return done(agentRecord(plan, 'in-code'))
  const agent = String(plan.facts?.agent)
  const known = new Set([Number(plan.facts?.maxSockets)])
  const queue = discoveryGroups(candidates)
  /** @type {string[]} */
  const checked = []
  /** @type {string[]} */
  const unclear = []
  for (let starts = 1; queue.length > 0; starts++) {
    if (o.signal.aborted) return done(agentRecord(plan, 'interrupted', { checked, unclear }))
    if (starts > MAX_STARTS || run.budgetMs - (Date.now() - run.began) < START_MS) {
      unclear.push(...queue.flat().map(c => c.name))
      break
    }
    const group = /** @type {import('../analysis/agent-limits.js').EnvCandidate[]} */ (queue.shift())
    const assigned = distinctValues(group, known)
    const used = Math.round((Date.now() - run.began) / 1000)
    const setting = Object.entries(assigned).map(([k, v]) => `${k}=${v}`).join(' ')
    run.status(`Experiment: which variable sets ${agent}'s maxSockets (${plan.current})? start ${starts}, with ${setting} (${used} s of ${Math.round(run.budgetMs / 1000)} s; Ctrl-C skips)…`)
    // A variable that moves the port (PORT=1) must not hold the search for the whole listen timeout.
    const start = { ...o, listenTimeout: Math.min(o.listenTimeout, LISTEN_SECONDS) }
    const phase = await runPhase({ flags: [], env: { ...assigned, HOTPATH_EXPERIMENT_AGENTS: '1' } }, start, { arm: 'candidate', value: setting }, { warmup: 0, seconds: LOAD_SECONDS })
    const seen = phase.gauge?.agents.find(a => a.agent === agent)?.limits ?? null
    const said = readStart(assigned, seen, known)
    if ('found' in said) {
      checked.push(...group.map(c => c.name))
      const c = /** @type {import('../analysis/agent-limits.js').EnvCandidate} */ (group.find(x => x.name === said.found))
      return { plan: resolvedPlan(plan, c, checked) }
    }
    if ('none' in said) checked.push(...group.map(c => c.name))
    else if (group.length > 1) queue.unshift(...splitGroup(group))
    else unclear.push(group[0].name)
  }
  if (o.signal.aborted) return done(agentRecord(plan, 'interrupted', { checked, unclear }))
  return done(agentRecord(plan, unclear.length > 0 ? 'unclear' : 'in-code', { checked, unclear }))
}
