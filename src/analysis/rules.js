import { THRESHOLDS } from './thresholds.js'
import { waitLine } from './wait-line.js'

// The thresholds live in their own module (the evidence and the wait tracer use them too); they are exported here as
// well, where they have always been imported from.
export { THRESHOLDS }

/** @typedef {import('./signals.js').Signals} Signals */
/** @typedef {'event-loop' | 'io' | 'gc' | 'memory-leak' | 'healthy' | 'insufficient-data'} Category */

/**
 * What a verdict rests on, in numbers: which form of the verdict (`kind`) and the figures its summary cites. The
 * report words it (src/report/words/verdict.js).
 * @typedef {{ kind: 'short-coverage', coverage: number, minCoverage: number, logsMissing?: number }
 *   | { kind: 'no-requests' }
 *   | { kind: 'leak', bytesPerSecond: number, bytesPerRequest: number | null, growth: number, seconds: number }
 *   | { kind: 'gc', share: number, dominant: string | null }
 *   | { kind: 'no-request-finished', delayMaxMs: number }
 *   | { kind: 'cpu-per-request', cpuPerRequestMs: number, delayP99Ms: number }
 *   | { kind: 'long-tasks', delayMaxMs: number, delayP99Ms: number, cpuPerRequestMs: number }
 *   | { kind: 'waiting', serverTimeMs: number, cpuPerRequestMs: number, idle: number, runQueue: number | null, topWait: import('./wait-line.js').WaitLine | null, agent: { agent: string, maxSockets: number } | null }
 *   | { kind: 'healthy', requestsPerSecond: number, cpuPerRequestMs: number, delayP99Ms: number, busy: boolean }
 *   | { kind: 'avoidable', cost: import('./signals-avoidable.js').AvoidableSignal, cpuPerRequestMs: number, utilization: number }} RuleFacts
 */

/**
 * A verdict's facts, with the CPU other processes used when it was enough to distort them (else null), and the
 * other ports the target served HTTP on, which the verdict is not about (else null).
 * @typedef {RuleFacts & { otherCores: number | null, otherPorts: number[] | null, growingCost: GrowingCost | null, avoidable?: import('./signals-avoidable.js').AvoidableSignal | null, snapshots?: SnapshotFacts | null }} VerdictFacts
 *   avoidable: the largest avoidable cost, when it holds a large share of the serving threads' CPU (absent in runs
 *   analysed before hotpath looked)
 *   snapshots: the heap snapshots after the load (SnapshotFacts)
 */

/**
 * The heap snapshots doctor takes after the load when it left megabytes alive (`reason: 'kept'`) or each request cost
 * more than the last (`cost`): still to come after the verdict (`pending`), `taken`, `failed`, or `skipped` — `why`
 * `budget` (they would not have finished within `budget` seconds: `seconds` estimated for a heap of `heapBytes`),
 * `interrupted` (Ctrl-C), `not-asked` (the target was gone) or `unfinished` (hotpath stopped before them). `trend`: the heap trend's R² and what the full
 * collections around the load saw it keep, which a verdict without snapshots rests on. diagnose.js adds them.
 * @typedef {{ state: 'pending' | 'taken' | 'failed' | 'skipped', why?: 'budget' | 'interrupted' | 'not-asked' | 'unfinished', reason: 'kept' | 'cost', keptBytes: number,
 *   heapBytes: number | null, seconds: number | null, budget: number | null, target: string, trend: { r2: number, kept: number | null } | null }} SnapshotFacts
 */

/**
 * Each request costing more than the last at the same load, whatever the category: how much, over how many requests,
 * and the heap each request left alive (null when the heap was not measured after full collections, or kept nothing).
 * @typedef {{ firstMs: number, lastMs: number, requests: number, keptPerRequest: number | null, grows: GrowingHolder | null }} GrowingCost
 *   grows: what heap snapshots after the load found growing by about an object per request, when they were taken
 */

