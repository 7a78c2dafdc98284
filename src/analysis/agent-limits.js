// doctor's experiment on an outgoing agent's socket limit, as facts: which agent's requests queued for a socket, which
// environment variables could set its limit — one the app read whose value is the limit, and those it read unset,
// whose absence the code may answer with its default — how a start of the server with them set to distinct values
// says which one the limit follows, and what each value's phases say of the agent. Which variable it is is told by
// what the runtime does, never by a name. The starts are run by src/experiments/limit-variable.js, the
// phases by src/experiments/run-experiments.js; docs/diagnosis.md says how.

/** @typedef {import('./experiments.js').ExperimentPlan} ExperimentPlan */
/** @typedef {import('./experiments.js').Experiment} Experiment */
/** @typedef {import('./experiments.js').TriedValue} TriedValue */
/** @typedef {import('../run/phases/experiment-phase.js').PhaseRecord} PhaseRecord */

/**
 * A variable that may set an agent's limit.
 * @typedef {object} EnvCandidate
 * @property {string} name
 * @property {boolean} set it had a value (the agent's limit) when the app read it; else it was read unset
 * @property {string | null} value
 * @property {string | null} read `file:line` where the app first read it
 * @property {boolean} dependency read by a package, not the app's own code
 */

/** Variables one search sets at most: an app reads tens, few of them unset. */
const MAX_CANDIDATES = 12
/** Multiples of the limit in effect tried, smallest first. */
const LADDER = [2, 4, 8]

/**
 * The experiment an outgoing pool that ran out of sockets calls for, when the requests waited (io): the variables that
 * may set its limit, or none — then the limit is in the code, and the experiment says so without running anything.
 * @param {import('./rules.js').Category | 'load-failed' | 'target-failed'} category
 * @param {import('./signals.js').Signals} s
 * @returns {ExperimentPlan | null}
 */
export function agentPoolPlan (category, s) {
  if (category !== 'io') return null
  const a = (s.agents ?? []).find(x => x.maxQueued > 0 && Number.isFinite(x.maxSockets))
  if (!a) return null
  const reads = s.env ?? []
  const matched = reads.filter(r => r.set && r.value !== null && Number(r.value) === a.maxSockets)
  const unset = reads.filter(r => !r.set)
  // The app's own reads before its packages': a limit of the app's pool is usually the app's setting.
  const candidates = [...matched, ...unset.filter(r => !r.dependency), ...unset.filter(r => r.dependency)]
    .slice(0, MAX_CANDIDATES)
    .map(r => ({ name: r.name, set: r.set, value: r.value, read: r.site ? `${r.site.file}:${r.site.line}` : null, dependency: r.dependency }))
  return {
    setting: 'maxSockets',
    kind: 'code',
    why: 'agent-pool',
    current: String(a.maxSockets),
    ladder: [],
    candidates,
    facts: { agent: a.agent, maxSockets: a.maxSockets, queued: a.maxQueued, created: createdAt(s, a), checked: [] }
  }
}

/**
 * Where the app created the pool, when the wait tracer found requests queueing for it.
 * @param {import('./signals.js').Signals} s
 * @param {{ agent: string, maxSockets: number }} a
 */
function createdAt (s, a) {
  const w = s.waits.sites.find(x => x.pool?.site && x.pool.limit?.key === 'maxSockets' && x.pool.limit.value === a.maxSockets && x.pool.class === a.agent)
  const site = w?.pool?.site
  return site ? `${site.file}:${site.line}` : null
}

/**
 * The starts to try in turn: the variables whose value is the limit with those the app's own code read unset, then
 * those its packages read unset — a package's setting set to a value it does not expect can stop the server starting,
 * and is not tried unless the app's own are not it.
 * @param {EnvCandidate[]} candidates
 */
export function discoveryGroups (candidates) {
  return [candidates.filter(c => c.set || !c.dependency), candidates.filter(c => !c.set && c.dependency)].filter(g => g.length > 0)
}

/**
 * Two smaller starts for one that told nothing (the server did not start with one of them set, or the agent took no
 * request): the variables set apart from those read unset, else two halves.
 * @param {EnvCandidate[]} group
 * @returns {EnvCandidate[][]}
 */
export function splitGroup (group) {
  const set = group.filter(c => c.set)
  const unset = group.filter(c => !c.set)
  if (set.length > 0 && unset.length > 0) return [set, unset]
  const half = Math.ceil(group.length / 2)
  return [group.slice(0, half), group.slice(half)].filter(g => g.length > 0)
}

/**
 * One value per variable, all different, none the limit or another the agent had: the smallest whole numbers, which do
 * least harm where a variable is no limit at all (a worker count, a retry count).
 * @param {EnvCandidate[]} group
 * @param {Set<number>} known the limits the agent had in the diagnosed run
 * @returns {Record<string, string>}
 */
