// doctor's experiments, as facts: which runtime settings a verdict calls for and the values worth trying (how a
// candidate's phases are judged and which value to recommend: experiment-judging.js). The phases themselves are run
// by src/experiments/run-experiments.js; docs/diagnosis.md says how. The same thing one layer up, in words
// (src/report/words/experiments.js) and as the HTML report's section (src/report/html/experiments.js).
import { freemem, totalmem } from 'node:os'
import { dominantGc, nearHeapLimit } from './rules.js'
import { THRESHOLDS } from './thresholds.js'
import { agentPoolPlan } from './agent-limits.js'

const MB = 1048576

/**
 * A setting to try and why: `flag` settings go in NODE_OPTIONS as --name=value, `env` ones in the environment; `try`
 * is the user's own variant (--try), node flags and NAME=value words together; `code` is an agent's limit as the code
 * sets it (`maxSockets`), whose `candidates` are the variables that may set it instead, until a start of the server
 * shows which (src/analysis/agent-limits.js) — then it is that variable, `env`.
 * @typedef {object} ExperimentPlan
 * @property {string} setting 'max-semi-space-size', 'max-old-space-size', 'UV_THREADPOOL_SIZE', 'try', 'maxSockets',
 *   or the name of the variable an agent's limit follows
 * @property {'flag' | 'env' | 'try' | 'code'} kind
 * @property {'scavenges' | 'heap-near-limit' | 'thread-pool' | 'agent-pool' | 'try'} why
 * @property {string | null} current the value in effect in the diagnosed run, as far as doctor knows (null: V8's
 *   own, read from the baseline phase where it can be; a variable the app read unset)
 * @property {string[]} ladder candidate values, smallest first (semi-space: rebuilt once the baseline shows the
 *   young generation's size)
 * @property {import('./agent-limits.js').EnvCandidate[]} [candidates] for an agent's limit: the variables to set to
 *   find the one it follows
 * @property {ExperimentFacts} [facts] what asked for it
 */

/**
 * @typedef {object} ExperimentFacts
 * @property {number} [heapUsed] the most the heap held in the window (its highest reading)
 * @property {number} [heapLimit]
 * @property {number} [share] of the traced requests' time, at the line that waits on the thread pool
 * @property {string} [site] that line, `file:line`
 * @property {string} [resource]
 * @property {string} [agent] the agent whose requests queued for a socket (its class, or http.globalAgent)
 * @property {number} [maxSockets] its limit in the diagnosed run
 * @property {number} [queued] the most requests that waited for one of its sockets at once
 * @property {string | null} [created] where the app created it, when known
 * @property {string | null} [read] where the app first read the variable
 * @property {boolean} [set] whether the variable had a value (the limit) in the diagnosed run; else the code's default
 * @property {string[]} [candidates] the variables that might have set the limit
 * @property {string[]} [checked] those a start of the server set to see whether the limit followed
 * @property {string[]} [unclear] those no start could tell about (the server did not start with them set, or the
 *   agent took no request)
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
 * @property {{ maxSockets: { baseline: number, candidate: number }, queued: { baseline: number, candidate: number } }} [agent]
 *   for an agent's limit: the limit each arm ran with, and the most requests waiting for a socket (mean over phases)
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
 * @property {'plateau' | 'worse' | 'ladder-end' | 'budget' | 'interrupted' | 'failed' | 'no-command' | 'in-code' | 'unclear' | 'proposed'} stopped
 *   why no more values were tried (`in-code`: no variable sets the agent's limit; `unclear`: the starts could not tell;
 *   `proposed`: not asked for — `proposal` says how to measure it)
 * @property {string[]} [untried] the ladder's values the experiment time (or Ctrl-C) left untried: no verdict on the
 *   setting rests on the values before them alone
 * @property {{ seconds: number, command: string, values: string[] }} [proposal] for a setting not measured because
 *   the run did not ask (no --experiment-time): the doctor command that measures it, how long that takes at most (all
 *   the proposed settings together), and the values it would try; for one whose ladder the time cut short, the
 *   command that measures the next value untried (--try), its phases' time, and the values left
 * @property {number} seconds the experiment's wall time
 * @property {number} phaseSeconds each phase's measured load, after its warm-up
 * @property {ExperimentPlan['facts']} [facts]
 */

/** Thread-pool work as the wait tracer names it (src/sampling/wait-resources.js). */
const POOL_WAITS = new Set(['thread pool', 'fs', 'dns'])

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
  if ((category === 'gc' || category === 'memory-leak') && nearHeapLimit(s)) {
    const limitMb = Math.round(m.oldLimit / MB)
    // Never past what the machine has: a limit above its memory trades a heap error for the OOM killer.
    const room = Math.min(totalmem() * 0.75, freemem() + m.oldLimit) / MB
    const ladder = [2, 4].map(k => Math.round((limitMb * k) / 64) * 64).filter(v => v <= room)
    if (ladder.length > 0) out.push({ setting: 'max-old-space-size', kind: 'flag', why: 'heap-near-limit', current: String(limitMb), ladder: ladder.map(String), facts: { heapUsed: m.oldPeak, heapLimit: m.oldLimit } })
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
  const agent = agentPoolPlan(category, s)
  if (agent) out.push(agent)
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
  if (plan.kind === 'code') return { flags: [], env: {} }
  if (plan.kind === 'flag') return { flags: [`--${plan.setting}=${value}`], env: {} }
  if (plan.kind === 'env') return { flags: [], env: { [plan.setting]: value } }
  const parsed = parseTry(value)
  return 'error' in parsed ? { flags: [], env: {} } : parsed
}
