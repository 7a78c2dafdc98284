// doctor's experiments in words: what a setting measured against the baseline, as the terminal, the HTML report, the
// JSON (`experiments[].summary`) and the advice say it. The same thing as facts: src/analysis/experiments.js; as the
// HTML report's section: src/report/html/experiments.js.
import { formatBytes, formatCount, formatMs, formatPercent } from '../format.js'
import { AGENT_CAVEAT, AGENT_INSTEAD, agentFigures, agentNotRun, agentNow } from './experiments-agent.js'

/** @typedef {import('../../analysis/experiments.js').Experiment} Experiment */
/** @typedef {import('../../analysis/experiments.js').TriedValue} TriedValue */
/** @typedef {Experiment & { summary: string }} WordedExperiment */

/**
 * @param {Experiment} e
 * @returns {WordedExperiment}
 */
export function wordExperiment (e) {
  return { ...e, summary: experimentSentence(e) }
}

const VERDICT = { helps: 'helps', 'no-gain': 'no gain beyond noise', worse: 'makes it worse', failed: 'could not run', 'not-run': 'not measured' }

/**
 * What came of an experiment, as a heading says it.
 * @param {Experiment} e
 */
export function verdictLabel (e) {
  if (e.kind === 'code' && e.stopped === 'in-code') return 'fixed in the code'
  if (e.kind === 'code' && e.stopped === 'unclear') return 'not found in the environment'
  return VERDICT[e.verdict]
}

/**
 * What an experiment is on, as a heading names it: the setting, the user's --try, an agent's limit.
 * @param {Experiment} e
 */
export function experimentName (e) {
  if (e.kind === 'try') return `--try ${e.tried[0]?.value ?? ''}`
  if (e.kind === 'code') return `${e.facts?.agent ?? 'agent'}'s maxSockets`
  return e.setting
}

/**
 * For an agent's limit, the line under the heading: the agent, its limit and queue, and where the variable is read.
 * @param {Experiment} e
 */
export function agentLine (e) {
  const f = e.facts
  if (e.why !== 'agent-pool' || !f) return null
  const pool = `${f.agent}: maxSockets ${f.maxSockets}, up to ${f.queued} requests waiting for a socket${f.created ? `, created at ${f.created}` : ''}`
  if (e.kind === 'code') return pool
  return `${pool}; ${e.setting} ${f.set ? `is ${e.current}` : 'is unset'}${f.read ? `, read at ${f.read}` : ''}, and the limit follows it`
}

/**
 * How a value is set: `node --max-semi-space-size=64`, `UV_THREADPOOL_SIZE=16`, the user's own words.
 * @param {Pick<Experiment, 'kind' | 'setting'>} e
 * @param {string} value
 */
export function settingText (e, value) {
  if (e.kind === 'code') return `${e.setting}: ${value}`
  if (e.kind === 'flag') return `--${e.setting}=${value}`
  if (e.kind === 'env') return `${e.setting}=${value}`
  return value
}

/**
 * The experiment in one paragraph: the value to use and what it measured, or plainly that nothing helped.
 * @param {Experiment} e
 */
