// Where an outgoing agent's limit comes from, as the analysis decides it (src/analysis/agent-limits.js): candidates by
// value and by being read unset — never by name —, what a start of the server with them set says, and what a value's
// phases say of the agent; and how the advice words each outcome.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { agentPoolPlan, agentRecord, discoveryGroups, distinctValues, readStart, resolvedPlan, splitGroup, withAgentFigures } from '../src/analysis/agent-limits.js'
import { envReads } from '../src/analysis/signals-env.js'
import { experimentSentence } from '../src/report/words/experiments.js'

/**
 * Signals as the analysis computes them, with only what the plan reads.
 * @param {{ agents?: any[], env?: any[] }} s
 * @returns {any}
 */
function signals ({ agents = [{ agent: 'UpstreamAgent', maxSockets: 6, maxQueued: 12, maxInUse: 6 }], env = [] } = {}) {
  return { agents, env, waits: { sites: [] } }
}

/**
 * @param {string} name
 * @param {string | null} value undefined: read unset
 * @param {string} [file]
 */
const read = (name, value, file = 'lib/config.js') => ({ name, set: value !== null, value, site: { function: 'load', file, line: 3 }, dependency: file.includes('node_modules/') })

test('the candidates are the variables read whose value is the limit, then those the app read unset, then its packages\'; names play no part', () => {
  const plan = agentPoolPlan('io', signals({
    env: [
      read('PORT', '8080'),
      read('TOTALLY_UNRELATED_NAME', '6'),
      read('DEBUG', null, '/app/node_modules/debug/src/node.js'),
      read('RETRIES', null, 'lib/config.js'),
      read('UPSTREAM_MAX_SOCKETS', '50')
    ]
  }))
  assert.ok(plan)
  assert.deepEqual([plan.setting, plan.kind, plan.why, plan.current, plan.ladder], ['maxSockets', 'code', 'agent-pool', '6', []])
  assert.deepEqual(plan.candidates?.map(c => c.name), ['TOTALLY_UNRELATED_NAME', 'RETRIES', 'DEBUG'])
  assert.deepEqual(plan.facts, { agent: 'UpstreamAgent', maxSockets: 6, queued: 12, created: null, checked: [] })
  // A pool that did not queue, or a verdict that is not about waiting, calls for nothing.
  assert.equal(agentPoolPlan('io', signals({ agents: [{ agent: 'A', maxSockets: 6, maxQueued: 0, maxInUse: 6 }] })), null)
  assert.equal(agentPoolPlan('event-loop', signals()), null)
  assert.equal(agentPoolPlan('io', signals({ agents: [] })), null)
})

test('a start says which variable the limit followed, that none sets it, or nothing clear', () => {
  const known = new Set([6])
  const group = [read('A', '6'), read('B', null), read('C', null)].map(r => ({ name: r.name, set: r.set, value: r.value, read: 'x.js:3', dependency: false }))
  const values = distinctValues(group, known)
  assert.deepEqual(values, { A: '1', B: '2', C: '3' })
  assert.deepEqual(distinctValues(group, new Set([1, 2])), { A: '3', B: '4', C: '5' })
  assert.deepEqual(readStart(values, [2], known), { found: 'B' })
  assert.deepEqual(readStart(values, [6], known), { none: true })
  assert.deepEqual(readStart(values, null, known), { unclear: 'the agent took no request' })
  assert.deepEqual(readStart(values, [40], known), { unclear: 'the limit moved to 40' })
  // One variable set and the limit moved, not to its value: the code scales it.
  assert.deepEqual(readStart({ B: '2' }, [4], known), { found: 'B' })
  // Variables set (by value) apart from those read unset, then halves; the app's own before its packages'.
  assert.deepEqual(splitGroup(group).map(g => g.map(c => c.name)), [['A'], ['B', 'C']])
  assert.deepEqual(splitGroup(group.slice(1)).map(g => g.map(c => c.name)), [['B'], ['C']])
  const dep = { name: 'D', set: false, value: null, read: 'node_modules/x/i.js:1', dependency: true }
  assert.deepEqual(discoveryGroups([...group, dep]).map(g => g.map(c => c.name)), [['A', 'B', 'C'], ['D']])
})

