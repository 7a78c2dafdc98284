// The culprits of a verdict, as facts: the code to blame, with its share and where it runs. The same thing one layer
// up, in words: src/report/words/culprits.js.
import { appRootOf, displayPath } from './paths.js'
import { allocationCulprits, cpuCulprits, threadOf } from './profile-culprits.js'
import { THRESHOLDS } from './thresholds.js'
import { growingCostOf, largeAvoidable } from './rules.js'
import { waitCulprits } from './wait-culprits.js'
import { adviseFrom } from './recommendations.js'

/**
 * @typedef {object} Culprit
 * @property {string} function as V8 names it (`(anonymous)` when it has none)
 * @property {string} [label] for an anonymous function, a name read from its source (`createServer callback`,
 *   `(anonymous in buildReport)`): what to show a person
 * @property {string} file as the target sees it: relative to its working directory when inside it
 * @property {number} line 1-based
 * @property {number} share 0..1 of the CPU (or of sampled allocations, for `measure: 'allocations'`) of the threads it
 *   was looked for in: the serving threads, or, for a culprit found only in busy worker threads, those threads
 * @property {'app' | 'dependency' | 'node' | 'v8'} kind
 * @property {'cpu' | 'allocations' | 'listeners' | 'waits' | 'retained'} measure what `share` is a share of (`waits`:
 *   of the requests' time on the server, spent waiting there; `retained`: of what the load left alive, found in heap
 *   snapshots — the culprit is the variable or property that keeps it)
 * @property {CulpritThread[]} [threads] where it was found, the one it takes most in first: cluster workers run the
 *   same code, so one culprit may come from several processes (absent only where the run does not tell)
 * @property {CulpritFacts} [facts] why it is blamed, in numbers (the report words it as the culprit's `reason`)
 * @property {import('./wait-culprits.js').WaitFacts} [wait] for `measure: 'waits'` found by tracing requests: what
 *   they wait on there, how often and how long, in numbers
 * @property {{ function: string, label?: string, file: string, line: number, kind: string, share: number }[]} [calls] where
 *   its time goes
 * @property {import('../heap/describe-groups.js').Retainer[]} [retainers] for `measure: 'retained'`: the shortest path that
 *   keeps the objects alive, from them outwards
 */

/**
 * Why a culprit found other than by sampling is blamed: the listener it adds, the calls it waits on, the line where
 * requests wait or the pool they queue for.
 * @typedef {{ kind: 'adds-listener', event: string, emitter: string, count: number }
 *   | { kind: 'outgoing-calls', target: string, calls: number, meanMs: number, maxMs: number, failed: number }
 *   | ({ kind: 'waits' } & import('./wait-line.js').WaitLine)
 *   | ({ kind: 'creates-pool' } & import('./wait-line.js').WaitLine)
 *   | { kind: 'keeps', holding: string | null, holder: string, constructor: string, count: number, bytes: number, bytesPerRequest: number | null, path: string[], agentQueue?: AgentQueue | null }
 *   | { kind: 'runs-middleware', packages: { name: string, function: string }[], share: number, of: number }
 *   | { kind: 'avoidable', cost: import('./signals-avoidable.js').AvoidableSignal }
 *   | { kind: 'allocates-itself', share: number, of: number, lineFrom: 'cpu-time' | 'function' }} CulpritFacts
 *   allocates-itself: most of what an allocation culprit allocates is its own object and array literals and strings,
 *   which V8's heap sampling gives no line: their share of the profile, `of` the culprit's, and whether its line is
 *   where its CPU time goes (`cpu-time`) or its first line (`function`)
 *   runs-middleware: much of the culprit's CPU went into code another package patched into what it called (a session
 *   middleware's res.end), with the packages from that one down, its share of the profile and `of` the culprit's time
 */

/**
 * @typedef {object} CulpritThread
 * @property {number} pid
 * @property {number} threadId 0 for a process's main thread, else the worker thread's id
 */

/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */

/**
 * The code to blame, most responsible first: where a leaking listener is added, then the functions that burn the CPU
 * (or, for gc and memory-leak, allocate the most) in the threads that serve the load, and those that keep the
 * serving processes' busy worker threads busy.
 * @param {import('./run-data.js').RunData} data
 * @param {import('./signals.js').Signals} signals
 * @param {import('./rules.js').Category} category
 * @param {{ limit?: number }} [opts]
 * @returns {Culprit[]}
 */
