import { formatBytes, formatMs, formatPercent } from '../report/format.js'

/** @typedef {import('./signals.js').Signals} Signals */
/** @typedef {'event-loop' | 'io' | 'gc' | 'memory-leak' | 'healthy' | 'insufficient-data'} Category */

/**
 * @typedef {object} Evidence
 * @property {string} signal stable name, e.g. 'cpu-per-request'
 * @property {string} label what a person reads
 * @property {number} value
 * @property {string} unit
 * @property {number | null} threshold the value at which the signal counts against the server
 * @property {string} verdict
 * @property {boolean} decisive it decided the category
 */

/**
 * Every threshold the diagnosis uses, in one place (docs/diagnosis.md explains each).
 */
export const THRESHOLDS = {
  /** seconds of the load window the serving threads' samples must cover */
  minCoverage: 0.5,
  /** ms: a p99 event-loop delay this long means single tasks hold the loop */
  delayP99: 100,
  /** ms of CPU per request that make a request itself a blocking task */
  cpuPerRequest: 2,
  /** event-loop utilisation at which CPU per request is judged */
  busy: 0.7,
  /** share of the load window the event loop spends paused for garbage collection */
  gcShare: 0.15,
  /** t-statistic and fit of the slope of what survives GC */
  leakT: 3,
  leakR2: 0.6,
  /** bytes the heap floor must gain over the window, absolutely and relative to where it started */
  leakBytes: 5 * 1024 * 1024,
  leakRatio: 0.1,
  /** event-loop utilisation under which the loop is mostly waiting */
  idle: 0.5,
  /** ms of server time per request for waiting to matter */
  serverTime: 5,
  /** share of server time spent on the CPU under which a request is mostly waiting */
  cpuOfServerTime: 0.1,
  /** cores a serving process may use and still be called idle (waiting) */
  waitingCores: 0.5,
  /** listeners for one event on one emitter */
  listeners: 100,
  /** share of the requests' server time spent waiting on one outgoing call for it to be evidence (and, for io, to blame) */
  waitShare: 0.2,
  /** cores' worth of CPU used by other processes during the run, above which the figures may be distorted */
  otherCores: 0.5,
  /** share of the traced requests' time spent in waits at known lines that shows a server waiting, its loop under busy */
  waitedShare: 0.5,
  /** waits per request at one line, one after another, that make an N+1 */
  sequentialWaits: 3,
  /** ms a request waits for a pooled connection before its round trip for the pool to be evidence */
  poolQueueMs: 1
}

/**
 * The rules, in the order they are tried; the first that holds names the category. Each is one sentence in
 * docs/diagnosis.md. Order matters where causes chain: a leak drives the GC up, GC pauses delay the event loop.
 * @type {{ category: Category, holds: (s: Signals) => boolean, decisive: string[], summary: (s: Signals) => string }[]}
 */