export function experimentSentence (e) {
  const unit = e.setting === 'max-semi-space-size' || e.setting === 'max-old-space-size' ? ' MB' : ''
  const agent = e.why === 'agent-pool'
  // The old generation's limit is read as the heap's (young generation included): V8 reports no other.
  const now = agent ? agentNow(e) : e.current === null || e.kind === 'try' ? '' : e.setting === 'max-old-space-size' ? ` (the heap's limit now ${e.current} MB)` : ` (now ${e.current}${unit})`
  const phases = `measured in ${e.phaseSeconds} s phases, each candidate between two baselines`
  const caveat = e.setting === 'max-old-space-size' ? ' A higher heap limit postpones a leak\'s crash; it does not fix the leak.' : agent ? AGENT_CAVEAT : ''
  if (e.verdict === 'not-run' && e.stopped === 'proposed') return proposedSentence(e, unit)
  if (e.verdict === 'not-run' && e.kind === 'code') return agentNotRun(e)
  if (e.verdict === 'not-run') {
    if (e.stopped === 'ladder-end') return `Not measured: ${e.setting} is ${e.current}${unit} already, the top of what doctor tries.`
    return e.stopped === 'no-command'
      ? `Not measured: ${settingText(e, '…')} needs the server restarted for each phase, which doctor can do only for a command it starts (not --attach, nor with --on-port).`
      : `Not measured: ${settingText(e, e.tried[0]?.value ?? '…')} — the experiment time (--experiment-time) left no room for its phases (a candidate twice, each between two baselines).`
  }
  const chosen = e.chosen !== null ? e.tried.find(t => t.value === e.chosen) : undefined
  if (chosen) {
    const others = e.tried.filter(t => t !== chosen).map(t => `${t.value}${unit}: ${outcome(t)}`)
    const how = e.kind === 'env' ? `in the server's environment (${settingText(e, chosen.value)})` : e.kind === 'flag' ? `on the node command line or in NODE_OPTIONS (${settingText(e, chosen.value)})` : 'as tried'
    const next = e.untried && e.untried.length > 0 && e.proposal ? ` Measure ${e.untried[0]}${unit} next (about ${e.proposal.seconds} s): ${e.proposal.command}` : ''
    const cut = e.stopped === 'budget' ? ` The experiment time ran out before the rest of the ladder (--experiment-time).${next}` : ''
    return `Measured, ${settingText(e, chosen.value)}${now}: ${figures(chosen)}.${others.length > 0 ? ` Also tried — ${others.join('; ')}.` : ''} Set it ${how}; ${phases}.${cut}${caveat}`
  }
  const values = e.tried.map(t => `${t.value}${unit}`).join(', ')
  if (e.verdict === 'failed') {
    const t = e.tried.find(x => x.failed !== null)
    // The server ran, but the agent's limit did not move with the variable: it does not set it after all.
    if (t?.agent && t.agent.maxSockets.candidate === t.agent.maxSockets.baseline) return `Not measured: ${t.failed} — the variable does not set the agent's limit after all.`
    return `Not measured: the server failed with ${settingText(e, t?.value ?? '')}${t?.failed ? ` (${t.failed})` : ''}.`
  }
  const list = e.kind === 'try' ? e.tried.map(outcome).join('; ') : e.tried.map(t => `${t.value}${unit}: ${outcome(t)}`).join('; ')
  if (e.verdict === 'worse') {
    return `Measured, ${e.kind === 'try' ? values : `${e.setting} at ${values}`}${now}: it does not help — ${list}. Do not set it for this load.${caveat}${instead(e)}`
  }
  // A ladder the time cut short is no answer: what it measured so far, and the command that measures the next value.
  if (e.untried && e.untried.length > 0) return cutShort(e, unit, values, list, now) + (e.setting === 'max-old-space-size' ? caveat : '')
  // A higher heap limit is tempting whatever it measured: its caveat is said with no gain too.
  const limit = e.setting === 'max-old-space-size' ? caveat : ''
  return `Measured, ${e.kind === 'try' ? values : `${e.setting} at ${values}`}${now}: no gain beyond noise — ${list}. This setting is not the remedy here.${limit}${instead(e)}${e.stopped === 'budget' ? ' (The experiment time ran out before the end of the ladder: --experiment-time.)' : ''}`
}

/**
 * A ladder the experiment time (or Ctrl-C) stopped before its end, with no value that helped so far.
 * @param {Experiment} e
 * @param {string} unit
 * @param {string} values
 * @param {string} list
 * @param {string} now
 */