/**
 * The variable or property a growing state lives in, from the heap snapshots taken after the load.
 * @typedef {object} GrowingHolder
 * @property {string} holding the name (`history`)
 * @property {string} holder what it is (`Array`, `Map`)
 * @property {string} constructor of the objects it gains
 * @property {number} perRequest objects it gained per request of the snapshots' growth phase
 * @property {string | null} function
 * @property {string | null} file as the target saw it
 * @property {number | null} line
 */

/**
 * The rules, in the order they are tried; the first that holds names the category. Each is one sentence in
 * docs/diagnosis.md. Order matters where causes chain: a leak drives the GC up, GC pauses delay the event loop.
 * @type {{ category: Category, holds: (s: Signals) => boolean, decisive: string[], facts: (s: Signals) => RuleFacts }[]}
 */
export const RULES = [
  {
    category: 'insufficient-data',
    // nothing to judge: too few samples, or not one request served while the loop was never blocked
    holds: (s) => s.coverage < THRESHOLDS.minCoverage || (s.requests.finished === 0 && s.loop.delayMax < 1000),
    decisive: [],
    facts: (s) => s.coverage < THRESHOLDS.minCoverage
      ? { kind: 'short-coverage', coverage: s.coverage, minCoverage: THRESHOLDS.minCoverage }
      : { kind: 'no-requests' }
  },
  {
    category: 'memory-leak',
    holds: (s) => isLeak(s),
    decisive: ['heap-growth'],
    facts: (s) => {
      const t = /** @type {NonNullable<Signals['memory']['trend']>} */ (s.memory.trend)
      const perRequest = s.memory.perRequest !== null && s.memory.perRequest > 0 ? s.memory.perRequest : null
      return { kind: 'leak', bytesPerSecond: t.slope, bytesPerRequest: perRequest, growth: t.growth, seconds: t.seconds }
    }
  },
  {
    category: 'gc',
    holds: (s) => s.gc.share >= THRESHOLDS.gcShare,
    decisive: ['gc-time'],
    facts: (s) => ({ kind: 'gc', share: s.gc.share, dominant: dominantGc(s) })
  },
  {
    category: 'io',
    // Direct evidence decides: the traced requests spent most of their time on the server waiting on something
    // outside the process, and the serving threads' own time on a CPU (the probe's sampling left out) says they were
    // not busy computing. Figures that describe the thread as a whole — its CPU per request, its loop's utilisation
    // and delay — are moved by what else runs on the machine (a database on the same cores queues the server's
    // thread for a CPU) and by the probe itself; a server waiting 96% of its requests' time at one line read
    // `event-loop` on them.
    holds: (s) => waited(s) && !computing(s),
    decisive: ['wait', 'waits-traced', 'server-time'],
    facts: waitingFacts
  },
  {
    category: 'event-loop',
    // A busy loop whose CPU goes largely to work it need not do is held by that work, however cheap each request:
    // judged as a share of what the loop spends, not in ms, so that a faster CPU does not make a waste healthy.
    holds: (s) => blocked(s) || avoidableCost(s) !== null,
    decisive: ['event-loop-delay-p99', 'cpu-per-request', 'avoidable-cost'],
    facts: (s) => !blocked(s)
      ? { kind: 'avoidable', cost: /** @type {import('./signals-avoidable.js').AvoidableSignal} */ (avoidableCost(s)), cpuPerRequestMs: s.cpu.perRequestMs, utilization: s.loop.utilization }
      : s.requests.finished === 0
        ? { kind: 'no-request-finished', delayMaxMs: s.loop.delayMax }
        : s.cpu.perRequestMs >= THRESHOLDS.cpuPerRequest
          ? { kind: 'cpu-per-request', cpuPerRequestMs: s.cpu.perRequestMs, delayP99Ms: s.loop.delayP99 }
          : { kind: 'long-tasks', delayMaxMs: s.loop.delayMax, delayP99Ms: s.loop.delayP99, cpuPerRequestMs: s.cpu.perRequestMs }
  },
  {
    category: 'io',
    // waiting on something outside the process — not on its own busy worker threads
    // The loop idles; or, where the probe traced the requests' waits and found most of their time in them, it is
    // not saturated (a machine busy with the server's own database makes its loop read half busy; a client that
    // makes many round trips a request spends more than half a core at a few hundred requests a second).
    holds: (s) => (ownUtilization(s) < THRESHOLDS.idle || (waited(s) && ownUtilization(s) < THRESHOLDS.busy)) &&
      s.helpers.utilization < THRESHOLDS.busy &&
      servingCores(s) < (waited(s) ? THRESHOLDS.busy : THRESHOLDS.waitingCores) * s.servingProcesses &&
      s.requests.serverTimeMean >= THRESHOLDS.serverTime &&
      // Traced waits are direct evidence: their requests spent most of their time waiting, and the CPU is judged
      // against the rest (a client that makes six round trips a request spends a quarter of it encoding them).
      mostlyWaiting(s),
    decisive: ['server-time', 'event-loop-utilization'],
    facts: waitingFacts
  },
  {
    category: 'healthy',
    holds: () => true,
    decisive: [],
    facts: (s) => ({
      kind: 'healthy',
      requestsPerSecond: s.requests.rate,
      cpuPerRequestMs: s.cpu.perRequestMs,
      delayP99Ms: s.loop.delayP99,
      busy: ownUtilization(s) >= THRESHOLDS.busy
    })
  }
]

