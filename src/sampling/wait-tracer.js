// One piece on purpose: the async hooks below share the tracer's private id tables and per-slot budgets on every
// promise and callback of the process; splitting them across modules would put a property lookup on that path.
// What the spans mean, where a wait began, on what, and how a request is written live in the wait-*.js modules.
import { AsyncResource, createHook, executionAsyncId, executionAsyncResource } from 'node:async_hooks'
import { performance } from 'node:perf_hooks'
import { CAUSE, CAUSE_TRIPS, CLIENT, CTX, DEFERRALS, SPAN } from './wait-spans.js'
import { rawStack, writerOf } from './wait-sites.js'
import { WaitRecorder, waitedMs } from './wait-records.js'
import { foldPath, routeOf } from './route-timer.js'

/** @typedef {import('./sockets.js').Trip} Trip */
/** @typedef {import('./wait-spans.js').Span} Span */
/** @typedef {import('./wait-spans.js').Trace} Trace */

/** On a deferral (nextTick, setImmediate, queueMicrotask) made while the tracer is on, traced request or not. */
const DEFERRED = Symbol('hotpath.deferred')
/** On a deferral of a traced request: the client-socket trips written from it so far. */
const WRITES = Symbol('hotpath.writes')
/** On what a deferral's callback created, and what that created in turn: the deferral. */
const FROM = Symbol('hotpath.from')
/** On a client's deferral (see CLIENT) once what it started wrote again to its endpoint: a chain of the client's
 * batches (ioredis writes the next pipeline from the callback of the one before), no request's. */
const BATCH = Symbol('hotpath.batch')
/** What a trip of a batch carries that is not the writer's own: no request, but the mark that a batch wrote it (the
 * request whose command it carries finds it by its reply: wait-records.js). */
const BATCHED = Object.freeze({ trace: undefined, stack: null, parent: null, deferred: true })

/** What a trip a client wrote by itself in the handlers of a reply carries: no request, but the mark that the client
 * handed it on (a pool writing a queued query as a connection came free): the request waiting for it finds it by its
 * reply (wait-resources.js). */
const HANDED = Object.freeze({ trace: undefined, stack: null, parent: null, deferred: false, handed: true })

/** Async resources that live across requests (connections, servers, ports): never part of one request's context. */
const SHARED = new Set([
  'TCPWRAP', 'TCPSERVERWRAP', 'PIPEWRAP', 'PIPESERVERWRAP', 'TLSWRAP', 'TTYWRAP', 'UDPWRAP', 'SIGNALWRAP',
  'HTTPINCOMINGMESSAGE', 'HTTP2SESSION', 'WRITEWRAP', 'SHUTDOWNWRAP', 'ELDHISTOGRAM', 'STATWATCHER', 'FSEVENTWRAP',
  'JSSTREAM', 'JSUDPWRAP', 'DNSCHANNEL', 'INSPECTORJSBINDING'
])

/** Stacks taken per traced request at most: each costs a few µs (a request of 20 round trips through a driver takes
 * about 100). */
const MAX_STACKS = 400
/** Stacks taken per second at most, over all traced requests (~10 ms of CPU): requests that create many async
 * resources are traced more rarely. */
const STACKS_PER_SECOND = 2500
/** How much a traced request's waits count against the one traced after it, in waitShare… */
const DECAY = 0.9
/** …once their weights add up to this: five requests traced. */
const MIN_EVIDENCE = 4
/** Waits kept per traced request: a request that streams for minutes keeps its first ones. */
const MAX_SPANS = 2000
/** Round trips kept per traced request beyond MAX_SPANS, each with its stack: an ORM makes a score of promises per
 * query, and a request of 120 queries filled MAX_SPANS and MAX_STACKS with them at its 60th — its later queries lost
 * their lines, and their count. The trips are what the backend ran: they are kept. */
const MAX_TRIPS = 1000

