import { displayPath } from './paths.js'
import { THRESHOLDS } from './rules.js'

/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {import('./run-data.js').WaitData} WaitData */

/**
 * @typedef {object} WaitResource what a wait waited on
 * @property {string} type 'postgres', 'redis', 'mysql', 'mongodb', 'http', 'tcp' (a socket of an unknown protocol),
 *   'timer', 'fs', 'dns', 'connect', 'child process', 'worker', 'thread pool', 'client' (the request's own body), …
 * @property {string} op the operation: a folded query, a command, `setTimeout 100 ms`, `fs.readFile`
 * @property {string} target where: `127.0.0.1:5432`, a host name
 * @property {string} name all of it in a few words: `postgres SELECT … FROM sessions WHERE token = $1`
 */

/**
 * @typedef {object} WaitSignal one line of the app where traced requests waited, and on what
 * @property {{ function: string, file: string, line: number, column: number, api: string | null, callers: { function: string, file: string, line: number }[] }} site
 * @property {WaitResource} resource the most frequent thing waited on there
 * @property {number} share of the traced requests' time on the server spent waiting here (each instant of a request
 *   goes to one wait: the innermost, or shared between waits that run at once)
 * @property {number} perRequest waits here per traced request (round trips, for a socket)
 * @property {number} msPerWait mean time from where the wait began to the callback that ended it
 * @property {number | null} msPerTrip mean duration of the round trips on the wire, for waits ended by a client
 *   socket's reply: shorter than msPerWait when the request queued before its trip was written
 * @property {number} requests traced requests that waited here
 * @property {{ perRequest: number, loop: { function: string, file: string, line: number } | null, savedMs: number } | null} sequential
 *   when a request waits here several times one after another (N+1): how many times per request, the app line that
 *   loops (the caller that awaits each), and the ms per request that one batched round trip would save
 * @property {{ perRequest: number } | null} parallel when a request's waits here run at once, how many
 * @property {{ msPerWait: number, others: number } | null} queue when requests wait here longer than their round trip
 *   takes, because their trip was written later (a pool that queued it wrote it when a connection came free): the
 *   mean wait before the trip, and the share of the waits that queued
 * @property {{ endpoint: string, connections: number, busy: number, class: string | null, site: { function: string, file: string, line: number } | null, limit: { key: string, value: number } | null } | null} pool
 *   for a queue, the pool of connections to the endpoint: how many were open and busy at most, and where the app
 *   created the pool with its limit (when it was created while the server started)
 * @property {number} pid
 * @property {number} threadId
 */

/**
 * @typedef {object} WaitSignals
 * @property {number} traced requests traced in the serving threads during the window
 * @property {number} meanMs their mean time on the server
 * @property {number} attributed share of their time spent in waits with a known site
 * @property {WaitSignal[]} sites most time first
 */

/** ms a wait lasts beyond its round trip for it to count as queued */
const QUEUED = 1
/** A wait whose spans overlap by less than this share of their total is one of a sequence, not of a parallel batch. */
const SEQUENTIAL_OVERLAP = 0.1

/**
 * Where the serving threads' traced requests waited: for each app line, its share of their time on the server, on
 * what, how many times per request, whether one after another (N+1) or queued for a pool.
 * @param {ThreadRecord[]} threads the serving threads
 * @param {number} start window start, epoch ms
 * @param {number} end window end
 * @param {string} fallbackCwd
 * @returns {WaitSignals}
 */
export function computeWaits (threads, start, end, fallbackCwd) {
  /** @type {Map<string, Acc>} */
  const bySite = new Map()
  let traced = 0
  let totalMs = 0
  let attributed = 0
  for (const t of threads) {
    const cwd = String(t.hello.cwd ?? fallbackCwd)
    for (const trace of t.waits.traces) {
      if (trace.time < start || trace.time > end) continue
      traced++
      totalMs += trace.ms
      const ops = operations(trace, t.waits)
      const shares = attribute(ops, trace.ms)
      for (const [site, list] of groupBy(ops, o => o.site)) {
        if (site < 0) continue
        const info = t.waits.sites.get(site)
        if (info === undefined) continue
        const key = `${info.file}:${info.line}:${info.function}`
        let acc = bySite.get(key)
        if (acc === undefined) {
          acc = newAcc(info, t, cwd)
          bySite.set(key, acc)
        }
        const ms = list.reduce((a, o) => a + (shares.get(o) ?? 0), 0)
        attributed += ms
        addToAcc(acc, list, ms, t.waits)
      }
    }
  }
  const sites = [...bySite.values()]
    .map(acc => summarize(acc, traced, totalMs, threads))
    .sort((a, b) => b.share - a.share)
  return { traced, meanMs: traced > 0 ? totalMs / traced : 0, attributed: totalMs > 0 ? attributed / totalMs : 0, sites }
}