/**
 * Whether single tasks hold the event loop: a long p99 delay, a loop blocked with no request finished, or requests
 * that each cost much CPU on a busy loop.
 * @param {Signals} s
 */
function blocked (s) {
  return s.loop.delayP99 >= THRESHOLDS.delayP99 ||
    (s.requests.finished === 0 && s.loop.delayMax >= 1000) ||
    (s.cpu.perRequestMs >= THRESHOLDS.cpuPerRequest && s.loop.utilization >= THRESHOLDS.busy)
}

/**
 * Whether the event-loop verdict rests on an avoidable cost alone: no single task holds the loop.
 * @param {Signals} s
 */
export function avoidableOnly (s) {
  return !blocked(s)
}

/**
 * The avoidable cost that holds a busy loop: the largest, when it takes `avoidableShare` of the serving threads' CPU
 * or more while their loop is busy.
 * @param {Signals} s
 */
export function avoidableCost (s) {
  if (s.loop.utilization < THRESHOLDS.busy) return null
  return largeAvoidable(s)
}

/**
 * The largest avoidable cost, when it takes `avoidableShare` of the serving threads' CPU or more, busy loop or not.
 * @param {Signals} s
 */
export function largeAvoidable (s) {
  const top = s.avoidable?.costs[0]
  return top !== undefined && top.share >= THRESHOLDS.avoidableShare ? top : null
}

/**
 * Whether what survives GC grows as a leak does, not as garbage a full collection has yet to reclaim.
 * @param {Signals} s
 */