export const RULES = [
  {
    category: 'insufficient-data',
    // nothing to judge: too few samples, or not one request served while the loop was never blocked
    holds: (s) => s.coverage < THRESHOLDS.minCoverage || (s.requests.finished === 0 && s.loop.delayMax < 1000),
    decisive: [],
    summary: (s) => s.coverage < THRESHOLDS.minCoverage
      ? `Not enough data: the probe's samples cover only ${s.coverage.toFixed(2)} s of the load (at least ${THRESHOLDS.minCoverage} s are needed); run the load longer.`
      : 'Not enough data: the server finished no request during the load, and its event loop was not blocked.'
  },
  {
    category: 'memory-leak',
    holds: (s) => isLeak(s),
    decisive: ['heap-growth'],
    summary: (s) => {
      const t = /** @type {NonNullable<Signals['memory']['trend']>} */ (s.memory.trend)
      const perRequest = s.memory.perRequest !== null && s.memory.perRequest > 0 ? ` (about ${formatBytes(s.memory.perRequest)} per request)` : ''
      return `Memory is leaking: what survives garbage collection grows by ${formatBytes(t.slope, '/s')}${perRequest} and never comes back down — ${formatBytes(t.growth)} over the ${t.seconds.toFixed(0)} s of load.`
    }
  },
  {
    category: 'gc',
    holds: (s) => s.gc.share >= THRESHOLDS.gcShare,
    decisive: ['gc-time'],
    summary: (s) => {
      const kind = dominantGc(s)
      return `Garbage collection is slowing the server: ${formatPercent(s.gc.share, 0)} of the time goes to GC pauses` +
        (kind ? `, mostly ${kind === 'scavenge' ? 'scavenges of short-lived objects (young generation)' : `${kind} collections of the old generation`}` : '') + '.'
    }
  },
  {
    category: 'event-loop',
    holds: (s) => s.loop.delayP99 >= THRESHOLDS.delayP99 ||
      (s.requests.finished === 0 && s.loop.delayMax >= 1000) ||
      (s.cpu.perRequestMs >= THRESHOLDS.cpuPerRequest && s.loop.utilization >= THRESHOLDS.busy),
    decisive: ['event-loop-delay-p99', 'cpu-per-request'],
    summary: (s) => s.requests.finished === 0
      ? `The event loop is blocked: no request finished during the load and the loop was held for up to ${formatMs(s.loop.delayMax)} at a time.`
      : s.cpu.perRequestMs >= THRESHOLDS.cpuPerRequest
        ? `The event loop is blocked: each request holds it for ${formatMs(s.cpu.perRequestMs)} of CPU, so requests queue behind each other (event-loop delay p99 ${formatMs(s.loop.delayP99)}).`
        : `The event loop is blocked: single tasks hold it for up to ${formatMs(s.loop.delayMax)} (p99 ${formatMs(s.loop.delayP99)}), though requests cost only ${formatMs(s.cpu.perRequestMs)} of CPU each — look for synchronous I/O or occasional heavy work.`
  },
  {
    category: 'io',
    // waiting on something outside the process — not on its own busy worker threads
    // The loop idles; or, where the probe traced the requests' waits and found most of their time in them, it is
    // not saturated (a machine busy with the server's own database makes its loop read half busy; a client that
    // makes many round trips a request spends more than half a core at a few hundred requests a second).
    holds: (s) => (s.loop.utilization < THRESHOLDS.idle || (waited(s) && s.loop.utilization < THRESHOLDS.busy)) &&
      s.helpers.utilization < THRESHOLDS.busy &&
      s.cpu.percent < (waited(s) ? THRESHOLDS.busy : THRESHOLDS.waitingCores) * s.servingProcesses &&
      s.requests.serverTimeMean >= THRESHOLDS.serverTime &&
      s.cpu.perRequestMs <= THRESHOLDS.cpuOfServerTime * s.requests.serverTimeMean,
    decisive: ['server-time', 'event-loop-utilization'],
    summary: (s) => `The server is waiting on I/O: requests take ${formatMs(s.requests.serverTimeMean)} on the server but only ${formatMs(s.cpu.perRequestMs)} of CPU, and the event loop is idle ${formatPercent(1 - s.loop.utilization, 0)} of the time.` +
      topWaitSentence(s) +
      (s.agents.length > 0 ? ` Outgoing requests queued for a free socket in ${s.agents[0].agent} (maxSockets ${s.agents[0].maxSockets}).` : '')
  },
  {
    category: 'healthy',
    holds: () => true,
    decisive: [],
    summary: (s) => `No problem found: ${Math.round(s.requests.rate).toLocaleString('en-US')} requests/s at ${formatMs(s.cpu.perRequestMs)} of CPU each, event-loop delay p99 ${formatMs(s.loop.delayP99)}` +
      (s.loop.utilization >= THRESHOLDS.busy ? '; the load keeps the CPU busy without blocking the event loop.' : '.')
  }
]

/** @param {Signals} s */
function isLeak (s) {
  const t = s.memory.trend
  if (t === null || !(t.slope > 0) || t.r2 < THRESHOLDS.leakR2) return false
  if (t.basis === 'floor') {
    // The floor also rises with old-generation garbage no full collection has reclaimed yet: only two full
    // collections that left the heap clearly higher tell a leak from garbage, and the floor must rise twice as surely.
    if (t.rise === null || t.rise < THRESHOLDS.leakBytes) return false
    return t.t >= 2 * THRESHOLDS.leakT && t.growth >= 2 * THRESHOLDS.leakBytes && t.growth >= THRESHOLDS.leakRatio * t.start
  }
  return t.t >= THRESHOLDS.leakT && t.growth >= THRESHOLDS.leakBytes && t.growth >= THRESHOLDS.leakRatio * t.start
}