export function distinctValues (group, known) {
  /** @type {Record<string, string>} */
  const out = {}
  let v = 0
  for (const c of group) {
    v++
    while (known.has(v)) v++
    out[c.name] = String(v)
  }
  return out
}

/**
 * What one start says: the variable whose value the agent's limit took; that none sets it (the limit stayed); or
 * nothing clear — the agent took no request, or its limit moved to a value none was given.
 * @param {Record<string, string>} assigned
 * @param {number[] | null} seen the agent's limits in the start (null: it took no request)
 * @param {Set<number>} known its limits in the diagnosed run
 * @returns {{ found: string } | { none: true } | { unclear: string }}
 */
export function readStart (assigned, seen, known) {
  if (seen === null || seen.length === 0) return { unclear: 'the agent took no request' }
  const names = Object.keys(assigned)
  const hits = names.filter(n => seen.includes(Number(assigned[n])))
  if (hits.length === 1) return { found: hits[0] }
  if (hits.length === 0 && seen.every(v => known.has(v))) return { none: true }
  // One variable set, and the limit moved, though not to its value (the code scales it): that one.
  if (hits.length === 0 && names.length === 1) return { found: names[0] }
  return { unclear: `the limit moved to ${seen.join(', ')}` }
}

/**
 * The experiment once a start showed the variable the limit follows: its ladder, in multiples of the limit.
 * @param {ExperimentPlan} plan
 * @param {EnvCandidate} c
 * @param {string[]} checked the variables the starts set
 * @returns {ExperimentPlan}
 */
export function resolvedPlan (plan, c, checked) {
  const limit = Number(plan.facts?.maxSockets)
  return {
    setting: c.name,
    kind: 'env',
    why: 'agent-pool',
    current: c.set ? c.value : null,
    ladder: LADDER.map(k => String(k * limit)),
    facts: { ...plan.facts, candidates: (plan.candidates ?? []).map(x => x.name), checked, read: c.read, set: c.set }
  }
}

/**
 * An agent-pool experiment that measured nothing: the limit is in the code (`in-code`), the starts could not tell
 * (`unclear`), or the server cannot be restarted (`no-command`).
 * @param {ExperimentPlan} plan
 * @param {'in-code' | 'unclear' | 'no-command' | 'budget' | 'interrupted' | 'proposed'} stopped
 * @param {{ checked?: string[], unclear?: string[] }} [found]
 * @returns {Experiment}
 */
export function agentRecord (plan, stopped, found = {}) {
  const candidates = (plan.candidates ?? []).map(c => c.name)
  return {
    setting: plan.setting,
    kind: plan.kind,
    why: plan.why,
    current: plan.current,
    tried: [],
    chosen: null,
    verdict: 'not-run',
    stopped,
    seconds: 0,
    phaseSeconds: 0,
    facts: { ...plan.facts, candidates, checked: found.checked ?? [], ...(found.unclear ? { unclear: found.unclear } : {}) }
  }
}

/**
 * A value's figures for the agent — its limit and the requests that waited for a socket, baseline against candidate —
 * and, when its limit did not move with the value, a value that measured nothing about it.
 * @param {TriedValue} t
 * @param {PhaseRecord[]} phases
 * @param {ExperimentPlan} plan
 * @returns {TriedValue}
 */
export function withAgentFigures (t, phases, plan) {
  const name = String(plan.facts?.agent)
  const of = (/** @type {PhaseRecord['arm']} */ arm) => phases.flatMap(p => {
    const a = p.arm === arm && p.failed === null ? p.gauge?.agents.find(x => x.agent === name) : undefined
    return a ? [a] : []
  })
  const a = of('baseline')
  const b = of('candidate')
  if (a.length === 0 || b.length === 0) return t
  const before = [...new Set(a.flatMap(x => x.limits))]
  const after = [...new Set(b.flatMap(x => x.limits))]
  const moved = after.filter(v => !before.includes(v))
  const mean = (/** @type {number[]} */ xs) => xs.reduce((s, x) => s + x, 0) / xs.length
  const limit = Number(plan.facts?.maxSockets)
  const agent = {
    maxSockets: { baseline: before.includes(limit) ? limit : Math.max(...before), candidate: moved.length > 0 ? Math.max(...moved) : Math.max(...after) },
    queued: { baseline: mean(a.map(x => x.maxQueued)), candidate: mean(b.map(x => x.maxQueued)) }
  }
  if (moved.length > 0 || t.verdict === 'failed') return { ...t, agent }
  return { ...t, agent, verdict: 'failed', failed: `${name}'s maxSockets stayed ${agent.maxSockets.candidate} with ${plan.setting}=${t.value}`, score: 0 }
}
