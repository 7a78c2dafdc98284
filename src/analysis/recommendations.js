import { avoidableCost, avoidableOnly, dominantGc, growingCostOf, nearHeapLimit, ownUtilization } from './rules.js'
import { THRESHOLDS } from './thresholds.js'
import { poolIsFull, queueIsMinor, waitLine } from './wait-line.js'

/** @typedef {import('./signals.js').Signals} Signals */
/** @typedef {import('./rules.js').Category} Category */
/** @typedef {{ function: string, label?: string, file: string, line: number, share: number, kind: string, measure?: string, threads?: { pid: number, threadId: number }[], facts?: import('./culprits.js').CulpritFacts }} CulpritLike */
/** @typedef {{ function: string, label?: string, file: string, line: number }} CodeAt a culprit as advice names it */
/** @typedef {import('./wait-line.js').WaitLine} WaitLine */

/**
 * One thing to do, as facts: what (`kind`) and the numbers, names and places the advice cites. The report words it
 * (src/report/words/advice.js).
 * @typedef {{ kind: 'make-cheaper', culprit: CodeAt }
 *   | { kind: 'move-cpu-work' }
 *   | { kind: 'profile', command: string }
 *   | { kind: 'pool-too-small', wait: WaitLine }
 *   | { kind: 'n-plus-one', wait: WaitLine }
 *   | { kind: 'parallel-round-trips', wait: WaitLine }
 *   | { kind: 'slow-wait', wait: WaitLine }
 *   | { kind: 'middleware-wait', wait: WaitLine }
 *   | { kind: 'middleware-cpu', culprit: CodeAt, packages: { name: string, function: string }[], share: number }
 *   | { kind: 'app-queue', wait: WaitLine }
 *   | { kind: 'slow-outgoing', target: string, share: number, meanMs: number, perRequest: number, site: { file: string, line: number } | null }
 *   | { kind: 'find-waits' }
 *   | { kind: 'agent-queue', agent: string, maxSockets: number, maxQueued: number }
 *   | { kind: 'check-pool-sizes' }
 *   | { kind: 'scavenges' }
 *   | { kind: 'heap-near-limit', heapUsed: number, heapLimit: number }
 *   | { kind: 'old-generation' }
 *   | { kind: 'allocates-most', culprit: CodeAt }
 *   | { kind: 'keeps-alive', culprit: CodeAt }
 *   | { kind: 'bound-holder', culprit: CodeAt }
 *   | { kind: 'agent-queue-grows', queue: import('./culprits.js').AgentQueue, starts: CodeAt | null }
 *   | { kind: 'growing-collections' }
 *   | { kind: 'heap-snapshots', target: string }
 *   | { kind: 'growing-state', growing: import('./rules.js').GrowingCost, target: string }
 *   | { kind: 'worker-pool-busy', utilization: number, task: (CodeAt & { share: number }) | null }
 *   | { kind: 'one-core-busy' }
 *   | { kind: 'one-core-hotspot', culprit: CodeAt, share: number }
 *   | { kind: 'compare-runs' }
 *   | { kind: 'load-longer' }
 *   | { kind: 'listener-leak', count: number, event: string, emitter: string, site: { file: string, line: number } | null }
 *   | { kind: 'long-task', delayMaxMs: number }
 *   | { kind: 'fix-target-error', error: { message: string, at: { function: string, file: string, line: number } | null }, stderrLines: number }
 *   | { kind: 'find-why-target-stopped' }
 *   | { kind: 'await-or-bound', work: import('./floating-work.js').FloatingWork }
 *   | { kind: 'heap-exhausted' | 'memory-killed', heap: import('./heap-exhaustion.js').HeapExhaustion, target: string, retry?: import('./heap-retry.js').HeapRetry }
 *   | { kind: 'fix-on-port', command: string }
 *   | { kind: 'load-a-2xx-path' }
 *   | { kind: 'slower-than-timeout', timeouts: number, timeoutSeconds: number }
 *   | { kind: 'record-again', command: string }
 *   | { kind: 'measured-setting', experiment: import('./experiments.js').Experiment }
 *   | { kind: 'stop-stack-traces', cost: AvoidableSignal, stackTraceLimit: number | null }
 *   | { kind: 'use-async-api', cost: AvoidableSignal }
 *   | { kind: 'read-files-once', cost: AvoidableSignal }
 *   | { kind: 'hoist-require', cost: AvoidableSignal }
 *   | { kind: 'precompile', installed: import('./signals-avoidable.js').Installed, stackTraceLimit: number | null }
 *   | { kind: 'remove-polyfill', polyfill: import('./signals-avoidable.js').PolyfillSignal }
 *   | { kind: 'overload-protection', utilization: number, connections: number, latencyMeanMs: number, serverTimeMs: number }
 *   | { kind: 'fewer-calls', calls: import('./calls-after.js').CallsAfter }} Advice
 */