/**
 * @typedef {object} Span
 * @property {number} start ms from the request's start
 * @property {number} dur
 * @property {number} site
 * @property {number} resource
 * @property {string} kind
 * @property {number} cause
 * @property {number} trip
 * @property {number} own
 * @property {number} parent
 */

/**
 * @typedef {object} Operation one wait of a request: the spans one I/O ended (the round trip, the await on it, the
 *   awaits of the callers above it), or the steps of one API call (fs.readFile's open, stat, read, close)
 * @property {number} start
 * @property {number} end
 * @property {number} site where it began in the app (the innermost span that knows)
 * @property {number} resource
 * @property {number} trip round-trip ms, -1 when not ended by a client socket
 * @property {number} own
 * @property {Set<number>} enclosing sites of the awaits above it (its callers), innermost first
 */

/**
 * Groups a traced request's spans into its waits.
 * @param {import('../sampling/waits.js').WaitRecord} trace
 * @param {WaitData} waits
 * @returns {Operation[]}
 */
function operations (trace, waits) {
  /** @type {Span[]} */
  const spans = trace.spans.map(a => ({ start: a[0], dur: a[1], site: a[2], resource: a[3], kind: waits.kinds.get(a[4]) ?? '', cause: a[5], trip: a[6], own: a[7], parent: a[8] }))
  // The steps of one call (fs.readFile's open, then its stat in the open's callback…) are one wait: a native span
  // begun in another's callback at the same site continues it.
  /** @type {number[]} */
  const key = spans.map(s => s.cause)
  /** @type {Map<number, number>} */
  const keyOfCause = new Map()
  spans.forEach((s, i) => {
    const p = s.parent >= 0 ? spans[s.parent] : undefined
    if (p !== undefined && isNative(s) && isNative(p) && p.site === s.site) key[i] = key[s.parent]
    if (isNative(s)) keyOfCause.set(s.cause, key[i])
  })
  // An await ended by one of those steps waited for the whole call.
  spans.forEach((s, i) => { if (!isNative(s)) key[i] = keyOfCause.get(s.cause) ?? key[i] })

  /** @type {Operation[]} */
  const out = []
  for (const [, members] of groupBy(spans.map((s, i) => ({ s, k: key[i] })), m => m.k)) {
    const list = members.map(m => m.s).sort((a, b) => a.start - b.start)
    // Its extent is that of the I/O itself when the request made it (the round trip, the call's steps), else that of
    // the first await on it (a query a pool wrote later, a worker's reply): the awaits above only wrap it.
    const physical = list.filter(isNative)
    const basis = physical.length > 0 ? physical : [list[0]]
    const start = Math.min(...basis.map(s => s.start))
    const end = Math.max(...basis.map(s => s.start + s.dur))
    const sited = list.find(s => s.site >= 0)
    const site = sited?.site ?? -1
    const named = list.find(s => !isVague(waits.resources.get(s.resource))) ?? list[0]
    const tripped = list.find(s => s.trip >= 0)
    // The awaits above it at other lines: its callers (the loop of an N+1 among them).
    const at = lineOf(waits, site)
    /** @type {Set<number>} */
    const enclosing = new Set()
    for (const s of list) if (s.site >= 0 && !isNative(s) && lineOf(waits, s.site) !== at) enclosing.add(s.site)
    // A request whose own await waited longer than the trip that answered it queued before the trip was written.
    const awaited = list.find(s => !isNative(s) && s.trip >= 0)
    out.push({
      start: awaited !== undefined && tripped?.own === 0 ? Math.min(start, awaited.start) : start,
      end: Math.max(end, awaited !== undefined && tripped?.own === 0 ? awaited.start + awaited.dur : end),
      site,
      resource: named.resource,
      trip: tripped?.trip ?? -1,
      own: tripped?.own ?? -1,
      enclosing
    })
  }
  return out
}

/**
 * @param {WaitData} waits
 * @param {number} site
 */
function lineOf (waits, site) {
  const s = waits.sites.get(site)
  return s === undefined ? '' : `${s.file}:${s.line}`
}

/** @param {Span} s a span that stands for I/O the request made itself (not an await or a then) */
const isNative = (s) => s.kind !== 'PROMISE'

/** @param {string[] | undefined} r */
const isVague = (r) => r === undefined || r[0] === 'unknown' || r[0] === 'other'

/**
 * Each instant of a request's time goes to the waits in progress then, shared equally between those that run at
 * once: what the request's time went to, without counting parallel waits twice.
 * @param {Operation[]} ops
 * @param {number} ms the request's time on the server
 * @returns {Map<Operation, number>} ms per wait
 */