export function isLeak (s) {
  const t = s.memory.trend
  if (t === null || !(t.slope > 0)) return false
  // Heap snapshots taken after the load are the last word: when no group of the objects it made stays alive in a
  // number that grows with requests, the heap grew by something else (caches filled once, code compiled late).
  const retained = s.memory.retained
  if (retained && retained.culprits.length === 0) return false
  // The heap a sample reads after a full collection also holds what the thread allocated since: on a loaded machine
  // an 18 MB leak fitted r² 0.25–0.6 in about one run in three (test/doctor-heap-baseline.test.js). When the collections
  // around the load measured what it kept and the snapshots saw a group grow with requests, the fit's scatter is not
  // a doubt about the leak; without both, a straight enough line is asked for. (Snapshots read here found a group.)
  if (t.r2 < THRESHOLDS.leakR2 && !(t.settled && retained)) return false
  if (t.settled) {
    // Full collections at both ends of the load leave only what it kept alive: garbage, however much, is gone, and
    // the verdict no longer depends on how many collections V8 ran in the window. The trend inside the window must
    // account for half of it at least, so that a cache filled once at the first requests is not a leak; its t is
    // not asked for, as three full collections (a short run's usual count) give it one degree of freedom.
    const rise = /** @type {number} */ (t.rise)
    // A leak keeps what it took; what the load held for a while (a cache whose entries expire, a parse kept a few
    // seconds) is let go once the load stops: full collections after it found half of it gone or more.
    if (heldForAWhile(s)) return false
    return rise >= THRESHOLDS.leakBytes && rise >= THRESHOLDS.leakRatio * t.start && t.growth >= rise / 2
  }
  if (t.basis === 'floor') {
    // The floor also rises with old-generation garbage no full collection has reclaimed yet: only two full
    // collections that left the heap clearly higher tell a leak from garbage, and the floor must rise twice as surely.
    if (t.rise === null || t.rise < THRESHOLDS.leakBytes) return false
    return t.t >= 2 * THRESHOLDS.leakT && t.growth >= 2 * THRESHOLDS.leakBytes && t.growth >= THRESHOLDS.leakRatio * t.start
  }
  return t.t >= THRESHOLDS.leakT && t.growth >= THRESHOLDS.leakBytes && t.growth >= THRESHOLDS.leakRatio * t.start
}

/**
 * Whether the heap the load left was let go within seconds of its end, with no load on: held for a while, not leaked.
 * @param {Signals} s
 */
export function heldForAWhile (s) {
  const t = s.memory.trend
  return t !== null && t.settled && t.rise !== null && t.rise > 0 && t.released != null && t.released >= t.rise / 2
}

/**
 * How busy the serving threads kept their loops by their own work: event-loop utilisation counts the time a thread
 * was ready to run but waited for a CPU, which on a machine shared with the database it waits on (or any busy host)
 * made a waiting server's loop read 90% busy on 30% of a core. That time is the machine's, not the loop's.
 * @param {Signals} s
 */
export function ownUtilization (s) {
  return Math.max(0, s.loop.utilization - (s.loop.runQueue ?? 0))
}

/**
 * Whether the traced requests spent most of their time in waits at known lines on something outside the process:
 * direct evidence of a server that waits, which the io rule takes over the loop's and the CPU's figures up to `busy`.
 * Waits on the process's own worker threads do not count: the pool computes, and a machine short of cores made the
 * worker-threads example read io.
 * @param {Signals} s
 */
function waited (s) {
  return s.waits.outside >= THRESHOLDS.waitedShare
}

/**
 * Whether the requests' time on the server is mostly not CPU: at most a quarter of it (cpuOfServerTime), or half when
 * traced requests spent half their time or more waiting (the rest is theirs to spend).
 * @param {Signals} s
 */
export function mostlyWaiting (s) {
  return s.cpu.perRequestMs <= (waited(s) ? 1 - THRESHOLDS.waitedShare : THRESHOLDS.cpuOfServerTime) * s.requests.serverTimeMean
}

/**
 * The cores the serving processes spent on the request path: their serving threads' own time on a CPU, and what their
 * other threads spent beyond what V8 runs beside any process in its first seconds. The process's CPU counts V8's
 * compiler and GC helper threads and the CPU profiler's sampling thread: a fetch() API at 190 requests/s spent 0.54
 * cores, its loop's thread 0.28 of them, and with no request traced it read `healthy`. Its other threads still count
 * when they take more than that — libuv's pool hashing what the requests wait for is the server's work.
 * Where a thread's time is not measured, the process's CPU.
 * @param {Signals} s
 */
function servingCores (s) {
  const own = s.loop.threadCpu
  if (own === null) return s.cpu.percent
  const serving = own * s.servingProcesses
  const beside = Math.max(0, s.cpu.percent - serving)
  return serving + Math.max(0, beside - THRESHOLDS.runtimeCores * s.servingProcesses)
}

/**
 * Whether the serving threads computed for most of the window, by their own time on a CPU (Linux; the probe's own
 * sampling left out), else by their loops' utilisation less the time they queued for a CPU; or a worker thread of
 * theirs did.
 * @param {Signals} s
 */