/** Calls a request makes from one line for them to come before the CPU advice: a loop's, not a lookup and a write. */
const N_PLUS_ONE = 3

/** @typedef {import('./signals-avoidable.js').AvoidableSignal} AvoidableSignal */

/**
 * What to do next, most useful first: the fix for the category, then what else the evidence showed.
 * @param {Category} category
 * @param {Signals} s
 * @param {CulpritLike[]} culprits
 * @param {{ command: string[], attached?: number }} run
 * @returns {Advice[]}
 */
export function recommend (category, s, culprits, run) {
  // The code that burns the serving threads' CPU (or allocates), not the place a leaking listener is added, nor what
  // keeps a worker pool busy: those get their own advice.
  const served = culprits.filter(c => c.measure !== 'listeners' && c.measure !== 'waits' && !inPool(c, s))
  const top = served.find(c => c.kind === 'app') ?? served[0]
  const where = top ? codeAt(top) : null
  /** @type {Advice[]} */
  const out = []
  // Work the request path need not do comes first where it holds the loop, after the category's own advice elsewhere.
  const avoidable = category === 'insufficient-data' ? [] : avoidableAdvice(s)
  const saturated = saturation(s)
  switch (category) {
    case 'event-loop': {
      // A line that calls another server several times a request (an N+1) on a saturated loop: each call is the
      // client's CPU too, and one call for all of them is the change that frees the most of it.
      const calls = s.calls && s.calls.most.perRequest >= N_PLUS_ONE ? s.calls : null
      if (calls) out.push({ kind: 'fewer-calls', calls })
      out.push(...avoidable)
      // A middleware's code run inside the route's call (its res.end wrapper) is the middleware's to trim, not the
      // route's.
      const patched = top?.facts?.kind === 'runs-middleware' ? top.facts : null
      if (patched && where) out.push({ kind: 'middleware-cpu', culprit: where, packages: patched.packages, share: patched.share })
      // The avoidable cost's own advice names its function already.
      const named = avoidable.some(a => 'cost' in a && a.cost.site !== null && where !== null && a.cost.site.file === where.file && a.cost.site.function === where.function)
      if (where && !named && (!patched || patched.of < 0.5)) out.push({ kind: 'make-cheaper', culprit: where })
      // A loop held by work it need not do has its remedy above; moving CPU work elsewhere is for work it must do.
      if (!(named && avoidableCost(s) !== null && avoidableOnly(s))) out.push({ kind: 'move-cpu-work' })
      if (s.calls && !calls) out.push({ kind: 'fewer-calls', calls: s.calls })
      if (saturated) out.push(saturated)
      out.push({ kind: 'profile', command: run.command.join(' ') })
      break
    }
    case 'io':
      out.push(...ioAdvice(s))
      break
    case 'gc': {
      const kind = dominantGc(s)
      if (kind === 'scavenge') out.push({ kind: 'scavenges' })
      else if (nearHeapLimit(s)) out.push({ kind: 'heap-near-limit', heapUsed: s.memory.oldPeak, heapLimit: s.memory.oldLimit })
      else out.push({ kind: 'old-generation' })
      if (where) out.push({ kind: 'allocates-most', culprit: where })
      break
    }
    case 'memory-leak': {
      // What keeps the leak (heap snapshots after the load) comes first; then the code that allocates what it keeps.
      const holder = culprits.find(c => c.measure === 'retained')
      const allocates = served.find(c => c.measure === 'allocations' && c.kind === 'app') ?? served.find(c => c.measure === 'allocations')
      const queue = holder?.facts?.kind === 'keeps' ? holder.facts.agentQueue ?? null : null
      if (queue) out.push({ kind: 'agent-queue-grows', queue, starts: allocates ? codeAt(allocates) : null })
      else if (holder) out.push({ kind: 'bound-holder', culprit: codeAt(holder) })
      if (allocates) out.push({ kind: 'keeps-alive', culprit: codeAt(allocates) })
      else if (where && !holder) out.push({ kind: 'keeps-alive', culprit: where })
      out.push({ kind: 'growing-collections' })
      if (!holder) out.push({ kind: 'heap-snapshots', target: heapTarget(run) })
      break
    }
    case 'healthy':
      out.push(...avoidable)
      // A server fast enough to be healthy can still make its round trips one by one: the cheapest win it has.
      out.push(...waitAdvice(s).filter(a => a.kind === 'n-plus-one'))
      if (s.helpers.utilization >= THRESHOLDS.busy) {
        const task = culprits.find(c => c.measure === 'cpu' && inPool(c, s))
        out.push({ kind: 'worker-pool-busy', utilization: s.helpers.utilization, task: task ? { ...codeAt(task), share: task.share } : null })
      }
      if (ownUtilization(s) >= THRESHOLDS.busy) out.push({ kind: 'one-core-busy' })
      if (saturated) out.push(saturated)
      if (where && top && top.share >= 0.2 && !avoidable.some(a => 'cost' in a && a.cost.site?.file === where.file && a.cost.site.function === where.function)) out.push({ kind: 'one-core-hotspot', culprit: where, share: top.share })
      out.push({ kind: 'compare-runs' })
      break
    case 'insufficient-data':
      out.push({ kind: 'load-longer' })
      break
  }
  if (category === 'io' || category === 'gc' || category === 'memory-leak') out.push(...avoidable)
  const leak = s.listeners.find(l => l.count >= THRESHOLDS.listeners)
  if (leak) {
    out.unshift({ kind: 'listener-leak', count: leak.count, event: leak.event, emitter: leak.emitter, site: leak.site ? { file: leak.site.file, line: leak.site.line } : null })
  }
  if (category === 'event-loop' && s.loop.delayMax >= 1000) out.push({ kind: 'long-task', delayMaxMs: s.loop.delayMax })
  // Whatever the category, a cost that climbs with every request is the cause behind it: told first — after the
  // listener leak, when there is one: a listener added per request is such a state, and every emit runs them all.
  const growing = category === 'insufficient-data' ? null : growingCostOf(s)
  if (growing) out.splice(leak ? 1 : 0, 0, { kind: 'growing-state', growing, target: heapTarget(run) })
  // Work fired on the request path and not awaited outlives the response: where the heap grows, it is what holds it
  // (each keeps its data until it is done), so it comes first — after what heap snapshots found keeping the leak, the
  // proof of where it sits (an agent's queue that grows says itself that its requests are not awaited); elsewhere
  // after the category's own advice.
  const floating = category === 'insufficient-data' ? undefined : s.floating[0]
  if (floating) {
    const advice = { kind: /** @type {const} */ ('await-or-bound'), work: floating }
    if (category === 'memory-leak') out.splice(out.findIndex(a => a.kind === 'agent-queue-grows' || a.kind === 'bound-holder') + 1, 0, advice)
    else {
      // (before the generic "compare runs" that closes a healthy verdict's advice)
      const generic = out.findIndex(a => a.kind === 'compare-runs')
      out.splice(generic >= 0 ? generic : out.length, 0, advice)
    }
  }
  return out
}