function attribute (ops, ms) {
  /** @type {{ at: number, op: Operation, open: boolean }[]} */
  const edges = []
  for (const op of ops) {
    const a = Math.max(0, op.start)
    const b = Math.min(ms, op.end)
    if (b <= a) continue
    edges.push({ at: a, op, open: true }, { at: b, op, open: false })
  }
  edges.sort((x, y) => x.at - y.at || Number(x.open) - Number(y.open))
  /** @type {Map<Operation, number>} */
  const out = new Map()
  /** @type {Set<Operation>} */
  const active = new Set()
  let last = 0
  for (const e of edges) {
    if (active.size > 0 && e.at > last) {
      const each = (e.at - last) / active.size
      for (const op of active) out.set(op, (out.get(op) ?? 0) + each)
    }
    last = e.at
    if (e.open) active.add(e.op)
    else active.delete(e.op)
  }
  return out
}

/**
 * @typedef {object} Acc
 * @property {import('../sampling/waits.js').WaitSite} site
 * @property {string} cwd
 * @property {number} pid
 * @property {number} threadId
 * @property {number} requests
 * @property {number} waits
 * @property {number} waitMs
 * @property {number} attributedMs
 * @property {number} tripMs
 * @property {number} trips
 * @property {number} queuedMs
 * @property {number} others
 * @property {number} sequentialRequests
 * @property {number} sequentialWaits
 * @property {number} sequentialMs
 * @property {number} parallelRequests
 * @property {number} parallelWaits
 * @property {Map<string, number>} resources
 * @property {Map<number, number>} loops
 * @property {Map<string, number>} endpoints
 * @property {WaitData['sites']} table the thread's sites, by id
 */

/**
 * @param {import('../sampling/waits.js').WaitSite} site
 * @param {ThreadRecord} t
 * @param {string} cwd
 * @returns {Acc}
 */
function newAcc (site, t, cwd) {
  return { site, cwd, table: t.waits.sites, pid: t.pid, threadId: t.threadId, requests: 0, waits: 0, waitMs: 0, attributedMs: 0, tripMs: 0, trips: 0, queuedMs: 0, others: 0, sequentialRequests: 0, sequentialWaits: 0, sequentialMs: 0, parallelRequests: 0, parallelWaits: 0, resources: new Map(), loops: new Map(), endpoints: new Map() }
}

/**
 * One request's waits at one site.
 * @param {Acc} acc
 * @param {Operation[]} list
 * @param {number} ms attributed to them
 * @param {WaitData} waits
 */
function addToAcc (acc, list, ms, waits) {
  acc.requests++
  acc.waits += list.length
  acc.attributedMs += ms
  let sum = 0
  for (const op of list) {
    const d = op.end - op.start
    sum += d
    acc.waitMs += d
    const r = waits.resources.get(op.resource) ?? ['unknown', '', '']
    const name = r.join('\u0000')
    acc.resources.set(name, (acc.resources.get(name) ?? 0) + 1)
    if (op.trip >= 0) {
      acc.trips++
      acc.tripMs += op.trip
      // Time before the trip was written: a pool's queue (its trip written later, by another context's callback, or
      // by the same request once a connection came free, as an HTTP agent does).
      const queued = Math.max(0, d - op.trip)
      acc.queuedMs += queued
      if (op.own === 0 || queued >= QUEUED) acc.others++
      if (r[2]) acc.endpoints.set(r[2], (acc.endpoints.get(r[2]) ?? 0) + 1)
    }
    // The innermost await above it: the caller that loops, in an N+1.
    const [caller] = op.enclosing
    if (caller !== undefined) acc.loops.set(caller, (acc.loops.get(caller) ?? 0) + 1)
  }
  if (list.length >= 2) {
    const union = unionLength(list)
    if (sum - union <= SEQUENTIAL_OVERLAP * sum) {
      acc.sequentialRequests++
      acc.sequentialWaits += list.length
      acc.sequentialMs += sum
    } else {
      acc.parallelRequests++
      acc.parallelWaits += list.length
    }
  }
}

/** @param {Operation[]} list */
function unionLength (list) {
  const sorted = [...list].sort((a, b) => a.start - b.start)
  let total = 0
  let from = -Infinity
  let to = -Infinity
  for (const op of sorted) {
    if (op.start > to) {
      if (to > from) total += to - from
      from = op.start
      to = op.end
    } else if (op.end > to) {
      to = op.end
    }
  }
  if (to > from) total += to - from
  return total
}

/**
 * @param {Acc} acc
 * @param {number} traced
 * @param {number} totalMs
 * @param {ThreadRecord[]} threads
 * @returns {WaitSignal}
 */