export function collectCulprits (data, signals, category, opts = {}) {
  const limit = opts.limit ?? 5
  const serving = data.threads.filter(t => t.listening.some(l => l.port === signals.port))
  const threads = serving.length > 0 ? serving : data.threads.filter(t => t.pid === data.run.listening.pid && t.threadId === 0)
  const cwd = String(threads[0]?.hello.cwd ?? data.run.cwd)
  const appRoot = threads[0] ? appRootOf(threads[0].hello, data.run.cwd) : cwd

  const served = cpuCulprits(data, threads, appRoot, cwd)
  // Garbage is judged by everything allocated; a leak by what survived.
  const allocations = category === 'gc' || category === 'memory-leak'
    ? allocationCulprits(data, threads, category === 'memory-leak' ? 'heapRetained' : 'heapAllocations', appRoot, cwd, served.model)
    : []
  // A pool's threads run the same code: one model over the busy ones, as over a cluster's workers.
  const pool = busyHelpers(data, signals)
  const pooled = pool.length > 0 ? cpuCulprits(data, pool, appRoot, cwd).culprits : []

  /** @type {Culprit[]} */
  const out = []
  const leak = listenerCulprit(signals, served.culprits, cwd)
  if (leak) out.push(leak)
  // A leak is to blame on what keeps it: the variable or property heap snapshots found holding what the load left.
  if (category === 'memory-leak') out.push(...retainedCulprits(signals, cwd, threads))
  // A server that waits is to blame where its requests wait: the lines the wait tracer found, then the outgoing
  // HTTP calls it timed that take a real part of its time (all of them, when no request could be traced).
  // A healthy server that makes its round trips one by one (N+1) is told where: the cheapest win it has.
  if (category === 'healthy') {
    for (const c of waitCulprits(signals, cwd)) {
      if (c.wait?.role === 'wait' && c.wait.sequential !== null && out.length < 2) out.push(c)
    }
  }
  if (category === 'io') {
    for (const c of waitCulprits(signals, cwd)) {
      if (out.length < 3) out.push(c)
    }
    const traced = new Set(out.map(c => `${c.file}:${c.line}`))
    for (const o of signals.outgoing) {
      if (out.length >= 3 || o.share < THRESHOLDS.waitShare || o.site === null || traced.has(`${o.site.file}:${o.site.line}`)) continue
      out.push(outgoingCulprit(o, o.site, threadsCalling(data, threads, o.target)))
    }
  }
  const cpu = served.culprits
  const main = category === 'gc' || category === 'memory-leak'
    ? [...allocations, ...cpu]
    : category === 'io'
      ? [...cpu.filter(startsIo), ...cpu.filter(c => !startsIo(c))]
      : cpu
  // A healthy verdict with a saturated pool is about the pool: its hottest code first, when it is busier than the
  // event loop. Every other verdict is about the serving threads.
  const poolFirst = category === 'healthy' && signals.helpers.utilization > signals.loop.utilization
  const ordered = poolFirst ? interleave(pooled, main, limit - out.length) : interleave(main, pooled, limit - out.length)
  for (const c of ordered) {
    if (out.length >= limit) break
    // The same place found by allocations and by CPU says two things (what it allocates, what it costs): both stay.
    if (!out.some(o => o.file === c.file && o.line === c.line && o.function === c.function && (o.measure === 'allocations') === (c.measure === 'allocations'))) out.push(c)
  }
  markAvoidable(out, signals, category, limit)
  // A cost per request that climbs is spent where the code works (first), and caused by what grows: the holder second.
  const grows = category !== 'memory-leak' ? growingCostOf(signals)?.grows : null
  if (grows) {
    const held = retainedCulprits(signals, cwd, threads).find(c => c.label === `${grows.holding} (${grows.holder})` && c.line === (grows.line ?? 0))
    if (held) out.splice(Math.min(1, out.length), 0, held)
    if (out.length > limit) out.pop()
  }
  return out
}

/**
 * The app functions that do work the request path need not do: blamed at the line that does it, with why. The largest,
 * when it is large enough to be the verdict's concern, comes first (after a leaking listener's line); found nowhere
 * among the culprits (a share spread over callbacks), it is added.
 * @param {Culprit[]} out changed in place
 * @param {import('./signals.js').Signals} signals
 * @param {import('./rules.js').Category} category
 * @param {number} limit
 */
