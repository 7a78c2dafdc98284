// The figures behind a verdict, each against its threshold, as facts: the report words each row
// (src/report/words/evidence.js) from its signal, state and facts.
import { growingCostOf, heldForAWhile, isLeak, mostlyWaiting, ruleFor, RULES } from './rules.js'
import { THRESHOLDS } from './thresholds.js'
import { agentRows, outgoingRows, waitRows } from './evidence-waits.js'

/** @typedef {import('./signals.js').Signals} Signals */

/**
 * @typedef {object} Evidence
 * @property {string} signal stable name, e.g. 'cpu-per-request'
 * @property {number} value
 * @property {string} unit
 * @property {number | null} threshold the value at which the signal counts against the server
 * @property {string} state what the value says, as a stable name: `ok`, `blocked`, `high`, `leak`, `mostly-waiting`…
 * @property {Record<string, any>} facts what the row's label and verdict cite besides its value: names, places,
 *   counts, times (empty when they cite nothing else)
 * @property {boolean} decisive it decided the category
 */

/** @typedef {Omit<Evidence, 'decisive'>} Row an evidence row before the verdict's decisive signals are known */

/**
 * The figures behind the verdict, each against its threshold; the decisive ones first.
 * @param {Signals} s
 * @param {import('./rules.js').Category} category
 * @returns {Evidence[]}
 */
export function collectEvidence (s, category) {
  // The rule that decided, when the figures' own verdict is the category (a run that failed keeps its figures'), else
  // the category's first.
  const rule = ruleFor(s)
  const decisive = new Set((rule.category === category ? rule : RULES.find(r => r.category === category))?.decisive ?? [])
  const io = category === 'io'
  const groups = [
    loopRows(s),
    memoryRows(s),
    requestRows(s),
    machineRows(s),
    threadRows(s, decisive),
    listenerRows(s, decisive),
    outgoingRows(s, io ? decisive : null),
    waitRows(s, io ? decisive : null),
    agentRows(s, io ? decisive : null),
    avoidableRows(s)
  ]
  return groups.flat()
    .map(e => ({ ...e, decisive: decisive.has(e.signal) }))
    .sort((a, b) => Number(b.decisive) - Number(a.decisive))
}

/**
 * The event loop's delay, the CPU a request costs, and how busy the loop is.
 * @param {Signals} s
 * @returns {Row[]}
 */
function loopRows (s) {
  return [
    {
      signal: 'event-loop-delay-p99',
      value: round(s.loop.delayP99),
      unit: 'ms',
      threshold: THRESHOLDS.delayP99,
      state: s.loop.delayP99 >= THRESHOLDS.delayP99 ? 'blocked' : 'ok',
      facts: {}
    },
    {
      signal: 'event-loop-delay-max',
      value: round(s.loop.delayMax),
      unit: 'ms',
      threshold: null,
      state: s.loop.delayMax >= 1000 ? 'blocked-over-a-second' : s.loop.delayMax >= THRESHOLDS.delayP99 ? 'long-tasks' : 'ok',
      facts: {}
    },
    {
      signal: 'cpu-per-request',
      value: round(s.cpu.perRequestMs, 4),
      unit: 'ms',
      threshold: THRESHOLDS.cpuPerRequest,
      state: s.cpu.perRequestMs >= THRESHOLDS.cpuPerRequest ? 'high' : 'ok',
      facts: {}
    },
    {
      signal: 'event-loop-utilization',
      value: round(s.loop.utilization, 3),
      unit: 'ratio',
      threshold: THRESHOLDS.busy,
      state: s.loop.utilization >= THRESHOLDS.busy ? 'busy' : s.loop.utilization < THRESHOLDS.idle ? 'mostly-idle' : 'ok',
      facts: {}
    }
  ]
}

/**
 * Time in GC, and whether what survives it grows.
 * @param {Signals} s
 * @returns {Row[]}
 */
function memoryRows (s) {
  return [
    {
      signal: 'gc-time',
      value: round(s.gc.share, 4),
      unit: 'ratio',
      threshold: THRESHOLDS.gcShare,
      state: s.gc.share >= THRESHOLDS.gcShare ? 'high' : s.gc.share >= THRESHOLDS.gcShare / 2 ? 'notable' : 'ok',
      facts: {}
    },
    {
      signal: 'heap-growth',
      value: round(s.memory.trend?.slope ?? 0, 0),
      unit: 'B/s',
      threshold: null,
      state: isLeak(s)
        ? 'leak'
        : s.memory.trend === null
          ? 'too-few-seconds'
          : heldForAWhile(s)
            ? 'released'
            : !s.memory.trend.settled && s.memory.trend.fullCollections < 2 && s.memory.trend.slope > THRESHOLDS.leakBytes / s.window.seconds
                ? 'rising-unconfirmed'
                : 'flat',
      facts: {}
    }
  ]
}

/**
 * What a request costs on the server, and how many were served.
 * @param {Signals} s
 * @returns {Row[]}
 */
