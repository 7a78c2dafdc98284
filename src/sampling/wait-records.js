// A finished traced request as written to the run (a WaitRecord): its waits kept, each as numbers, with the sites,
// resources and kinds they name given small ids that are written once.

import { performance } from 'node:perf_hooks'
import { DEFERRALS } from './wait-spans.js'
import { isClientWork, siteOf } from './wait-sites.js'
import { describe, methodOf, writtenFor, tripOf, tripResource } from './wait-resources.js'

/** @typedef {import('./wait-spans.js').Span} Span */
/** @typedef {import('./wait-spans.js').Trace} Trace */
/** @typedef {import('./wait-tracer.js').WaitRecord} WaitRecord */
/** @typedef {import('./wait-tracer.js').WaitSite} WaitSite */

/** A wait shorter than this is a hop between callbacks, not a wait (ms). */
const MIN_WAIT = 0.02

/**
 * Whether a span of a finished request is a wait it is written with: ended within the request, long enough, no
 * deferral, and not begun after the round trips whose read ended it were over — a promise made in the code that read
 * resumed and settled by it (a query builder's `then` after the session's GET came back) waited on no I/O, and lent
 * that GET its line.
 * @param {Span} span
 * @param {Trace} trace
 */
function isWait (span, trace) {
  return span.t1 !== 0 && span.t1 <= trace.end && span.t1 - span.t0 >= MIN_WAIT && !DEFERRALS.has(span.kind) && !begunAfter(span)
}

/** @param {Span} span */
function begunAfter (span) {
  const trips = span.trips
  if (trips === null || trips.length === 0) return false
  for (const trip of trips) if (trip.end === 0 || trip.end > span.t0) return false
  return true
}

/**
 * ms of a finished request's time on the server during which it waited on something: the union of its waits, which
 * overlap when it waits on several things at once.
 * @param {Trace} trace
 */
export function waitedMs (trace) {
  const waits = trace.spans.filter(span => isWait(span, trace)).sort((a, b) => a.t0 - b.t0)
  let waited = 0
  let reached = trace.start
  for (const span of waits) {
    const from = Math.max(span.t0, reached)
    if (span.t1 > from) {
      waited += span.t1 - from
      reached = span.t1
    }
  }
  return waited
}

/** Writes finished traces; the ids it gives sites, resources, kinds and causes hold for the whole run. */
export class WaitRecorder {
  /** @type {Table<WaitSite>} */
  #sites = new Table()
  /** @type {Table<string[]>} */
  #resources = new Table()
  /** @type {Table<string>} */
  #kinds = new Table()
  /** @type {WeakMap<object, number>} */
  #causeIds = new WeakMap()
  #nextCauseId = 1