/**
 * What to do about the work the serving threads need not do, largest first: each cost that takes a noticeable share
 * of their CPU, the precompile advice for a replacement of the runtime's (a stack formatter, a require hook) that
 * took a noticeable share in it — before the cost's own, as it is the cause — and the polyfills whose code does.
 * @param {Signals} s
 * @returns {Advice[]}
 */
function avoidableAdvice (s) {
  const a = s.avoidable
  if (!a) return []
  /** @type {Advice[]} */
  const out = []
  const precompiled = new Set()
  for (const cost of a.costs) {
    if (cost.share < adviseFrom(cost)) continue
    const installed = cost.installed
    if (installed && installed.share >= THRESHOLDS.adviseShare && !precompiled.has(installed.hook)) {
      precompiled.add(installed.hook)
      out.push({ kind: 'precompile', installed, stackTraceLimit: a.stackTraceLimit })
    }
    switch (cost.kind) {
      case 'stack-trace':
        out.push({ kind: 'stop-stack-traces', cost, stackTraceLimit: a.stackTraceLimit })
        break
      case 'sync-fs':
        out.push({ kind: 'read-files-once', cost })
        break
      case 'require':
        out.push({ kind: 'hoist-require', cost })
        break
      default:
        out.push({ kind: 'use-async-api', cost })
    }
  }
  for (const polyfill of a.polyfills) {
    if (polyfill.share >= THRESHOLDS.adviseShare) out.push({ kind: 'remove-polyfill', polyfill })
  }
  return out
}