/**
 * Whether the traced requests spent most of their time in waits at known lines: direct evidence of a server that
 * waits, which the io rule takes over the loop's and the CPU's figures up to `busy`.
 * @param {Signals} s
 */
function waited (s) {
  return s.waits.attributed >= THRESHOLDS.waitedShare
}

/**
 * Where the requests wait most, when one line takes a real part of their time.
 * @param {Signals} s
 */
function topWaitSentence (s) {
  const w = s.waits.sites[0]
  if (w === undefined || w.share < THRESHOLDS.waitShare) return ''
  const queued = w.queue && w.pool && w.queue.msPerWait >= THRESHOLDS.poolQueueMs
    ? `, ${formatPercent(w.queue.msPerWait / Math.max(w.msPerWait, 1e-9), 0)} of it queueing for one of the ${w.pool.connections} connections ${w.pool.site ? `of the pool created at ${w.pool.site.file}:${w.pool.site.line}` : `to ${w.pool.endpoint}`}`
    : ''
  return ` Most of it (${formatPercent(w.share, 0)}) is spent at ${w.site.file}:${w.site.line} waiting on ${w.resource.name} (${waitCounts(w)})${queued}.`
}

/**
 * `1 round trip a request, 14.2 ms each` / `20 one after another a request, 1.98 ms each`.
 * @param {import('./waits.js').WaitSignal} w
 */