/**
 * @typedef {object} WaitSite where a wait began, as the app wrote it
 * @property {string} function
 * @property {string} file
 * @property {number} line
 * @property {number} column
 * @property {string | null} api what the app called there, as the first frame below its own names it
 *   (`BoundPool.query`, `readFile`, `setTimeout`)
 * @property {string | null} apiFile that frame's file (`node:fs`, `…/node_modules/pg-pool/index.js`)
 * @property {{ function: string, file: string, line: number, column?: number }[]} callers the app frames above, innermost first (async
 *   ones included): the loop around a wait is often one of them
 * @property {PackageFrame[]} [below] the packages the app's call went through down to the wait, outermost first (a
 *   framework's `res.json`, a middleware's `res.end`, a store, an ORM, a driver)
 * @property {PackageFrame[]} [packages] for a wait whose stack holds no frame of the app (a middleware's session
 *   lookup, an ORM's hook, a driver's retry): the packages its stack went through, outermost first, from the
 *   request's dispatcher (a framework) down to the one that made the call; `function`, `file` and `line` are then the
 *   outermost one's
 */

/**
 * @typedef {object} PackageFrame a package a wait's stack went through, by its name and the function the stack entered
 *   it by (`express-session` `session`, `connect-session-sequelize` `SequelizeStore.get`)
 * @property {string} name
 * @property {string} function
 * @property {string} file
 * @property {number} line
 */

/**
 * @typedef {object} WaitRecord one traced request, as written to the run: times in ms from its start
 * @property {number} time epoch ms when it started
 * @property {number} ms how long it was on the server
 * @property {number[][]} spans each wait, as [start, duration, site id (-1: no app frame), resource id, kind id,
 *   what ended it (an id: waits ended by the same I/O share it), the duration of the client-socket round trip that
 *   ended it (-1: none), whether this request wrote that trip (1; 0 when another context did — a pool that queued the
 *   request's query wrote it later, from someone else's callback; 2 when another request's deferral wrote it (a batch of
 *   what a tick asked for) and it carried this request's command — its own round trip, sent on another's tick; -1: no trip), the span it began
 *   in (index, -1: none),
 *   the ms of that trip spent behind replies to earlier operations (-1: no trip; see Trip's `ahead`)]
 * @property {string} [route] `GET /orders/:id`: the request's method and route (route-timer.js)
 * @property {1} [cut] its client went away before the response was written: its waits stop there (see Trace's `cut`)
 * @property {number[][]} [floating] what the request started and left pending when its response finished, by site:
 *   [site id, count, settled since, ms after the response summed, at most]
 */

/**
 * Where a server's requests wait, and on what: for a sample of the requests served while the event loop idles, every
 * await, timer, file read, DNS lookup, child process and client-socket round trip the request starts is timed from
 * where it began (a stack, so the line in the app) to the callback that ended it (the I/O resource whose callback ran:
 * which socket and which operation on it, which timer…). Built on async_hooks: a request's context follows its
 * promises and callbacks as Node's own AsyncLocalStorage does; client sockets (sockets.js) say which round trip a read
 * completed, and which request wrote it. What a request's waits are kept as: wait-spans.js; where they began:
 * wait-sites.js; on what: wait-resources.js; how a finished request is written: wait-records.js.
 *
 * Cost: while armed, async_hooks costs every promise and callback ~0.1 µs; a traced request costs a stack (a few µs)
 * per async resource it creates, up to MAX_STACKS, and STACKS_PER_SECOND over all. The probe arms the tracer only while the load runs and the event
 * loop is mostly idle (a server that computes does not wait), and traces at most `rate` requests a second, `inFlight`
 * at once.
 */
export class WaitTracer {
  #hook
  /** @type {Function} the init hook: stacks start below it */
  #initHook
  #enabled = false
  /** hooks kept on with no request traced: what the traced requests left pending is seen to settle */
  #held = false
  armed = false
  /** @type {((on: boolean) => void) | null} told when the hooks go on and off: while on, they cost every promise */
  onToggle = null
  /** @type {Map<string, number> | null} when set (a window on real traffic), the rate applies to each path (ids
   * folded) apart, and this holds when each was last traced */
  byPath = null
  #nextId = 1
  #lastStart = -Infinity
  #pausedAt = 0
  /** stacks taken since #budgetAt */
  #stacks = 0
  #budgetAt = -Infinity
  /** @type {Set<Trace>} requests being traced */
  #live = new Set()
  /** @type {Trace[]} */
  #finished = []
  #recorder = new WaitRecorder()
  /** @type {unknown} the I/O whose callback runs now, or ran last: what the promises resolved now continue */
  #cause = null
  /** @type {Trip[] | null} the client-socket trips the current read completed */
  #causeTrips = null
  #gap
  #maxInFlight
  traced = 0
  // The recent traced requests' time on the server and the part of it they waited, each request weighing DECAY times
  // the one after it: what tracing finds, for the probe to decide whether it is worth its cost (waitShare).
  #recent = 0
  #recentMs = 0
  #recentWaited = 0
  /** the same weights, of the traced requests that left promises pending when their response finished */
  #recentLeft = 0