test('a value whose phases left the agent\'s limit where it was measured nothing about it', () => {
  const plan = resolvedPlan(/** @type {any} */ ({ facts: { agent: 'UpstreamAgent', maxSockets: 6, queued: 12 }, candidates: [] }), { name: 'X', set: true, value: '6', read: 'a.js:1', dependency: false }, ['X'])
  assert.deepEqual([plan.setting, plan.kind, plan.current, plan.ladder], ['X', 'env', '6', ['12', '24', '48']])
  const phase = (/** @type {'baseline' | 'candidate'} */ arm, /** @type {number} */ limit, /** @type {number} */ queued) => /** @type {any} */ ({ arm, failed: null, gauge: { agents: [{ agent: 'UpstreamAgent', limits: [limit], maxQueued: queued }] } })
  const t = /** @type {any} */ ({ value: '12', verdict: 'same', failed: null, score: 0 })
  const moved = withAgentFigures(t, [phase('baseline', 6, 12), phase('candidate', 12, 2), phase('baseline', 6, 10)], plan)
  assert.equal(moved.verdict, 'same')
  assert.deepEqual(moved.agent, { maxSockets: { baseline: 6, candidate: 12 }, queued: { baseline: 11, candidate: 2 } })
  const stayed = withAgentFigures(t, [phase('baseline', 6, 12), phase('candidate', 6, 12)], plan)
  assert.equal(stayed.verdict, 'failed')
  assert.equal(stayed.failed, 'UpstreamAgent\'s maxSockets stayed 6 with X=12')
  const e = /** @type {any} */ ({ ...plan, tried: [stayed], chosen: null, verdict: 'failed', stopped: 'failed', seconds: 1, phaseSeconds: 3 })
  assert.equal(experimentSentence(e), 'Not measured: UpstreamAgent\'s maxSockets stayed 6 with X=12 — the variable does not set the agent\'s limit after all.')
})

test('the advice says plainly where the limit is when no variable sets it, or when the starts could not tell', () => {
  const plan = /** @type {any} */ ({ setting: 'maxSockets', kind: 'code', why: 'agent-pool', current: '6', ladder: [], candidates: [{ name: 'RETRIES' }, { name: 'PORT' }], facts: { agent: 'UpstreamAgent', maxSockets: 6, queued: 12, created: 'lib/upstream.js:14', checked: [] } })
  assert.equal(experimentSentence(agentRecord(plan, 'in-code', { checked: ['RETRIES', 'PORT'] })),
    'Not measured: UpstreamAgent\'s maxSockets (6) is fixed in the code at lib/upstream.js:14 — doctor started the server with RETRIES and PORT set to other values, and the limit stayed 6. Raise it there (reading it from the environment would let it be tuned without a release).')
  assert.match(experimentSentence(agentRecord(plan, 'unclear', { checked: ['RETRIES'], unclear: ['PORT'] })),
    /^Not measured: which variable sets UpstreamAgent's maxSockets \(6\) could not be told: with PORT set to a test value the server did not start, .* \(RETRIES does not set it\)\./)
  assert.match(experimentSentence(agentRecord(plan, 'no-command')), /^Not measured: RETRIES and PORT may set UpstreamAgent's maxSockets \(6\); finding which, and what a bigger pool does, needs the server restarted/)
})

test('the reads of every thread of the serving processes, each variable at its earliest, a package\'s told from the app\'s', () => {
  const thread = (/** @type {any[]} */ env) => /** @type {any} */ ({ hello: { cwd: '/srv/app' }, env })
  const reads = envReads([
    thread([
      { name: 'POOL', set: false, value: null, site: { function: 'T', file: '/srv/app/node_modules/sdk/t.js', line: 9 }, time: 20 },
      { name: 'PORT', set: true, value: '8080', site: { function: 'f', file: 'file:///srv/app/config.js', line: 2 }, time: 10 }
    ]),
    thread([{ name: 'POOL', set: false, value: null, site: { function: 'T', file: '/srv/app/node_modules/sdk/t.js', line: 9 }, time: 5 }])
  ], '/srv/app')
  assert.deepEqual(reads, [
    { name: 'POOL', set: false, value: null, site: { function: 'T', file: 'node_modules/sdk/t.js', line: 9 }, dependency: true },
    { name: 'PORT', set: true, value: '8080', site: { function: 'f', file: 'config.js', line: 2 }, dependency: false }
  ])
})
