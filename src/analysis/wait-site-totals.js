// The waits at one app line, added up over the traced requests (Acc), and the WaitSignal they make: on what, how
// often, one after another (N+1) or at once, queued for a pool.

import { isAbsolute, resolve } from 'node:path'
import { SourceCache } from '../profile/sources.js'
import { displayPath } from './paths.js'
import { enclosingLoop } from './source-loop.js'
import { appFilesOf, packagePath } from './wait-packages.js'
import { writtenByAnother } from './wait-operations.js'
import { THRESHOLDS } from './rules.js'

/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {import('./run-data.js').WaitData} WaitData */
/** @typedef {import('./waits.js').WaitSignal} WaitSignal */
/** @typedef {import('./wait-operations.js').Operation} Operation */

/** What a wait for other requests to finish waited on. */
const BEHIND = ['queue', 'other requests', '']

/** ms a wait lasts beyond its round trip for it to count as queued */
const QUEUED = 1
/** A request's waits at one line are one after another when no more than this share of them began while an earlier one
 * was still in flight; else some ran at once (a batch). */
const SEQUENTIAL_OVERLAP = 0.1
/** ms a wait may begin before the one ahead of it ended and still follow it: the two clocks' readings of one turn */
const FOLLOWS_MS = 0.05

/**
 * @typedef {object} Acc
 * @property {import('../sampling/wait-tracer.js').WaitSite} site
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
 * @property {number} aheadMs of the trips, spent behind replies to earlier operations at the backend
 * @property {number} aheadTrips trips that said so
 * @property {number} behind waits for other requests to finish (see Operation's `behind`)
 * @property {number} behindMs
 * @property {WaitData['sites']} table the thread's sites, by id
 */

/**
 * @param {import('../sampling/wait-tracer.js').WaitSite} site
 * @param {ThreadRecord} t
 * @param {string} cwd
 * @returns {Acc}
 */
export function newAcc (site, t, cwd) {
  return { site, cwd, table: t.waits.sites, pid: t.pid, threadId: t.threadId, requests: 0, waits: 0, waitMs: 0, attributedMs: 0, tripMs: 0, trips: 0, queuedMs: 0, others: 0, sequentialRequests: 0, sequentialWaits: 0, sequentialMs: 0, parallelRequests: 0, parallelWaits: 0, resources: new Map(), loops: new Map(), endpoints: new Map(), aheadMs: 0, aheadTrips: 0, behind: 0, behindMs: 0 }
}

/**
 * One request's waits at one site.
 * @param {Acc} acc
 * @param {Operation[]} list
 * @param {number} ms attributed to them
 * @param {WaitData} waits
 */
export function addToAcc (acc, list, ms, waits) {
  acc.requests++
  acc.waits += list.length
  acc.attributedMs += ms
  let sum = 0
  for (const op of list) {
    const d = op.end - op.start
    sum += d
    acc.waitMs += d
    // What it waited on is named by the time spent on it: a line's slow query, not the pool's quick hand-overs.
    const r = op.behind ? BEHIND : waits.resources.get(op.resource) ?? ['unknown', '', '']
    const name = r.join('\u0000')
    acc.resources.set(name, (acc.resources.get(name) ?? 0) + Math.max(d, 1e-6))
    if (op.behind) {
      acc.behind++
      acc.behindMs += d
    }
    if (op.trip >= 0) {
      acc.trips++
      acc.tripMs += op.trip
      if (op.ahead >= 0) {
        acc.aheadTrips++
        acc.aheadMs += Math.min(op.ahead, op.trip)
      }
      // Time before the trip was written: a pool's queue (its trip written later, by another context's callback, or
      // by the same request once a connection came free, as an HTTP agent does).
      const queued = Math.max(0, d - op.trip)
      acc.queuedMs += queued
      if (writtenByAnother(op.own) || queued >= QUEUED) acc.others++
      if (r[2]) acc.endpoints.set(r[2], (acc.endpoints.get(r[2]) ?? 0) + 1)
    }
    // The innermost await above it: the caller that loops, in an N+1.
    const [caller] = op.enclosing
    if (caller !== undefined) acc.loops.set(caller, (acc.loops.get(caller) ?? 0) + 1)
  }
  if (list.length >= 2) {
    if (overlapping(list) <= SEQUENTIAL_OVERLAP * (list.length - 1)) {
      acc.sequentialRequests++
      acc.sequentialWaits += list.length
      acc.sequentialMs += sum
    } else {
      acc.parallelRequests++
      acc.parallelWaits += list.length
    }
  }
}