function markAvoidable (out, signals, category, limit) {
  const large = category === 'insufficient-data' ? null : largeAvoidable(signals)
  for (const cost of signals.avoidable?.costs ?? []) {
    const site = cost.site
    if (site === null || cost.share < adviseFrom(cost)) continue
    const i = out.findIndex(c => c.measure === 'cpu' && c.file === site.file && c.function === site.function && (c.label ?? '') === (site.label ?? ''))
    /** @type {Culprit} */
    const marked = i === -1
      ? { function: site.function, ...(site.label ? { label: site.label } : {}), file: site.file, line: site.line, share: cost.share, kind: 'app', measure: 'cpu', facts: { kind: 'avoidable', cost } }
      : { ...out[i], line: site.line, facts: { kind: 'avoidable', cost } }
    if (i !== -1) out.splice(i, 1)
    else if (cost !== large) continue
    // First where it is the verdict's concern; second, after the verdict's own first culprit, beside another.
    const first = cost === large && (category === 'event-loop' || category === 'healthy')
    const at = first ? out.findIndex(c => c.measure !== 'listeners') : i === -1 ? Math.min(1, out.length) : i
    out.splice(at === -1 ? out.length : at, 0, marked)
  }
  if (out.length > limit) out.length = limit
}

/**
 * Where a leaking listener is added, when the serving processes' listeners for one event grew past the threshold.
 * @param {import('./signals.js').Signals} signals
 * @param {Culprit[]} cpu the serving threads' CPU culprits
 * @param {string} cwd
 * @returns {Culprit | null}
 */
function listenerCulprit (signals, cpu, cwd) {
  const leak = signals.listeners.find(l => l.count >= THRESHOLDS.listeners)
  if (!leak?.site) return null
  return {
    function: String(leak.site.function || '(anonymous)'),
    file: displayPath(String(leak.site.file), cwd),
    line: Number(leak.site.line) || 0,
    share: listenerShare(cpu),
    kind: 'app',
    measure: 'listeners',
    threads: [{ pid: Number(leak.pid) || 0, threadId: Number(leak.threadId) || 0 }],
    facts: { kind: 'adds-listener', event: leak.event, emitter: leak.emitter, count: leak.count }
  }
}

/**
 * The line that makes an outgoing HTTP call the requests wait on, as the probe timed it.
 * @param {import('./signals.js').OutgoingSignal} o
 * @param {NonNullable<import('./signals.js').OutgoingSignal['site']>} site
 * @param {CulpritThread[]} threads
 * @returns {Culprit}
 */
function outgoingCulprit (o, site, threads) {
  const anonymous = site.function.startsWith('(anonymous')
  return {
    function: anonymous ? '(anonymous)' : site.function,
    ...(anonymous && site.function !== '(anonymous)' ? { label: site.function } : {}),
    file: site.file,
    line: site.line,
    share: o.share,
    kind: /\bnode_modules\b/.test(site.file) ? 'dependency' : 'app',
    measure: 'waits',
    threads,
    facts: { kind: 'outgoing-calls', target: o.target, calls: o.calls, meanMs: o.meanMs, maxMs: o.maxMs, failed: o.failed }
  }
}

/**
 * @param {import('./signals.js').Signals} signals
 * @param {string} cwd
 * @param {ThreadRecord[]} threads the serving threads
 * @returns {Culprit[]}
 */
function retainedCulprits (signals, cwd, threads) {
  const r = signals.memory.retained
  if (!r || r.culprits.length === 0) return []
  const total = r.culprits.reduce((a, c) => a + c.bytes, 0)
  // One culprit per holding place: a leaked entry and the objects it holds can be two groups under one variable.
  const seen = new Set()
  const distinct = r.culprits.filter(c => {
    const at = `${c.file}:${c.line}:${c.holding}`
    if (seen.has(at)) return false
    seen.add(at)
    return true
  })
  return distinct.slice(0, 2).map(c => {
    const queue = agentQueueOf(c, signals, threads, cwd)
    const file = queue?.created?.file ?? (c.file ? displayPath(c.file, cwd) : '(unknown)')
    return {
      function: c.function ?? c.holding ?? c.holder,
      ...(c.holding ? { label: queue ? `${c.holding} (the queue of ${queue.agent}, maxSockets ${queue.maxSockets})` : `${c.holding} (${c.holder})` } : {}),
      file,
      line: queue?.created?.line ?? c.line ?? 0,
      share: total > 0 ? c.bytes / total : 0,
      kind: /** @type {'dependency' | 'app'} */ (/\bnode_modules\b/.test(file) ? 'dependency' : 'app'),
      measure: /** @type {const} */ ('retained'),
      // Snapshots are of the loaded process's main thread.
      threads: threads.filter(t => t.threadId === 0).slice(0, 1).map(t => ({ pid: t.pid, threadId: 0 })),
      facts: { kind: /** @type {const} */ ('keeps'), holding: c.holding, holder: c.holder, constructor: c.constructor, count: c.count, bytes: c.bytes, bytesPerRequest: c.bytesPerRequest, path: pathUpTo(c), agentQueue: queue },
      retainers: c.retainers
    }
  })
}