function requestRows (s) {
  return [
    {
      signal: 'server-time',
      value: round(s.requests.serverTimeMean, 4),
      unit: 'ms',
      threshold: THRESHOLDS.serverTime,
      // Judged as the io rule judges it: with most of the traced requests' time in waits, up to half of it may be CPU.
      state: s.requests.serverTimeMean >= THRESHOLDS.serverTime
        ? (mostlyWaiting(s) ? 'mostly-waiting' : 'mostly-computing')
        : 'ok',
      facts: {}
    },
    ...costRows(s),
    {
      signal: 'requests-per-second',
      value: round(s.requests.rate, 1),
      unit: 'req/s',
      threshold: null,
      state: 'measured',
      facts: { finished: s.requests.finished, seconds: s.window.seconds }
    }
  ]
}

/**
 * Whether each request costs more than the last, at the same load.
 * @param {Signals} s
 * @returns {Row[]}
 */
function costRows (s) {
  if (s.cost === null) return []
  const growing = growingCostOf(s)
  return [{
    signal: 'cost-per-request-trend',
    value: round(s.cost.lastMs, 4),
    unit: 'ms',
    threshold: round(THRESHOLDS.costRise * s.cost.firstMs, 4),
    state: growing ? 'rising' : 'steady',
    facts: { firstMs: s.cost.firstMs, requests: s.cost.requests, keptPerRequest: growing?.keptPerRequest ?? null }
  }]
}

/**
 * The CPU of other processes (when enough to distort the figures) and of the local backends the server waits on.
 * @param {Signals} s
 * @returns {Row[]}
 */
function machineRows (s) {
  /** @type {Row[]} */
  const rows = []
  if (s.otherCores !== null && s.otherCores >= THRESHOLDS.otherCores) {
    rows.push({ signal: 'other-cpu', value: round(s.otherCores, 2), unit: 'cores', threshold: THRESHOLDS.otherCores, state: 'busy-machine', facts: {} })
  }
  if (s.backends !== null && s.backends.cores >= 0.05) {
    const seen = new Set()
    const backends = []
    for (const p of s.backends.processes) {
      if (seen.has(`${p.name} :${p.port}`)) continue
      seen.add(`${p.name} :${p.port}`)
      backends.push({ name: p.name, port: p.port })
    }
    rows.push({ signal: 'backend-cpu', value: round(s.backends.cores, 2), unit: 'cores', threshold: null, state: 'backend', facts: { backends: backends.slice(0, 3) } })
  }
  return rows
}

/**
 * Worker threads of the serving processes that exited, and how busy the busiest was.
 * @param {Signals} s
 * @param {Set<string>} decisive
 * @returns {Row[]}
 */
function threadRows (s, decisive) {
  /** @type {Row[]} */
  const rows = []
  for (const t of s.exitedThreads) {
    rows.push({ signal: 'worker-thread-exited', value: t.at, unit: 's', threshold: null, state: 'exited', facts: { pid: t.pid, threadId: t.threadId } })
    decisive.add('worker-thread-exited')
  }
  if (s.helpers.count > 0) {
    rows.push({
      signal: 'worker-thread-utilization',
      value: round(s.helpers.utilization, 3),
      unit: 'ratio',
      threshold: THRESHOLDS.busy,
      state: s.helpers.utilization >= THRESHOLDS.busy ? 'busy' : 'ok',
      facts: { threads: s.helpers.count }
    })
  }
  return rows
}

/**
 * An event whose listeners grew past the limit: one added per request.
 * @param {Signals} s
 * @param {Set<string>} decisive
 * @returns {Row[]}
 */
function listenerRows (s, decisive) {
  const leak = s.listeners.find(l => l.count >= THRESHOLDS.listeners)
  if (!leak) return []
  decisive.add('listener-growth')
  return [{
    signal: 'listener-growth',
    value: leak.count,
    unit: 'listeners',
    threshold: THRESHOLDS.listeners,
    state: 'leak',
    facts: { event: leak.event, emitter: leak.emitter, site: leak.site ? { file: leak.site.file, line: leak.site.line } : null }
  }]
}

/**
 * @param {number} v
 * @param {number} [digits]
 */
function round (v, digits = 3) {
  const f = 10 ** digits
  return Math.round(v * f) / f
}

/**
 * Work the request path need not do, each cost that takes a noticeable share of the serving threads' CPU, and the code
 * of the polyfills the app installed.
 * @param {Signals} s
 * @returns {Row[]}
 */
function avoidableRows (s) {
  const costs = s.avoidable?.costs ?? []
  /** @type {Row[]} */
  const rows = costs
    .filter(c => c.share >= THRESHOLDS.adviseShare)
    .map(c => ({
      signal: 'avoidable-cost',
      value: round(c.share, 4),
      unit: 'ratio',
      threshold: THRESHOLDS.avoidableShare,
      state: c.share >= THRESHOLDS.avoidableShare ? 'avoidable' : 'ok',
      facts: { kind: c.kind, runtime: c.runtime, site: c.site, via: c.via, installed: c.installed }
    }))
  for (const p of s.avoidable?.polyfills ?? []) {
    rows.push({
      signal: 'polyfill',
      value: round(p.share, 4),
      unit: 'ratio',
      threshold: THRESHOLDS.adviseShare,
      state: p.share >= THRESHOLDS.adviseShare ? 'costly' : 'ok',
      facts: { replaced: p.replaced, package: p.package, file: p.file, installer: p.installer, loadedAt: p.loadedAt }
    })
  }
  return rows
}