/**
 * How many of a request's waits at one line began while an earlier one was still in flight. Counted in waits, not in
 * ms: an ORM's COUNT and page SELECT sent at once (Promise.all) on two connections, one of 26 ms inside one of 353 ms,
 * overlapped by 7% of their summed time and read as two round trips one after another.
 * @param {Operation[]} list
 */
function overlapping (list) {
  const sorted = [...list].sort((a, b) => a.start - b.start)
  let n = 0
  let to = -Infinity
  for (const op of sorted) {
    if (op.start < to - FOLLOWS_MS) n++
    to = Math.max(to, op.end)
  }
  return n
}

/**
 * @param {Acc} acc
 * @param {number} traced
 * @param {number} totalMs
 * @param {ThreadRecord[]} threads
 * @returns {WaitSignal}
 */
export function summarize (acc, traced, totalMs, threads) {
  const [top] = [...acc.resources].sort((a, b) => b[1] - a[1])
  const [type, op, target] = top ? top[0].split('\u0000') : ['unknown', '', '']
  const s = acc.site
  const thread = threads.find(x => x.pid === acc.pid && x.threadId === acc.threadId)
  const site = {
    function: s.function,
    file: displayPath(s.file, acc.cwd),
    line: s.line,
    column: s.column,
    api: s.api,
    callers: s.callers.map(c => ({ function: c.function, file: displayPath(c.file, acc.cwd), line: c.line })),
    packages: thread ? packagePath(s, { constructions: thread.constructions, appFiles: appFilesFor(thread, acc.cwd), cwd: acc.cwd }) : null
  }
  // Round trips are counted as the backend ran them: a line's other waits (a pool's hand-over of a connection, a
  // timer) are not round trips.
  const behind = acc.behind > 0 && acc.behind >= acc.waits / 2
  const counted = !behind && acc.trips >= acc.waits / 2 ? acc.trips : acc.waits
  const perRequest = counted / Math.max(1, traced)
  const msPerWait = counted > 0 ? acc.waitMs / counted : 0
  const msPerTrip = acc.trips > 0 && !behind ? acc.tripMs / acc.trips : null
  const seqPerRequest = acc.sequentialRequests > 0 ? acc.sequentialWaits / acc.sequentialRequests : 0
  const sequential = acc.sequentialRequests >= Math.max(1, acc.requests / 2) && seqPerRequest >= THRESHOLDS.sequentialWaits
    ? { perRequest: seqPerRequest, loop: loopOf(acc), savedMs: (acc.sequentialMs / acc.sequentialRequests) * (1 - 1 / seqPerRequest) }
    : null
  const parallel = acc.parallelRequests >= Math.max(1, acc.requests / 2) ? { perRequest: acc.parallelWaits / acc.parallelRequests } : null
  const queue = !behind && acc.others > 0 && acc.trips > 0 && acc.queuedMs / acc.trips >= QUEUED ? { msPerWait: acc.queuedMs / acc.trips, others: acc.others / acc.trips } : null
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
    backend: acc.aheadTrips > 0 && acc.aheadMs / acc.aheadTrips >= QUEUED
      ? { queuedMs: acc.aheadMs / acc.aheadTrips, serviceMs: Math.max(0, (acc.tripMs / acc.trips) - acc.aheadMs / acc.aheadTrips) }
      : null,
    behind: behind ? { perRequest: acc.behind / Math.max(1, traced), msPerWait: acc.behindMs / acc.behind } : null,
    pid: acc.pid,
    threadId: acc.threadId
  }
}

/** @type {WeakMap<ThreadRecord, string[]>} */
const appFiles = new WeakMap()

/**
 * @param {ThreadRecord} t
 * @param {string} cwd
 */
function appFilesFor (t, cwd) {
  let files = appFiles.get(t)
  if (files === undefined) {
    files = appFilesOf(t, cwd)
    appFiles.set(t, files)
  }
  return files
}

/**
 * The loop that makes a sequence of waits: around the wait in its own function (read from its source), else the
 * caller that awaits each of them, when it is the same line each time.
 * @param {Acc} acc
 */
function loopOf (acc) {
  // A loop around the wait in its own function is the loop, whatever awaits that function.
  const shown = displayPath(acc.site.file, acc.cwd)
  const file = isAbsolute(shown) ? shown : resolve(acc.cwd, shown)
  const text = new SourceCache().read(file)
  const own = text === null ? null : enclosingLoop(text, acc.site.line)
  if (own !== null) return { function: acc.site.function, file: shown, line: own }
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
    case 'queue': return 'other requests to finish'
    case 'worker': return 'a worker thread\'s message'
    case 'child process': return 'a child process'
    case 'unknown': return 'unknown'
    default: return `${type}${op ? ` ${op}` : ''}`
  }
}