  /** @param {{ rate?: number, inFlight?: number }} [opts] requests traced per second, and at once, at most */
  constructor (opts = {}) {
    this.#gap = 1000 / (opts.rate ?? 25)
    this.#maxInFlight = opts.inFlight ?? 4
    // Hooks must not throw into the target: each body is guarded, and does as little as it can when no request is
    // traced (one resource lookup).
    /** @type {(asyncId: number, type: string, triggerAsyncId: number, resource: object) => void} */
    const init = (asyncId, type, triggerAsyncId, resource) => {
      try { this.#init(type, triggerAsyncId, resource) } catch {}
    }
    this.#initHook = init
    this.#hook = createHook({
      init,
      before: () => {
        try { this.#before() } catch {}
      }
    })
    /** @type {import('./sockets.js').TraceHooks} */
    this.socketHooks = {
      active: () => this.#enabled,
      onWrite: (endpoint, reading) => this.#onWrite(endpoint, reading),
      onRead: (trips) => { this.#causeTrips = trips },
      onTrip: (trip) => this.#onTrip(trip),
      resume: (trips) => this.#resume(trips),
      resumed: (token) => this.#resumed(token)
    }
  }

  /** Traces requests from now on (the probe arms the tracer in slots, while the loop idles under load). */
  arm () {
    this.armed = true
    this.#enable()
  }

  /**
   * Traces no new request; the hooks stay on until the requests being traced finish (or, after `grace` ms, are
   * dropped: a request that never ends must not keep every promise of the process paying).
   * @param {number} [grace]
   */
  pause (grace = 2000) {
    if (this.armed) this.#pausedAt = performance.now()
    this.armed = false
    this.#held = false
    if (this.#live.size === 0) this.#disable()
    else if (performance.now() - this.#pausedAt > grace) this.disarm()
  }

  /**
   * Traces no new request, and keeps the hooks on until `disarm`: the work the requests traced left pending as they
   * answered is followed until it settles, or until they are written.
   */
  hold () {
    this.armed = false
    this.#held = this.#enabled
  }

  /**
   * Stops tracing now: requests being traced are dropped, their waits incomplete — but those whose client went away
   * are written as they stand, marked cut: a server that never answers in time has nothing else to show.
   */
  disarm () {
    this.armed = false
    this.#held = false
    for (const trace of this.#live) {
      if (trace.closed !== undefined) trace.closed()
      else trace.abandoned = true
    }
    this.#live.clear()
    this.#disable()
  }

  /**
   * The part of their time on the server that the recently traced requests spent waiting, 0..1; null until
   * MIN_EVIDENCE requests were traced.
   * @returns {number | null}
   */
  get waitShare () {
    if (this.#recent < MIN_EVIDENCE) return null
    return this.#recentMs > 0 ? Math.min(1, this.#recentWaited / this.#recentMs) : 0
  }

  /**
   * Whether most of the recently traced requests left promises pending when their response finished (work fired and
   * not awaited): the requests need not wait for tracing to find something, so it is worth its cost.
   */
  get leavesWork () {
    return this.#recent >= MIN_EVIDENCE && this.#recentLeft >= 0.5 * this.#recent
  }

  /** Forgets what the requests traced so far waited (a new load window). */
  forget () {
    this.#recentLeft = 0
    this.#recent = 0
    this.#recentMs = 0
    this.#recentWaited = 0
  }

  /** Whether the hooks are on: armed, or finishing the requests traced while it was */
  get active () {
    return this.#enabled
  }

  #enable () {
    if (this.#enabled) return
    this.#hook.enable()
    this.#enabled = true
    try { this.onToggle?.(true) } catch {}
  }

  #disable () {
    if (!this.#enabled) return
    this.#hook.disable()
    this.#enabled = false
    this.#cause = null
    this.#causeTrips = null
    try { this.onToggle?.(false) } catch {}
  }

  /**
   * Called for every request of a watched server, in its 'request' event (so in its async context).
   * @param {any} res
   * @param {boolean} [wanted] whether this server's requests are to be traced
   */
  onRequest (res, wanted = true) {
    const root = /** @type {any} */ (executionAsyncResource())
    // A keep-alive connection's requests share one async resource: the previous one's context must not leak on.
    if (root[CTX] !== undefined) root[CTX] = undefined
    if (!this.armed || !wanted) return
    const now = performance.now()
    if (this.#live.size >= this.#maxInFlight) return
    // Real traffic's routes take turns: a client that calls one route right after another would otherwise have only
    // the first traced, every time.
    const routes = this.byPath
    /** @type {string} */
    let path = ''
    if (routes !== null) {
      path = foldPath(String(res.req?.url ?? '/'))
      if (now - (routes.get(path) ?? -Infinity) < this.#gap) return
    } else if (now - this.#lastStart < this.#gap) {
      return
    }
    // The second's budget of stacks: spent, no new trace until the next second.
    if (now - this.#budgetAt >= 1000) {
      this.#budgetAt = now
      this.#stacks = 0
    }
    if (this.#stacks >= STACKS_PER_SECOND) return
    this.#lastStart = now
    if (routes !== null) {
      if (routes.size >= 1000) routes.clear()
      routes.set(path, now)
    }
    this.traced++
    /** @type {Trace} */
    const trace = { id: this.#nextId++, start: now, end: 0, spans: [], stacks: 0, trips: 0, root, abandoned: false }
    this.#live.add(trace)
    root[CTX] = trace
    const end = () => {
      if (trace.end !== 0 || trace.abandoned) return
      trace.end = performance.now()
      if (!res.writableEnded) trace.cut = true
      // Read as it ends: a framework sets the route it matched on the request while handling it.
      try { trace.route = `${res.req?.method ?? 'GET'} ${routeOf(res.req ?? {})}` } catch {}
      this.#live.delete(trace)
      if (root[CTX] === trace) root[CTX] = undefined
      if (this.#finished.length < 2000) this.#finished.push(trace)
      this.#recent = this.#recent * DECAY + 1
      this.#recentMs = this.#recentMs * DECAY + (trace.end - trace.start)
      this.#recentWaited = this.#recentWaited * DECAY + waitedMs(trace)
      this.#recentLeft = this.#recentLeft * DECAY + (leftPending(trace) ? 1 : 0)
      if (!this.armed && !this.#held && this.#live.size === 0) this.#disable()
    }
    res.once('finish', end)
    // A client that goes away (a load that stops closes its connections) does not stop the handler: it is followed
    // until it ends the response, within the pause's grace — a listing of seconds, begun late in the window, was cut
    // at its third query of 26.
    res.once('close', () => {
      if (res.writableEnded) {
        end()
        return
      }
      trace.closed = end
      const resEnd = res.end
      res.end = function (/** @type {any[]} */ ...args) {
        res.end = resEnd
        const r = resEnd.apply(this, args)
        end()
        return r
      }
    })
  }

  /**
   * The requests traced since the last call, ready to write, with the sites and resources first seen in them.
   * @returns {{ traces: WaitRecord[], sites: [number, WaitSite][], resources: [number, string[]][], kinds: [number, string][] }}
   */
  take () {
    const finished = this.#finished
    this.#finished = []
    const traces = finished.map(t => this.#recorder.record(t))
    return { traces, ...this.#recorder.fresh() }
  }

  /**
   * @param {string} type
   * @param {number} triggerAsyncId
   * @param {any} resource
   */
  #init (type, triggerAsyncId, resource) {
    const current = /** @type {any} */ (executionAsyncResource())
    if (DEFERRALS.has(type)) {
      resource[DEFERRED] = true
      if (this.#cause !== null) {
        resource[CAUSE] = this.#cause
        resource[CAUSE_TRIPS] = this.#causeTrips
      }
    }
    const from = current[DEFERRED] === true ? current : current[FROM]
    if (from !== undefined) {
      resource[FROM] = from
      // What a client's chain of batches starts serves every request whose commands the batches carry: it is none's.
      if (from[BATCH] === true) return
    }
    /** @type {Trace | undefined} */
    const trace = current[CTX]
    if (trace === undefined || trace.end !== 0 || trace.abandoned) return
    if (SHARED.has(type)) return
    // A promise without a parent (new Promise, an async function's own) runs no callback: only the promises chained on
    // others (an await, a then) do, and their trigger is their parent rather than the current context.
    if (type === 'PROMISE' && triggerAsyncId === executionAsyncId()) return
    resource[CTX] = trace
    if (trace.spans.length >= MAX_SPANS) return
    /** @type {Span} */
    const span = { kind: type, t0: performance.now(), t1: 0, stack: null, parent: current[SPAN] ?? null, cause: null, trips: null, resource: type === 'PROMISE' ? null : resource }
    if (trace.stacks < MAX_STACKS) {
      trace.stacks++
      this.#stacks++
      span.stack = rawStack(this.#initHook)
    }
    resource[SPAN] = span
    trace.spans.push(span)
  }

  #before () {
    const r = /** @type {any} */ (executionAsyncResource())
    if (!(r instanceof Promise)) {
      const inherited = r[CAUSE]
      if (inherited !== undefined) {
        this.#cause = inherited
        this.#causeTrips = r[CAUSE_TRIPS]
      } else if (!(r instanceof AsyncResource) && r.type !== 'HTTPCLIENTREQUEST' && r.type !== 'HTTPINCOMINGMESSAGE') {
        // A scope run inside a callback (an AsyncResource's runInAsyncScope: an agent handing a queued request its
        // socket, a driver's bound callback; an HTTP parser's callbacks) is no I/O of its own: the callback's I/O stays
        // the cause of what runs next.
        this.#cause = r
        this.#causeTrips = null
      }
    }
    /** @type {Span | undefined} */
    const span = r[SPAN]
    if (span === undefined || span.t1 !== 0) return
    span.t1 = performance.now()
    span.cause = this.#cause
    span.trips = this.#causeTrips
  }

  /**
   * What a trip written now carries of the traced request writing it. A deferral that writes (a client that batches
   * what a tick asked for in one setImmediate or nextTick: node-redis, ioredis's auto-pipelining) carries the commands
   * of every request that asked in that tick, traced or not, the first of them the one that scheduled it: its first
   * trip is that request's (one trip from a deferral — node:http's client writes a request from a nextTick — is the
   * request's own); the others are marked as a batch's, and the requests whose replies they carry count them as their
   * own (wait-records.js). So are the trips a client's deferral goes on to write to its endpoint from what it started
   * (ioredis writes the next pipeline from the callback of the one before), unless the app called for them there.
   * @param {object} endpoint
   * @param {boolean} reading a client socket's read is running
   * @returns {any}
   */
  #onWrite (endpoint, reading) {
    if (!this.#enabled) return undefined
    const current = /** @type {any} */ (executionAsyncResource())
    /** @type {Trace | undefined} */
    const trace = current[CTX]
    const live = trace !== undefined && trace.end === 0
    if (reading) {
      // In a reply's handlers (a read lends the request whose reply it is its context, #resume), a write is that
      // request's when the app's callback made it; one the client makes there by itself is for whoever waited (a pool
      // handing the connection to the next request's query), and made that request's round trip read as this one's,
      // and its own as a queue.
      if (!live) return HANDED
      return this.#appWrite(trace, current) ?? HANDED
    }
    const from = current[DEFERRED] === true ? current : current[FROM]
    if (from === undefined) return live ? this.#own(trace, current, null, false) : undefined
    if (from === current) {
      current[WRITES] = (current[WRITES] ?? 0) + 1
      if (!live) return BATCHED
      if (current[WRITES] === 1) {
        const stack = this.#writeStack(trace)
        const writer = stack !== null ? writerOf(stack) : 'app'
        if (writer !== 'app' && writer !== null) current[CLIENT] = endpoint
        // A write no one client batches — Node's own (fetch() on Node 22 checks an idle socket in a setImmediate
        // before it writes), or several packages' (a pool handing its client the query in a nextTick) — is the call's:
        // its round trip is sited where the call made the deferral, as it is where a call writes at once (fetch() on
        // Node 20), not at whichever await waits on it.
        return this.#own(trace, current, stack, writer !== null)
      }
      // The app's own call, made in a deferral (a handler run from the nextTick that ended a request's body).
      return this.#appWrite(trace, current) ?? BATCHED
    }
    // Untraced, it may carry a traced request's command, as any deferral's write may.
    if (!live) return BATCHED
    if (from[CLIENT] !== endpoint) return this.#own(trace, current, null, false)
    const own = this.#appWrite(trace, current)
    if (own !== null) return own
    from[BATCH] = true
    return BATCHED
  }

  /**
   * A write the app's own call made (a frame of the app on its stack), as the traced request's trip; else null.
   * @param {Trace} trace
   * @param {any} current
   */
  #appWrite (trace, current) {
    const stack = this.#writeStack(trace)
    return stack !== null && writerOf(stack) === 'app' ? this.#own(trace, current, stack, false) : null
  }

  /**
   * A trip the traced request wrote itself.
   * @param {Trace} trace
   * @param {any} current the async resource writing it
   * @param {{ stack?: string } | null} stack taken already (#writeStack), else null
   * @param {boolean} deferred written from a deferral by a client that may batch there, or by the app: no round trip of
   *   its own, the awaits its reply ends say where the request made it (see #onTrip)
   */
  #own (trace, current, stack, deferred) {
    if (trace.trips < MAX_TRIPS) {
      stack ??= this.#writeStack(trace)
      trace.trips++
    }
    return { trace, stack, parent: current[SPAN] ?? null, deferred }
  }

  /**
   * The stack of a write, while the request has stacks of trips left to take.
   * @param {Trace} trace
   */
  #writeStack (trace) {
    if (trace.trips >= MAX_TRIPS) return null
    this.#stacks++
    return rawStack(this.#onWrite)
  }

  /**
   * A read answered round trips; when they are all one traced request's, the callbacks the client runs inside the read
   * continue that request: the read's async resource carries its context until the client has seen the read.
   * @param {Trip[]} trips
   * @returns {unknown} what #resumed undoes
   */
  #resume (trips) {
    if (!this.#enabled) return undefined
    /** @type {Trace | undefined} */
    let trace
    for (const trip of trips) {
      const t = trip.trace?.trace
      if (t === undefined) continue
      if (trace !== undefined && t !== trace) return undefined
      trace = t
    }
    if (trace === undefined || trace.end !== 0 || trace.abandoned) return undefined
    const r = /** @type {any} */ (executionAsyncResource())
    if (r === null || typeof r !== 'object' || r[CTX] !== undefined) return undefined
    r[CTX] = trace
    return r
  }

  /** @param {unknown} token the resource #resume gave a context */
  #resumed (token) {
    if (token !== null && typeof token === 'object') /** @type {any} */ (token)[CTX] = undefined
  }

  /** @param {Trip} trip a round trip written from a traced request, now answered */
  #onTrip (trip) {
    const { trace, stack, parent, deferred } = trip.trace
    // Written from a deferral a client batches in, it may carry other requests' commands: the awaits its reply ends
    // say where the request made it, as they do for the trips of a batch that are not the request's own.
    if (deferred || trace === undefined || trace.end !== 0 || trace.spans.length >= MAX_SPANS + MAX_TRIPS) return
    trace.spans.push({ kind: 'socket', t0: trip.start, t1: trip.end, stack, parent, cause: null, trips: [trip], resource: null })
  }
}

/**
 * Whether a finished request left a promise it chained pending.
 * @param {Trace} trace
 */
function leftPending (trace) {
  for (const span of trace.spans) {
    if (span.t1 === 0 && span.kind === 'PROMISE') return true
  }
  return false
}