function computing (s) {
  const ran = s.loop.threadCpu ?? ownUtilization(s)
  return ran >= THRESHOLDS.busy || s.helpers.utilization >= THRESHOLDS.busy
}

/**
 * The facts of a verdict of waiting.
 * @param {Signals} s
 * @returns {RuleFacts}
 */
function waitingFacts (s) {
  return {
    kind: 'waiting',
    serverTimeMs: s.requests.serverTimeMean,
    cpuPerRequestMs: s.cpu.perRequestMs,
    idle: 1 - s.loop.utilization,
    runQueue: s.loop.runQueue,
    topWait: topWait(s),
    agent: s.agents.length > 0 ? { agent: s.agents[0].agent, maxSockets: s.agents[0].maxSockets } : null
  }
}

/**
 * Where the requests wait most, when one line takes a real part of their time.
 * @param {Signals} s
 */
function topWait (s) {
  const w = s.waits.sites[0]
  return w === undefined || w.share < THRESHOLDS.waitShare ? null : waitLine(w)
}

/**
 * The GC kind that took most of the GC time.
 * @param {Signals} s
 * @returns {string | null}
 */
export function dominantGc (s) {
  const kinds = Object.entries(s.gc.byKind).sort((a, b) => b[1].share - a[1].share)
  return kinds.length > 0 && kinds[0][1].share > 0 ? kinds[0][0] : null
}

/**
 * Whether the old generation comes near its limit: its highest reading, since a heap refilled to the limit many times
 * a second is below it right after each full collection.
 * @param {Signals} s
 */
export function nearHeapLimit (s) {
  return s.memory.oldLimit > 0 && s.memory.oldPeak > THRESHOLDS.heapNearLimit * s.memory.oldLimit
}

/**
 * The first rule that holds, and the facts of its verdict — with the CPU of other processes when it was enough to
 * distort them.
 * @param {Signals} s
 * @returns {{ category: Category, facts: VerdictFacts }}
 */
export function decide (s) {
  const rule = ruleFor(s)
  const busy = s.otherCores !== null && s.otherCores >= THRESHOLDS.otherCores
  const growingCost = rule.category === 'insufficient-data' ? null : growingCostOf(s)
  const otherPorts = s.otherPorts.length > 0 ? s.otherPorts : null
  const avoidable = rule.category === 'insufficient-data' ? null : largeAvoidable(s)
  return { category: rule.category, facts: { ...rule.facts(s), otherCores: busy ? s.otherCores : null, otherPorts, growingCost, avoidable } }
}

/**
 * The first rule that holds.
 * @param {Signals} s
 */
export function ruleFor (s) {
  return /** @type {typeof RULES[number]} */ (RULES.find(r => r.holds(s)))
}

/**
 * @param {Signals} s
 * @returns {GrowingCost | null}
 */
export function growingCostOf (s) {
  const c = s.cost
  if (c === null || !c.rising) return null
  const t = s.memory.trend
  const kept = t !== null && t.settled && t.rise !== null && t.rise > 0 && s.requests.finished > 0 ? t.rise / s.requests.finished : null
  return { firstMs: c.firstMs, lastMs: c.lastMs, requests: c.requests, keptPerRequest: kept, grows: growingHolder(s.memory.retained) }
}

/**
 * The named holder that gained the most objects per request in the snapshots after the load — a state that grows with
 * requests gains about one entry (or a few objects) per request; less than one per ten is the runtime settling.
 * @param {import('./run-data.js').Retainers | null} retained
 * @returns {GrowingHolder | null}
 */
function growingHolder (retained) {
  if (!retained || retained.requests <= 0) return null
  const named = retained.culprits
    .filter(c => c.holding !== null && c.count / retained.requests >= 0.1)
    .sort((a, b) => b.count - a.count)[0]
  if (!named || named.holding === null) return null
  return { holding: named.holding, holder: named.holder, constructor: named.constructor, perRequest: named.count / retained.requests, function: named.function, file: named.file, line: named.line }
}