export function waitCounts (w) {
  const n = w.perRequest
  const noun = w.msPerTrip !== null ? (Math.abs(n - 1) < 0.05 ? 'round trip' : 'round trips') : (Math.abs(n - 1) < 0.05 ? 'wait' : 'waits')
  const count = n >= 10 ? Math.round(n).toString() : n.toFixed(1).replace(/\.0$/, '')
  const how = w.sequential ? ' one after another' : w.parallel ? ' at once' : ''
  return `${count} ${noun}${how} a request, ${formatMs(w.msPerWait)} each`
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
 * The first rule that holds, and its summary — with a warning when other processes took enough CPU to distort it.
 * @param {Signals} s
 * @returns {{ category: Category, summary: string }}
 */
export function decide (s) {
  const rule = /** @type {typeof RULES[number]} */ (RULES.find(r => r.holds(s)))
  const busy = s.otherCores !== null && s.otherCores >= THRESHOLDS.otherCores
  return {
    category: rule.category,
    summary: rule.summary(s) + (busy ? ` Other processes used ${s.otherCores?.toFixed(1)} cores during the run, so this may be the machine rather than the server: run again on a quiet one.` : '')
  }
}

/**
 * The figures behind the verdict, each against its threshold; the decisive ones first.
 * @param {Signals} s
 * @param {Category} category
 * @returns {Evidence[]}
 */
export function collectEvidence (s, category) {
  const decisive = new Set(RULES.find(r => r.category === category)?.decisive ?? [])
  /** @type {Omit<Evidence, 'decisive'>[]} */
  const list = [
    {
      signal: 'event-loop-delay-p99',
      label: 'event-loop delay p99',
      value: round(s.loop.delayP99),
      unit: 'ms',
      threshold: THRESHOLDS.delayP99,
      verdict: s.loop.delayP99 >= THRESHOLDS.delayP99 ? 'blocked' : 'ok'
    },
    {
      signal: 'event-loop-delay-max',
      label: 'event-loop delay max',
      value: round(s.loop.delayMax),
      unit: 'ms',
      threshold: null,
      verdict: s.loop.delayMax >= 1000 ? 'blocked for over a second' : s.loop.delayMax >= THRESHOLDS.delayP99 ? 'long tasks' : 'ok'
    },
    {
      signal: 'cpu-per-request',
      label: 'CPU per request',
      value: round(s.cpu.perRequestMs, 4),
      unit: 'ms',
      threshold: THRESHOLDS.cpuPerRequest,
      verdict: s.cpu.perRequestMs >= THRESHOLDS.cpuPerRequest ? 'high' : 'ok'
    },
    {
      signal: 'event-loop-utilization',
      label: 'event-loop utilisation',
      value: round(s.loop.utilization, 3),
      unit: 'ratio',
      threshold: THRESHOLDS.busy,
      verdict: s.loop.utilization >= THRESHOLDS.busy ? 'busy' : s.loop.utilization < THRESHOLDS.idle ? 'mostly idle' : 'ok'
    },
    {
      signal: 'gc-time',
      label: 'time in GC',
      value: round(s.gc.share, 4),
      unit: 'ratio',
      threshold: THRESHOLDS.gcShare,
      verdict: s.gc.share >= THRESHOLDS.gcShare ? 'high' : s.gc.share >= THRESHOLDS.gcShare / 2 ? 'notable' : 'ok'
    },
    {
      signal: 'heap-growth',
      label: 'heap growth (after GC)',
      value: round(s.memory.trend?.slope ?? 0, 0),
      unit: 'B/s',
      threshold: null,
      verdict: isLeak(s)
        ? 'leak'
        : s.memory.trend === null
          ? 'too few seconds to tell'
          : s.memory.trend.fullCollections < 2 && s.memory.trend.slope > THRESHOLDS.leakBytes / s.window.seconds
            ? 'rising, but no two full GCs to tell a leak from garbage: run longer'
            : 'flat'
    },
    {
      signal: 'server-time',
      label: 'server time per request',
      value: round(s.requests.serverTimeMean, 4),
      unit: 'ms',
      threshold: THRESHOLDS.serverTime,
      verdict: s.requests.serverTimeMean >= THRESHOLDS.serverTime
        ? (s.cpu.perRequestMs <= THRESHOLDS.cpuOfServerTime * s.requests.serverTimeMean ? 'mostly waiting' : 'mostly computing')
        : 'ok'
    },
    {
      signal: 'requests-per-second',
      label: 'requests/s served',
      value: round(s.requests.rate, 1),
      unit: 'req/s',
      threshold: null,
      verdict: `${s.requests.finished.toLocaleString('en-US')} in ${s.window.seconds.toFixed(1)} s`
    }
  ]
  if (s.otherCores !== null && s.otherCores >= THRESHOLDS.otherCores) {
    list.push({
      signal: 'other-cpu',
      label: 'CPU used by other processes',
      value: round(s.otherCores, 2),
      unit: 'cores',
      threshold: THRESHOLDS.otherCores,
      verdict: 'busy machine: every figure may be distorted; run again on a quiet one'
    })
  }
  if (s.backends !== null && s.backends.cores >= 0.05) {
    const names = [...new Set(s.backends.processes.map(p => `${p.name} :${p.port}`))].slice(0, 3).join(', ')
    list.push({
      signal: 'backend-cpu',
      label: `CPU of the local backends (${names})`,
      value: round(s.backends.cores, 2),
      unit: 'cores',
      threshold: null,
      verdict: 'what the server waits on, on this machine: not counted as other processes'
    })
  }
  for (const t of s.exitedThreads) {
    list.push({
      signal: 'worker-thread-exited',
      label: `worker thread ${t.threadId} of pid ${t.pid}`,
      value: t.at,
      unit: 's',
      threshold: null,
      verdict: 'exited during the load: what was sent to it is lost, or waits for another'
    })
    decisive.add('worker-thread-exited')
  }
  if (s.helpers.count > 0) {
    list.push({
      signal: 'worker-thread-utilization',
      label: `busiest of ${s.helpers.count} worker thread${s.helpers.count > 1 ? 's' : ''}`,
      value: round(s.helpers.utilization, 3),
      unit: 'ratio',
      threshold: THRESHOLDS.busy,
      verdict: s.helpers.utilization >= THRESHOLDS.busy ? 'busy: requests wait for the pool' : 'ok'
    })
  }
  const leak = s.listeners.find(l => l.count >= THRESHOLDS.listeners)
  if (leak) {
    list.push({
      signal: 'listener-growth',
      label: `'${leak.event}' listeners on ${leak.emitter}`,
      value: leak.count,
      unit: 'listeners',
      threshold: THRESHOLDS.listeners,
      verdict: leak.site ? `leak: added at ${leak.site.file}:${leak.site.line}` : 'leak'
    })
    decisive.add('listener-growth')
  }
  const waitLines = new Set(s.waits.sites.filter(w => w.share >= THRESHOLDS.waitShare).map(w => `${w.site.file}:${w.site.line}`))
  for (const o of s.outgoing.slice(0, 3)) {
    // A call the wait tracer found at its line is told there, with more.
    if (o.share < THRESHOLDS.waitShare || (o.site && waitLines.has(`${o.site.file}:${o.site.line}`))) continue
    list.push({
      signal: 'outgoing-wait',
      label: `waiting on ${o.target}`,
      value: round(o.share),
      unit: 'ratio',
      threshold: THRESHOLDS.waitShare,
      verdict: `${o.calls.toLocaleString('en-US')} calls of ${formatMs(o.meanMs)}${o.site ? `, made at ${o.site.file}:${o.site.line}` : ''}`
    })
    if (category === 'io') decisive.add('outgoing-wait')
  }
  for (const w of s.waits.sites.slice(0, 3)) {
    if (w.share < THRESHOLDS.waitShare) continue
    list.push({
      signal: 'wait',
      label: `waiting at ${w.site.file}:${w.site.line}`,
      value: round(w.share),
      unit: 'ratio',
      threshold: THRESHOLDS.waitShare,
      verdict: `${w.resource.name}: ${waitCounts(w)}`
    })
    if (category === 'io') decisive.add('wait')
    if (w.sequential) {
      list.push({
        signal: 'sequential-waits',
        label: `waits one after another at ${w.site.file}:${w.site.line}`,
        value: round(w.sequential.perRequest, 1),
        unit: 'per request',
        threshold: THRESHOLDS.sequentialWaits,
        verdict: `N+1${w.sequential.loop ? ` from ${w.sequential.loop.file}:${w.sequential.loop.line}` : ''}: one batched call would save ~${formatMs(w.sequential.savedMs)} a request`
      })
      if (category === 'io') decisive.add('sequential-waits')
    }
    if (w.queue && w.queue.msPerWait >= THRESHOLDS.poolQueueMs) {
      list.push({
        signal: 'pool-queue',
        label: `queueing for a connection to ${w.pool?.endpoint ?? w.resource.target}`,
        value: round(w.queue.msPerWait),
        unit: 'ms',
        threshold: THRESHOLDS.poolQueueMs,
        verdict: `${w.pool ? `pool of ${w.pool.connections} connection${w.pool.connections === 1 ? '' : 's'}, ${w.pool.busy} busy at once` : 'pool full'}; the query itself takes ${formatMs(w.msPerTrip ?? 0)}`
      })
      if (category === 'io') decisive.add('pool-queue')
    }
  }
  if (s.waits.traced > 0) {
    list.push({
      signal: 'waits-traced',
      label: 'requests traced for waits',
      value: s.waits.traced,
      unit: 'requests',
      threshold: null,
      verdict: `${formatPercent(s.waits.attributed, 0)} of their ${formatMs(s.waits.meanMs)} spent in waits at known lines`
    })
  }
  for (const a of s.agents) {
    list.push({
      signal: 'agent-queue',
      label: `requests waiting for a socket (${a.agent})`,
      value: a.maxQueued,
      unit: 'requests',
      threshold: 0,
      verdict: `pool full at maxSockets ${a.maxSockets}`
    })
    if (category === 'io') decisive.add('agent-queue')
  }
  return list
    .map(e => ({ ...e, decisive: decisive.has(e.signal) }))
    .sort((a, b) => Number(b.decisive) - Number(a.decisive))
}

/**
 * @param {number} v
 * @param {number} [digits]
 */
function round (v, digits = 3) {
  const f = 10 ** digits
  return Math.round(v * f) / f
}