function summarize (acc, traced, totalMs, threads) {
  const [top] = [...acc.resources].sort((a, b) => b[1] - a[1])
  const [type, op, target] = top ? top[0].split('\u0000') : ['unknown', '', '']
  const s = acc.site
  const site = {
    function: s.function,
    file: displayPath(s.file, acc.cwd),
    line: s.line,
    column: s.column,
    api: s.api,
    callers: s.callers.map(c => ({ function: c.function, file: displayPath(c.file, acc.cwd), line: c.line }))
  }
  const perRequest = acc.waits / Math.max(1, traced)
  const msPerWait = acc.waits > 0 ? acc.waitMs / acc.waits : 0
  const msPerTrip = acc.trips > 0 ? acc.tripMs / acc.trips : null
  const seqPerRequest = acc.sequentialRequests > 0 ? acc.sequentialWaits / acc.sequentialRequests : 0
  const sequential = acc.sequentialRequests >= Math.max(1, acc.requests / 2) && seqPerRequest >= THRESHOLDS.sequentialWaits
    ? { perRequest: seqPerRequest, loop: loopOf(acc), savedMs: (acc.sequentialMs / acc.sequentialRequests) * (1 - 1 / seqPerRequest) }
    : null
  const parallel = acc.parallelRequests >= Math.max(1, acc.requests / 2) ? { perRequest: acc.parallelWaits / acc.parallelRequests } : null
  const queue = acc.others > 0 && acc.trips > 0 && acc.queuedMs / acc.trips >= QUEUED ? { msPerWait: acc.queuedMs / acc.trips, others: acc.others / acc.trips } : null
  return {
    site,
    resource: { type, op, target, name: resourceName(type, op, target) },
    share: totalMs > 0 ? acc.attributedMs / totalMs : 0,
    perRequest,
    msPerWait,
    msPerTrip,
    requests: acc.requests,
    sequential,
    parallel,
    queue,
    pool: queue !== null ? poolOf(acc, threads) : null,
    pid: acc.pid,
    threadId: acc.threadId
  }
}

/**
 * The caller that awaits each of a sequence of waits: the loop, when it is the same line each time.
 * @param {Acc} acc
 */
function loopOf (acc) {
  const [best] = [...acc.loops].sort((a, b) => b[1] - a[1])
  const awaiting = best !== undefined && best[1] >= acc.waits / 2 ? acc.table.get(best[0]) : undefined
  // Else the caller frame of the wait's own stack; with neither, the wait's own line loops.
  const caller = awaiting ?? acc.site.callers[0]
  return caller ? { function: caller.function, file: displayPath(caller.file, acc.cwd), line: caller.line } : null
}

/**
 * The pool behind the connections a queued wait's trips went over.
 * @param {Acc} acc
 * @param {ThreadRecord[]} threads
 */
function poolOf (acc, threads) {
  const [top] = [...acc.endpoints].sort((a, b) => b[1] - a[1])
  if (top === undefined) return null
  const endpoint = top[0]
  const t = threads.find(x => x.pid === acc.pid && x.threadId === acc.threadId)
  let connections = 0
  let busy = 0
  for (const snap of t?.sockets ?? []) {
    for (const e of snap.endpoints) {
      if (e.endpoint !== endpoint) continue
      connections = Math.max(connections, Number(e.maxOpen) || 0)
      busy = Math.max(busy, Number(e.maxBusy) || 0)
    }
  }
  const found = t?.pools.find(p => p.endpoint === endpoint)?.pool ?? null
  return {
    endpoint,
    connections,
    busy,
    class: found?.class ?? null,
    site: found ? { function: String(found.site.function), file: displayPath(String(found.site.file), acc.cwd), line: Number(found.site.line) || 0 } : null,
    limit: found?.limit ?? null
  }
}

/**
 * @param {string} type
 * @param {string} op
 * @param {string} target
 */
export function resourceName (type, op, target) {
  switch (type) {
    case 'tcp': return `tcp ${target}${op ? ` (${op})` : ''}`
    case 'timer':
    case 'fs':
    case 'thread pool':
      return op || type
    case 'dns': return `${op || 'dns'}${target ? ` ${target}` : ''}`
    case 'connect': return `connect ${target}`
    case 'client': return 'the client (request body)'
    case 'worker': return 'a worker thread\'s message'
    case 'child process': return 'a child process'
    case 'unknown': return 'unknown'
    default: return `${type}${op ? ` ${op}` : ''}`
  }
}

/**
 * @template T, K
 * @param {T[]} list
 * @param {(x: T) => K} key
 * @returns {Map<K, T[]>}
 */
function groupBy (list, key) {
  /** @type {Map<K, T[]>} */
  const out = new Map()
  for (const x of list) {
    const k = key(x)
    const g = out.get(k)
    if (g) g.push(x)
    else out.set(k, [x])
  }
  return out
}