  /**
   * The sites, resources and kinds first named since the last call.
   * @returns {{ sites: [number, WaitSite][], resources: [number, string[]][], kinds: [number, string][] }}
   */
  fresh () {
    return { sites: this.#sites.fresh(), resources: this.#resources.fresh(), kinds: this.#kinds.fresh() }
  }

  /**
   * @param {Trace} trace
   * @returns {WaitRecord}
   */
  record (trace) {
    /** @type {Map<Span, number>} */
    const kept = new Map()
    for (const span of trace.spans) {
      if (isWait(span, trace) && !isClientWork(span)) kept.set(span, kept.size)
    }
    // The waits one read ended share its trips (one array): the client method one of them named tells them all which
    // reply was theirs (an await's own promise names none; the call's promise inside it does).
    /** @type {Map<unknown, string>} */
    const methods = new Map()
    for (const span of kept.keys()) {
      const method = span.trips !== null && span.trips.length > 0 ? methodOf(siteOf(span)) : null
      if (method !== null && !methods.has(span.trips)) methods.set(span.trips, method)
    }
    /** @type {WaitRecord['spans']} */
    const spans = []
    for (const span of kept.keys()) {
      const site = siteOf(span)
      const method = methods.get(span.trips) ?? null
      const trip = tripOf(span, trace, method)
      const resource = trip !== null ? tripResource(trip, method) : describe(span)
      let parent = span.parent
      while (parent !== null && !kept.has(parent)) parent = parent.parent
      spans.push([
        round(span.t0 - trace.start),
        round(span.t1 - span.t0),
        site === null ? -1 : this.#siteId(site),
        this.#resources.id(resource.join('\u0000'), resource),
        this.#kinds.id(span.kind, span.kind),
        this.#causeId(trip ?? span.cause ?? span),
        // A trip a read may not have answered (uncounted replies, others in flight) times nothing.
        trip !== null && trip.certain !== false ? round(trip.end - trip.start) : -1,
        trip === null || trip.certain === false ? -1 : trip.trace?.trace === trace ? 1 : writtenFor(trip, method) ? 2 : 0,
        parent === null ? -1 : /** @type {number} */ (kept.get(parent)),
        trip !== null && trip.certain !== false && trip.ahead !== undefined ? round(trip.ahead) : -1
      ])
    }
    const floating = this.#floating(trace)
    return { time: Math.round(performance.timeOrigin + trace.start), ms: round(trace.end - trace.start), spans, ...(trace.route ? { route: trace.route } : {}), ...(trace.cut ? { cut: /** @type {1} */ (1) } : {}), ...(floating.length > 0 ? { floating } : {}) }
  }

  /**
   * The request's promises still pending when its response finished (work fired and not awaited): by site,
   * how many, how many settled since, and for how long after the response they lived — until they settled, else
   * until now (the tracer's hooks may be off when a later one settles: then it reads as pending). Not those made by a
   * call the request awaited and got its answer from: what it left behind is the callee's own (fetch's body leaves
   * promises of its stream pending long after `await res.json()` has its answer). Those are made in the same turn as
   * the await on that call, at its line.
   * @param {Trace} trace
   * @returns {number[][]} [site id, count, settled, ms summed, ms at most]
   */
  #floating (trace) {
    /** @type {Map<number, number[]>} */
    const bySite = new Map()
    /** @type {Map<Span | null, Span[]> | null} */
    let settled = null
    const now = performance.now()
    for (const span of trace.spans) {
      // Promises only: the timers a response leaves behind are the runtime's own (a keep-alive socket's timeout).
      if (span.stack === null || span.kind !== 'PROMISE' || (span.t1 !== 0 && span.t1 <= trace.end)) continue
      const site = siteOf(span)
      if (site === null) continue
      settled ??= settledByParent(trace)
      if (settled.get(span.parent)?.some(s => sameLine(siteOf(s), site))) continue
      const id = this.#siteId(site)
      const age = (span.t1 !== 0 ? span.t1 : now) - trace.end
      const row = bySite.get(id) ?? [id, 0, 0, 0, 0]
      row[1]++
      if (span.t1 !== 0) row[2]++
      row[3] += age
      row[4] = Math.max(row[4], age)
      bySite.set(id, row)
    }
    return [...bySite.values()].map(r => [r[0], r[1], r[2], round(r[3]), round(r[4])])
  }

  /** @param {WaitSite} site */
  #siteId (site) {
    return this.#sites.id(`${site.file}:${site.line}:${site.column}|${site.function}|${site.api ?? ''}|${site.callers.map(c => `${c.file}:${c.line}`).join(',')}|${(site.packages ?? site.below ?? []).map(c => `${c.file}:${c.line}`).join(',')}`, site)
  }

  /** @param {unknown} cause */
  #causeId (cause) {
    if (cause === null || typeof cause !== 'object') return 0
    let id = this.#causeIds.get(cause)
    if (id === undefined) {
      id = this.#nextCauseId++
      this.#causeIds.set(cause, id)
    }
    return id
  }
}

/**
 * Values given small ids, each written once: the sites, resources and kinds the traces name by id.
 * @template T
 */
class Table {
  /** @type {Map<string, number>} */
  #ids = new Map()
  /** @type {[number, T][]} */
  #fresh = []

  /**
   * @param {string} key
   * @param {T} value
   */
  id (key, value) {
    let id = this.#ids.get(key)
    if (id === undefined) {
      id = this.#ids.size
      this.#ids.set(key, id)
      this.#fresh.push([id, value])
    }
    return id
  }

  /** @returns {[number, T][]} the values given an id since the last call */
  fresh () {
    const out = this.#fresh
    this.#fresh = []
    return out
  }
}

/**
 * A finished request's promises that settled within it, by the span they began in.
 * @param {Trace} trace
 */
function settledByParent (trace) {
  /** @type {Map<Span | null, Span[]>} */
  const out = new Map()
  for (const span of trace.spans) {
    if (span.kind !== 'PROMISE' || span.stack === null || span.t1 === 0 || span.t1 > trace.end) continue
    const list = out.get(span.parent)
    if (list) list.push(span)
    else out.set(span.parent, [span])
  }
  return out
}

/**
 * @param {WaitSite | null} a
 * @param {WaitSite} b
 */
const sameLine = (a, b) => a !== null && a.line === b.line && a.file === b.file

/** @param {number} ms */
const round = (ms) => Math.round(ms * 1000) / 1000