/**
 * The share of the CPU from which an avoidable cost is advised on: require() on the request path from less, as
 * hoisting it costs nothing (a package's own require() is not the app's to hoist).
 * @param {AvoidableSignal} cost
 */
export function adviseFrom (cost) {
  return cost.kind === 'require' && cost.via === null ? THRESHOLDS.hoistShare : THRESHOLDS.adviseShare
}

/**
 * A closed-loop load that saturates the server: its loop busy by its own work, and requests waiting mostly for those
 * ahead of them (the latency the load measured well above the time each takes on the server) — what overload
 * protection is for: past a threshold it answers at once, and a load balancer sends the excess elsewhere.
 * @param {Signals} s
 * @returns {Advice | null}
 */
function saturation (s) {
  const l = s.load
  if (!l || !l.closedLoop || l.connections < 2) return null
  // The loop's utilisation with the time it queued for a CPU: the server is as saturated to its clients on a shared core.
  if (s.loop.utilization < THRESHOLDS.saturated) return null
  const serverTimeMs = s.requests.serverTimeMean
  if (!(serverTimeMs > 0) || l.latencyMeanMs < THRESHOLDS.queueing * serverTimeMs) return null
  return { kind: 'overload-protection', utilization: s.loop.utilization, connections: l.connections, latencyMeanMs: l.latencyMeanMs, serverTimeMs }
}

/**
 * What to do about a server that waits: the lines where its requests wait, the outgoing calls it makes, its agents.
 * @param {Signals} s
 * @returns {Advice[]}
 */
function ioAdvice (s) {
  /** @type {Advice[]} */
  const out = waitAdvice(s)
  const waitLines = new Set(s.waits.sites.map(w => `${w.site.file}:${w.site.line}`))
  for (const o of s.outgoing) {
    if (o.share < THRESHOLDS.waitShare || (o.site && waitLines.has(`${o.site.file}:${o.site.line}`))) continue
    out.push({ kind: 'slow-outgoing', target: o.target, share: o.share, meanMs: o.meanMs, perRequest: o.perRequest, site: o.site ? { file: o.site.file, line: o.site.line } : null })
  }
  if (out.length === 0) out.push({ kind: 'find-waits' })
  // An agent whose queue the wait tracer blamed on its construction has had its say.
  const pooled = s.waits.sites.some(w => w.pool?.site && w.queue && w.queue.msPerWait >= THRESHOLDS.poolQueueMs)
  for (const a of pooled ? [] : s.agents) out.push({ kind: 'agent-queue', agent: a.agent, maxSockets: a.maxSockets, maxQueued: a.maxQueued })
  if (!s.waits.sites.some(w => w.share >= THRESHOLDS.waitShare)) out.push({ kind: 'check-pool-sizes' })
  return out
}

/**
 * What to do about the lines where requests wait, most time first: a pool too small, an N+1, a slow call.
 * @param {Signals} s
 * @returns {Advice[]}
 */
function waitAdvice (s) {
  /** @type {Advice[]} */
  const out = []
  for (const w of s.waits.sites) {
    if (w.share < THRESHOLDS.waitShare) continue
    const wait = waitLine(w)
    if (w.behind) {
      out.push({ kind: 'app-queue', wait })
      continue
    }
    const pool = wait.queue !== null && poolIsFull(wait.pool) && !queueIsMinor(wait)
    if (pool) out.push({ kind: 'pool-too-small', wait })
    if (w.sequential) out.push({ kind: 'n-plus-one', wait })
    else if (w.parallel && w.perRequest >= THRESHOLDS.sequentialWaits) out.push({ kind: 'parallel-round-trips', wait })
    else if (!pool) out.push({ kind: wait.via?.outsideApp ? 'middleware-wait' : 'slow-wait', wait })
  }
  return out
}