function cutShort (e, unit, values, list, now) {
  const left = (e.untried ?? []).map(v => `${v}${unit}`)
  const listed = left.length <= 1 ? left.join('') : `${left.slice(0, -1).join(', ')} and ${left.at(-1)}`
  const why = e.stopped === 'interrupted' ? 'Ctrl-C stopped the experiment' : 'the experiment time (--experiment-time) ran out'
  const next = e.proposal ? ` Measure ${left[0]} next (about ${e.proposal.seconds} s): ${e.proposal.command}` : ''
  return `Measured, ${e.setting} at ${values}${now}: no gain beyond noise so far — ${list}. Not an answer yet: ${why} before ${listed}.${next}`
}

/**
 * A setting the verdict calls for that the run did not measure, not being asked to: the command that does, and how
 * long it takes.
 * @param {Experiment} e
 * @param {string} unit
 */
function proposedSentence (e, unit) {
  const p = e.proposal
  const values = (p?.values ?? []).map(v => `${v}${unit}`)
  const listed = values.length <= 1 ? values.join('') : `${values.slice(0, -1).join(', ')} and ${values.at(-1)}`
  const what = e.kind === 'code'
    ? `Find which variable sets ${e.facts?.agent ?? 'the agent'}'s maxSockets (${e.facts?.maxSockets}) and measure a bigger pool`
    : `Measure ${settingText(e, '…').replace(/=…$/, '')} at ${listed}${e.current === null ? '' : ` (${e.current}${unit} now)`}`
  return `${what} before you set it (up to ${p?.seconds ?? '?'} s, the server restarted for each phase): ${p?.command ?? 'hotpath doctor --experiment-time 90s -- <command>'}`
}

/**
 * What to do when the setting does not help.
 * @param {Experiment} e
 */
function instead (e) {
  if (e.why === 'scavenges') return ' Allocate less per request instead: reuse buffers, avoid intermediate arrays and copies.'
  if (e.why === 'thread-pool') return ' Make fewer or cheaper thread-pool calls per request instead (cache file reads and lookups; the pool\'s work may be CPU the machine does not have).'
  if (e.why === 'agent-pool') return AGENT_INSTEAD
  return ''
}

/**
 * What one value did, briefly.
 * @param {TriedValue} t
 */
function outcome (t) {
  if (t.verdict === 'failed') return `did not run (${t.failed})`
  const rps = `${formatCount(t.requestsPerSecond.candidate)} vs ${formatCount(t.requestsPerSecond.baseline)} req/s`
  if (t.verdict === 'better') return `better (${rps})`
  if (t.verdict === 'worse') return `worse (${rps}, p99 ${formatMs(t.p99Ms.candidate)} vs ${formatMs(t.p99Ms.baseline)})`
  return `no change beyond noise (${rps})`
}

/**
 * The chosen value's figures against the baseline's.
 * @param {TriedValue} t
 */
function figures (t) {
  const r = t.requestsPerSecond
  const parts = [
    `${formatCount(r.candidate)} req/s against ${formatCount(r.baseline)} (${signed(r.change)})`,
    `p99 ${formatMs(t.p99Ms.candidate)} against ${formatMs(t.p99Ms.baseline)}`
  ]
  const agent = agentFigures(t)
  if (agent) parts.push(agent)
  else if (t.gcShare) parts.push(`GC ${formatPercent(t.gcShare.candidate, 0)} of the time against ${formatPercent(t.gcShare.baseline, 0)}`)
  if (t.rssBytes) {
    const more = t.rssBytes.candidate - t.rssBytes.baseline
    const heap = t.heapBytes ? `, heap ${formatBytes(t.heapBytes.candidate)} against ${formatBytes(t.heapBytes.baseline)}` : ''
    parts.push(`RSS ${formatBytes(t.rssBytes.candidate)} against ${formatBytes(t.rssBytes.baseline)} (${more >= 0 ? `${formatBytes(more)} more` : `${formatBytes(-more)} less`}${heap})`)
  }
  return parts.join(', ')
}

/** @param {number} change */
function signed (change) {
  return `${change >= 0 ? '+' : '−'}${Math.round(Math.abs(change) * 100)}%`
}