/**
 * When what the load left alive is held in an HTTP agent's queue of requests waiting for a socket (node:http keeps
 * them in the agent's `requests`, per origin), and that agent queued during the load: the agent, its limit, how many
 * waited at once, and where the app created it.
 * @param {import('../heap/describe-groups.js').Culprit} c
 * @param {import('./signals.js').Signals} signals
 * @param {ThreadRecord[]} threads the serving threads
 * @param {string} cwd
 * @returns {AgentQueue | null}
 */
function agentQueueOf (c, signals, threads, cwd) {
  const step = c.retainers.find(r => r.name === c.holding)
  if (step === undefined || step.name !== 'requests') return null
  const agent = signals.agents.find(a => a.agent === step.holder && a.maxQueued > 0)
  if (agent === undefined) return null
  const made = threads.flatMap(t => t.constructions).findLast(k => k.classes.includes(agent.agent))
  return {
    agent: agent.agent,
    maxSockets: agent.maxSockets,
    maxQueued: agent.maxQueued,
    created: made ? { file: displayPath(made.site.file, cwd), line: made.site.line } : null
  }
}

/**
 * @typedef {object} AgentQueue an HTTP agent's queue of requests waiting for a socket, as it held what a leak kept
 * @property {string} agent its class
 * @property {number} maxSockets
 * @property {number} maxQueued requests waiting at once at most, during the load
 * @property {{ file: string, line: number } | null} created where the app created it
 */

/**
 * The names on a retainer path from the kept objects up to the one that holds them (a few steps when none does).
 * @param {import('../heap/describe-groups.js').Culprit} c
 */
function pathUpTo (c) {
  const at = c.retainers.findIndex(r => r.name === c.holding)
  return c.retainers.slice(0, at >= 0 ? at + 1 : 4).map(r => `${r.name} in ${r.holder}`)
}

/**
 * The serving processes' other threads (worker pools) that were busy: their own code is to blame for that.
 * @param {import('./run-data.js').RunData} data
 * @param {import('./signals.js').Signals} signals
 * @returns {ThreadRecord[]}
 */
function busyHelpers (data, signals) {
  const servingPids = new Set(signals.threads.filter(t => t.serving).map(t => t.pid))
  const busy = signals.threads.filter(t => !t.serving && servingPids.has(t.pid) && t.utilization >= THRESHOLDS.busy)
  return data.threads.filter(t => busy.some(b => b.pid === t.pid && b.threadId === t.threadId))
}

/**
 * The threads whose outgoing calls include `target`.
 * @param {import('./run-data.js').RunData} data
 * @param {ThreadRecord[]} serving
 * @param {string} target
 * @returns {CulpritThread[]}
 */
function threadsCalling (data, serving, target) {
  const pids = new Set(serving.map(t => t.pid))
  return data.threads
    .filter(t => pids.has(t.pid) && t.outgoing.some(snap => snap.outgoing.some(o => String(o?.target) === target)))
    .map(threadOf)
}

/**
 * The first list's items, keeping room for a few of the second's: both kinds of culprit stay in sight.
 * @template T
 * @param {T[]} first
 * @param {T[]} second
 * @param {number} room how many will be shown
 * @param {number} [reserve] places kept for the second list
 * @returns {T[]}
 */
function interleave (first, second, room, reserve = 2) {
  const kept = Math.min(reserve, second.length)
  const head = Math.max(0, room - kept)
  return [...first.slice(0, head), ...second.slice(0, kept), ...first.slice(head), ...second.slice(kept)]
}
const IO_MODULE = /^node:(internal\/)?(https?|_http_client|net|tls|dns|fs|dgram|child_process|internal\/fs|internal\/http)\b/

/**
 * An app function that starts outgoing I/O (an HTTP call, a socket, a file read): for a server that waits, the code
 * that makes it wait.
 * @param {Culprit} c
 */
function startsIo (c) {
  return c.kind === 'app' && (c.calls ?? []).some(k => IO_MODULE.test(k.file))
}

/**
 * What the listeners cost: the share of the top CPU culprit reached through an event emit, when there is one.
 * @param {Culprit[]} cpu
 */
function listenerShare (cpu) {
  const viaEmit = cpu.filter(c => c.calls?.some(k => k.function === 'emit') || c.function === 'emit')
  return viaEmit.length > 0 ? viaEmit[0].share : (cpu[0]?.share ?? 0)
}
