// doctor's experiment on an outgoing agent's socket limit in words: where the limit is set (a variable, found by
// starting the server with it changed, or the code), and the clauses the experiment's paragraph adds about the agent.

/** @typedef {import('../../analysis/experiments.js').Experiment} Experiment */

/**
 * `Agent's maxSockets (2)`.
 * @param {Experiment} e
 */
function limitName (e) {
  return `${e.facts?.agent ?? 'the agent'}'s maxSockets (${e.facts?.maxSockets ?? e.current})`
}

/**
 * `A`, `A and B`, `A, B and C`.
 * @param {string[]} names
 */
function list (names) {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`
}

/**
 * The sentence of an agent experiment that measured nothing: the limit is in the code, or which variable sets it could
 * not be told, or the server could not be restarted to find out.
 * @param {Experiment} e
 */
export function agentNotRun (e) {
  const f = e.facts ?? {}
  const checked = f.checked ?? []
  const at = f.created ? ` at ${f.created}` : ''
  const raise = 'Raise it there (reading it from the environment would let it be tuned without a release).'
  if (e.stopped === 'in-code') {
    const how = checked.length > 0
      ? `doctor started the server with ${list(checked)} set to other values, and the limit stayed ${f.maxSockets}`
      : `the app reads no environment variable whose value is ${f.maxSockets}, and no unset one whose absence could leave it at a default`
    return `Not measured: ${limitName(e)} is fixed in the code${at} — ${how}. ${raise}`
  }
  if (e.stopped === 'unclear') {
    const unclear = f.unclear ?? []
    const rest = checked.length > 0 ? ` (${list(checked)} ${checked.length > 1 ? 'do' : 'does'} not set it)` : ''
    return `Not measured: which variable sets ${limitName(e)} could not be told: with ${list(unclear)} set to a test value the server did not start, made no outgoing request, or the experiment time ran out${rest}. Set ${unclear.length > 1 ? 'them' : 'it'} yourself and compare runs, or look where the agent is created${at}.`
  }
  if (e.stopped === 'no-command') {
    const candidates = f.candidates ?? []
    return `Not measured: ${candidates.length > 0 ? `${list(candidates)} may set ${limitName(e)}` : limitName(e)}; finding which, and what a bigger pool does, needs the server restarted for each phase, which doctor can do only for a command it starts (not --attach, nor with --on-port).`
  }
  return e.stopped === 'interrupted'
    ? `Not measured: the search for the variable that sets ${limitName(e)} was interrupted.`
    : `Not measured: the experiment time (--experiment-time) left no room to find which variable sets ${limitName(e)}.`
}

/**
 * What the variable is, in the paragraph's parenthesis: its value now, that the agent's limit follows it, where it is read.
 * @param {Experiment} e
 */
export function agentNow (e) {
  const f = e.facts ?? {}
  const read = f.read ? `, read at ${f.read}` : ''
  const agent = f.agent ?? 'the agent'
  return f.set
    ? ` (now ${e.current}, which ${agent}'s maxSockets follows${read})`
    : ` (unset now, so ${agent}'s maxSockets is the code's default, ${f.maxSockets}; it follows the variable when set${read})`
}

/** What a bigger pool cannot tell, said with its gain. */
export const AGENT_CAVEAT = ' A bigger pool sends more requests at once to what the agent calls: check that it can take them (its own connection and rate limits), which a local test may not show.'

/** What to do when a bigger pool does not help. */
export const AGENT_INSTEAD = ' Requests wait on what the agent calls, not for its sockets: make that faster, cache its answers, or call it less often.'

/**
 * The agent's figures of a value, when its phases read them: its limit, and requests waiting for a socket at most.
 * @param {import('../../analysis/experiments.js').TriedValue} t
 */
export function agentFigures (t) {
  if (!t.agent) return null
  const q = t.agent.queued
  return `at most ${Math.round(q.candidate)} requests waiting for a socket against ${Math.round(q.baseline)} (maxSockets ${t.agent.maxSockets.candidate} against ${t.agent.maxSockets.baseline})`
}