/**
 * How to point `hotpath heap` at the same target.
 * @param {{ command: string[], attached?: number }} run
 */
export function heapTarget (run) {
  return run.attached ? `--attach ${run.attached}` : `-- ${run.command.join(' ')}`
}

/**
 * @param {CulpritLike} c
 * @returns {CodeAt}
 */
function codeAt (c) {
  return { function: c.function, ...(c.label ? { label: c.label } : {}), file: c.file, line: c.line }
}

/**
 * Whether a culprit was found only in threads that do not serve the load (a worker pool).
 * @param {CulpritLike} c
 * @param {Signals} s
 */
function inPool (c, s) {
  const threads = c.threads ?? []
  return threads.length > 0 && threads.every(t => s.threads.some(x => x.pid === t.pid && x.threadId === t.threadId && !x.serving))
}

/**
 * The advice once doctor's experiments measured the settings it names: a measured setting replaces the generic line
 * about it (`scavenges`, `heap-near-limit`, `agent-queue`) and comes first when it helped; one that did not help says
 * so where the generic line was. A setting that was not measured, or could not be, leaves the generic line as it was;
 * where an agent's limit is set is said after the advice about the agent, even when nothing was measured.
 * @param {Advice[]} advice
 * @param {import('./experiments.js').Experiment[]} experiments
 * @returns {Advice[]}
 */
export function withExperiments (advice, experiments) {
  const out = [...advice]
  for (const experiment of experiments) {
    /** @type {Advice} */
    const measured = { kind: 'measured-setting', experiment }
    // Where an agent's limit is set (in the code, or in a variable doctor could not restart the server with) is said
    // after the advice about the agent, measured or not.
    if (experiment.verdict === 'not-run') {
      // A setting not measured because the run did not ask: how to measure it, after the advice it would back.
      if (experiment.stopped === 'proposed') {
        const generic = genericAdvice(experiment)
        const at = generic === null ? -1 : out.findIndex(a => a.kind === generic)
        out.splice(at >= 0 ? at + 1 : experiment.why === 'agent-pool' ? agentAdviceEnd(out) : out.length, 0, measured)
      } else if (advisedUnmeasured(experiment)) {
        out.splice(agentAdviceEnd(out), 0, measured)
      }
      continue
    }
    const generic = genericAdvice(experiment)
    const at = out.findIndex(a => a.kind === generic)
    // An experiment that could not run measured nothing: the generic line stays, and the failure is said after it.
    const keep = experiment.verdict === 'failed'
    if (at >= 0 && !keep) out.splice(at, 1)
    if (experiment.verdict === 'helps') out.unshift(measured)
    else out.splice(at >= 0 ? at + (keep ? 1 : 0) : experiment.why === 'agent-pool' ? agentAdviceEnd(out) : out.length, 0, measured)
  }
  return out
}

/**
 * The advice about a setting that its experiment's measurement replaces.
 * @param {import('./experiments.js').Experiment} e
 * @returns {Advice['kind'] | null}
 */
function genericAdvice (e) {
  return e.why === 'scavenges' ? 'scavenges' : e.why === 'heap-near-limit' ? 'heap-near-limit' : e.why === 'agent-pool' ? 'agent-queue' : null
}

/**
 * Whether an experiment that measured nothing still has something to advise: where an agent's limit is set.
 * @param {import('./experiments.js').Experiment} e
 */
export function advisedUnmeasured (e) {
  return e.verdict === 'not-run' && e.why === 'agent-pool' && ['in-code', 'unclear', 'no-command'].includes(e.stopped)
}

/**
 * Just after the advice about an outgoing pool (a pool too small, an agent's queue), else at the end.
 * @param {Advice[]} advice
 */
function agentAdviceEnd (advice) {
  const i = advice.findLastIndex(a => a.kind === 'agent-queue' || a.kind === 'pool-too-small')
  return i === -1 ? advice.length : i + 1
}
