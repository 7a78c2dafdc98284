import { AsyncResource, createHook, executionAsyncId, executionAsyncResource } from 'node:async_hooks'
import { performance } from 'node:perf_hooks'
import { parseFrame, isInternal } from './stack.js'

/** @typedef {import('./sockets.js').Trip} Trip */

// On async resources while the tracer is on. CTX: the traced request a resource was created in. SPAN: the wait a
// resource created in a traced request stands for. CAUSE: on a deferral (nextTick, setImmediate, queueMicrotask), the
// I/O callback it was scheduled from, so that what it resumes is charged to that I/O.
const CTX = Symbol('hotpath.trace')
const SPAN = Symbol('hotpath.span')
const CAUSE = Symbol('hotpath.cause')
const CAUSE_TRIPS = Symbol('hotpath.causeTrips')

/** Async resources that live across requests (connections, servers, ports): never part of one request's context. */
const SHARED = new Set([
  'TCPWRAP', 'TCPSERVERWRAP', 'PIPEWRAP', 'PIPESERVERWRAP', 'TLSWRAP', 'TTYWRAP', 'UDPWRAP', 'SIGNALWRAP',
  'HTTPINCOMINGMESSAGE', 'HTTP2SESSION', 'WRITEWRAP', 'SHUTDOWNWRAP', 'ELDHISTOGRAM', 'STATWATCHER', 'FSEVENTWRAP',
  'JSSTREAM', 'JSUDPWRAP', 'DNSCHANNEL', 'INSPECTORJSBINDING'
])
/** Deferrals: they continue the callback that scheduled them, and are no wait of their own. */
const DEFERRALS = new Set(['TickObject', 'Immediate', 'Microtask'])

/** Stacks taken per traced request at most: each costs a few µs (a request of 20 round trips through a driver takes
 * about 100). */
const MAX_STACKS = 400
/** Stacks taken per second at most, over all traced requests (~10 ms of CPU): requests that create many async
 * resources are traced more rarely. */
const STACKS_PER_SECOND = 2500
/** Waits kept per traced request: a request that streams for minutes keeps its first ones. */
const MAX_SPANS = 2000
/** Frames kept per stack: deep enough to climb out of a driver's or ORM's frames to the app's call. */
const STACK_FRAMES = 40
/** A wait shorter than this is a hop between callbacks, not a wait (ms). */
const MIN_WAIT = 0.02

/**
 * @typedef {object} Span one wait of a traced request, from the moment it began to the callback that ended it
 * @property {string} kind the async resource's type: 'PROMISE' (an await or a then), 'Timeout', 'FSREQCALLBACK', …,
 *   or 'socket' for a round trip on a client socket written from the request
 * @property {number} t0 performance.now() when it began
 * @property {number} t1 when it ended (0 while pending)
 * @property {{ stack?: string } | null} stack captured where it began, formatted only if the span is kept
 * @property {Span | null} parent the span whose callback was running when this one began: its site stands in when this
 *   one's stack has no frame of the app (a driver's callback, a nextTick)
 * @property {unknown} cause what ended it: the I/O resource whose callback ran (a socket handle, a Timeout, an fs
 *   request, a worker's port…)
 * @property {Trip[] | null} trips the client-socket trips the ending read completed
 * @property {object | null} resource the span's own async resource (a Timeout, an fs request…), to describe it
 * @property {WaitSite | null} [site]
 */

/**
 * @typedef {object} Trace a traced request
 * @property {number} id
 * @property {number} start performance.now() when its 'request' event ran
 * @property {number} end when its response finished (0 while in flight)
 * @property {Span[]} spans
 * @property {number} stacks taken so far
 * @property {object} root the async resource its handler ran in
 * @property {boolean} abandoned dropped before it finished (the tracer stopped)
 */

/**
 * @typedef {object} WaitSite where a wait began, as the app wrote it
 * @property {string} function
 * @property {string} file
 * @property {number} line
 * @property {number} column
 * @property {string | null} api what the app called there, as the first frame below its own names it
 *   (`BoundPool.query`, `readFile`, `setTimeout`)
 * @property {string | null} apiFile that frame's file (`node:fs`, `…/node_modules/pg-pool/index.js`)
 * @property {{ function: string, file: string, line: number }[]} callers the app frames above, innermost first (async
 *   ones included): the loop around a wait is often one of them
 */

/**
 * @typedef {object} WaitRecord one traced request, as written to the run: times in ms from its start
 * @property {number} time epoch ms when it started
 * @property {number} ms how long it was on the server
 * @property {number[][]} spans each wait, as [start, duration, site id (-1: no app frame), resource id, kind id,
 *   what ended it (an id: waits ended by the same I/O share it), the duration of the client-socket round trip that
 *   ended it (-1: none), whether this request wrote that trip (1; 0 when another context did — a pool that queued the
 *   request's query wrote it later, from someone else's callback; -1: no trip), the span it began in (index, -1: none)]
 */

/**
 * Where a server's requests wait, and on what: for a sample of the requests served while the event loop idles, every
 * await, timer, file read, DNS lookup, child process and client-socket round trip the request starts is timed from
 * where it began (a stack, so the line in the app) to the callback that ended it (the I/O resource whose callback ran:
 * which socket and which operation on it, which timer…). Built on async_hooks: a request's context follows its
 * promises and callbacks as Node's own AsyncLocalStorage does; client sockets (sockets.js) say which round trip a read
 * completed, and which request wrote it.
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
  armed = false
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
  /** @type {Table<WaitSite>} */
  #sites = new Table()
  /** @type {Table<string[]>} */
  #resources = new Table()
  /** @type {Table<string>} */
  #kinds = new Table()
  /** @type {WeakMap<object, number>} */
  #causeIds = new WeakMap()
  #nextCauseId = 1
  /** @type {unknown} the I/O whose callback runs now, or ran last: what the promises resolved now continue */
  #cause = null
  /** @type {Trip[] | null} the client-socket trips the current read completed */
  #causeTrips = null
  #gap
  #maxInFlight
  traced = 0

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
      onWrite: () => this.#onWrite(),
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
    if (this.#live.size === 0) this.#disable()
    else if (performance.now() - this.#pausedAt > grace) this.disarm()
  }

  /** Stops tracing now: requests being traced are dropped, their waits incomplete. */
  disarm () {
    this.armed = false
    for (const trace of this.#live) trace.abandoned = true
    this.#live.clear()
    this.#disable()
  }

  /** Whether the hooks are on: armed, or finishing the requests traced while it was */
  get active () {
    return this.#enabled
  }

  #enable () {
    if (this.#enabled) return
    this.#hook.enable()
    this.#enabled = true
  }

  #disable () {
    if (!this.#enabled) return
    this.#hook.disable()
    this.#enabled = false
    this.#cause = null
    this.#causeTrips = null
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
    if (now - this.#lastStart < this.#gap || this.#live.size >= this.#maxInFlight) return
    // The second's budget of stacks: spent, no new trace until the next second.
    if (now - this.#budgetAt >= 1000) {
      this.#budgetAt = now
      this.#stacks = 0
    }
    if (this.#stacks >= STACKS_PER_SECOND) return
    this.#lastStart = now
    this.traced++
    /** @type {Trace} */
    const trace = { id: this.#nextId++, start: now, end: 0, spans: [], stacks: 0, root, abandoned: false }
    this.#live.add(trace)
    root[CTX] = trace
    const end = () => {
      if (trace.end !== 0 || trace.abandoned) return
      trace.end = performance.now()
      this.#live.delete(trace)
      if (root[CTX] === trace) root[CTX] = undefined
      if (this.#finished.length < 2000) this.#finished.push(trace)
      if (!this.armed && this.#live.size === 0) this.#disable()
    }
    res.once('finish', end)
    res.once('close', end)
  }

  /**
   * The requests traced since the last call, ready to write, with the sites and resources first seen in them.
   * @returns {{ traces: WaitRecord[], sites: [number, WaitSite][], resources: [number, string[]][], kinds: [number, string][] }}
   */
  take () {
    const finished = this.#finished
    this.#finished = []
    const traces = finished.map(t => this.#record(t))
    return { traces, sites: this.#sites.fresh(), resources: this.#resources.fresh(), kinds: this.#kinds.fresh() }
  }

  /**
   * @param {string} type
   * @param {number} triggerAsyncId
   * @param {any} resource
   */
  #init (type, triggerAsyncId, resource) {
    const current = /** @type {any} */ (executionAsyncResource())
    if (DEFERRALS.has(type) && this.#cause !== null) {
      resource[CAUSE] = this.#cause
      resource[CAUSE_TRIPS] = this.#causeTrips
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

  /** @returns {any} */
  #onWrite () {
    if (!this.#enabled) return undefined
    const current = /** @type {any} */ (executionAsyncResource())
    /** @type {Trace | undefined} */
    const trace = current[CTX]
    if (trace === undefined || trace.end !== 0) return undefined
    let stack = null
    if (trace.stacks < MAX_STACKS) {
      trace.stacks++
      this.#stacks++
      stack = rawStack(this.#onWrite)
    }
    return { trace, stack, parent: current[SPAN] ?? null }
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
    const { trace, stack, parent } = trip.trace
    if (trace.end !== 0 || trace.spans.length >= MAX_SPANS) return
    trace.spans.push({ kind: 'socket', t0: trip.start, t1: trip.end, stack, parent, cause: null, trips: [trip], resource: null })
  }

  /**
   * @param {Trace} trace
   * @returns {WaitRecord}
   */
  #record (trace) {
    /** @type {Map<Span, number>} */
    const kept = new Map()
    for (const span of trace.spans) {
      if (span.t1 === 0 || span.t1 > trace.end || span.t1 - span.t0 < MIN_WAIT || DEFERRALS.has(span.kind)) continue
      kept.set(span, kept.size)
    }
    /** @type {WaitRecord['spans']} */
    const spans = []
    for (const span of kept.keys()) {
      const site = siteOf(span)
      const trip = tripOf(span, trace)
      const resource = trip !== null ? tripResource(trip) : describe(span)
      let parent = span.parent
      while (parent !== null && !kept.has(parent)) parent = parent.parent
      spans.push([
        round(span.t0 - trace.start),
        round(span.t1 - span.t0),
        site === null ? -1 : this.#sites.id(`${site.file}:${site.line}:${site.column}|${site.function}|${site.api ?? ''}|${site.callers.map(c => `${c.file}:${c.line}`).join(',')}`, site),
        this.#resources.id(resource.join('\u0000'), resource),
        this.#kinds.id(span.kind, span.kind),
        this.#causeId(trip ?? span.cause ?? span),
        // A trip a read may not have answered (uncounted replies, others in flight) times nothing.
        trip !== null && trip.certain !== false ? round(trip.end - trip.start) : -1,
        trip === null || trip.certain === false ? -1 : trip.trace?.trace === trace ? 1 : 0,
        parent === null ? -1 : /** @type {number} */ (kept.get(parent))
      ])
    }
    return { time: Math.round(performance.timeOrigin + trace.start), ms: round(trace.end - trace.start), spans }
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
 * The frames where a wait begins, captured but not formatted: V8 formats `stack` when it is first read, which the
 * tracer does only for the waits it keeps.
 * @param {Function} above
 * @returns {{ stack?: string }}
 */
function rawStack (above) {
  /** @type {{ stack?: string }} */
  const holder = {}
  const saved = Error.stackTraceLimit
  Error.stackTraceLimit = STACK_FRAMES
  try {
    Error.captureStackTrace(holder, above)
  } finally {
    Error.stackTraceLimit = saved
  }
  return holder
}

/**
 * Where a span began in the app: its own stack's first app frame, else its parent's (a driver's callback or a nextTick
 * continues what the app started there).
 * @param {Span} span
 * @returns {WaitSite | null}
 */
function siteOf (span) {
  if (span.site !== undefined) return span.site
  // A wait a client socket's round trip ended may begin in the client's code: the methods of the class that opened
  // the connection (and what they run) are not where the request waits, even when the app wrote that class.
  const owners = span.trips?.[0]?.owners ?? []
  let site = span.stack !== null ? siteFromStack(String(span.stack.stack ?? ''), owners) : null
  if (site === null && span.parent !== null && span.parent !== span) site = siteOf(span.parent)
  span.site = site
  return site
}

/**
 * @param {string} text an Error's stack
 * @param {string[]} [owners] classes whose methods are a client's own code (skipped)
 * @returns {WaitSite | null}
 */
export function siteFromStack (text, owners = []) {
  const frames = []
  for (const line of text.split('\n')) {
    const t = line.trim()
    if (t.startsWith('at ')) frames.push(t.slice(3))
  }
  const sites = frames.map(parseFrame)
  const isApp = (/** @type {import('./stack.js').Site | null} */ s) => s !== null && !isInternal(s.file) && !s.file.includes('/node_modules/')
  const isOwner = (/** @type {import('./stack.js').Site | null} */ s) => s !== null && owners.some(o => s.function.replace(/^(async|new)\s+/, '').startsWith(`${o}.`))
  // Past the client's own code: its methods, and what they run below them (a promise executor, a callback).
  let from = 0
  const first = sites.findIndex(isOwner)
  if (first !== -1) {
    from = first + 1
    while (from < sites.length && (isOwner(sites[from]) || !isApp(sites[from]))) from++
  }
  const i = sites.findIndex((s, j) => j >= from && isApp(s) && !isOwner(s))
  if (i === -1) return null
  const own = /** @type {import('./stack.js').Site} */ (sites[i])
  // The call the app made there: the frame below its own, past the async_hooks machinery that reported the wait.
  let below = null
  for (let j = i - 1; j >= 0; j--) {
    const s = sites[j]
    if (s !== null && !s.file.startsWith('node:internal/async_hooks')) {
      below = s
      break
    }
  }
  const callers = []
  for (const s of sites.slice(i + 1)) {
    if (callers.length >= 3) break
    if (isApp(s) && s !== null) callers.push({ function: s.function.replace(/^async\s+/, ''), file: s.file, line: s.line })
  }
  return {
    function: own.function.replace(/^async\s+/, ''),
    file: own.file,
    line: own.line,
    column: own.column,
    api: below ? below.function.replace(/^(async|new)\s+/, '') : null,
    apiFile: below ? below.file : null,
    callers
  }
}

/**
 * The client-socket trip that ended a span: its own, for a round trip; for a wait that a read resumed, the trip of
 * this request among those the read completed (else the first one: a pipelined reply for someone else).
 * @param {Span} span
 * @param {Trace} trace
 * @returns {Trip | null}
 */
function tripOf (span, trace) {
  const trips = span.trips
  if (trips === null || trips.length === 0) return null
  if (span.kind === 'socket') return trips[0]
  for (const trip of trips) if (trip.trace?.trace === trace) return trip
  return trips[0]
}

/** @param {Trip} trip @returns {string[]} */
function tripResource (trip) {
  return [trip.protocol, trip.op ?? '', trip.endpoint]
}

/**
 * What a wait waited on, as [type, operation, target]: a timer and its delay, a file-system call, a DNS lookup, a
 * child process, a worker's message…
 * @param {Span} span
 * @returns {string[]}
 */
function describe (span) {
  const own = span.resource !== null ? describeResource(span.resource, span) : null
  if (own !== null) return own
  const cause = span.cause
  if (cause !== null && typeof cause === 'object') {
    const c = /** @type {any} */ (cause)
    const cs = c[SPAN]
    if (cs !== undefined && cs.resource !== null) {
      const d = describeResource(cs.resource, cs)
      if (d !== null) return d
    }
    const d = describeResource(c, null)
    if (d !== null) return d
  }
  return ['unknown', '', '']
}

/**
 * @param {any} r an async resource
 * @param {Span | null} span its span, when it has one (its site names the API called)
 * @returns {string[] | null}
 */
function describeResource (r, span) {
  const name = String(r?.constructor?.name ?? '')
  const api = span !== null ? siteOf(span)?.api ?? null : null
  switch (name) {
    case 'Timeout':
      return ['timer', `${r._repeat ? 'setInterval' : 'setTimeout'} ${Number(r._idleTimeout)} ms`, '']
    case 'Immediate':
      return ['timer', 'setImmediate', '']
    case 'FSReqCallback':
    case 'FSReqPromise':
    case 'FileHandle':
    case 'FileHandleCloseReq':
      return ['fs', apiName('fs', api), '']
    case 'GetAddrInfoReqWrap':
    case 'GetNameInfoReqWrap':
    case 'QueryReqWrap':
      return ['dns', apiName('dns', api), String(r.hostname ?? r.host ?? '')]
    case 'TCPConnectWrap':
    case 'PipeConnectWrap':
      return ['connect', '', r.address ? `${r.address}:${r.port}` : '']
    case 'Process':
      return ['child process', '', '']
    case 'MessagePort':
      return ['worker', 'message', '']
    case 'TCP':
    case 'Pipe':
    case 'TLSWrap':
      return socketOf(r)
    case 'HTTPClientAsyncResource': {
      const req = r.req
      return ['http', `${req?.method ?? 'GET'} ${req?.path ?? ''}`, String(req?.host ?? '')]
    }
  }
  if (r?.type === 'HTTPCLIENTREQUEST') return ['http', `${r.req?.method ?? 'GET'} ${r.req?.path ?? ''}`, String(r.req?.host ?? '')]
  if (/^[A-Z0-9]+(REQUEST|JOB)$/.test(String(r?.type ?? '')) || /(Job|Request)$/.test(name)) return ['thread pool', api ?? name, '']
  if (name === 'Zlib' || name === 'ZLIB') return ['thread pool', 'zlib', '']
  return name ? ['other', name, ''] : null
}

/**
 * A socket handle that is not one of the process's watched client sockets: a server connection (the request's own
 * body or the client's next bytes) or a socket opened before hotpath could watch it.
 * @param {any} handle
 * @returns {string[]}
 */
function socketOf (handle) {
  /** @type {{ address?: string, port?: number }} */
  const peer = {}
  try { handle.getpeername?.(peer) } catch {}
  const owner = ownerOf(handle)
  if (owner?.server) return ['client', 'request body', '']
  return ['tcp', '', peer.address ? `${peer.address}:${peer.port}` : '']
}

/** @type {symbol | null | undefined} */
let ownerSymbol
/** @param {any} handle @returns {any} the net.Socket a handle belongs to */
function ownerOf (handle) {
  if (ownerSymbol === undefined) ownerSymbol = Object.getOwnPropertySymbols(handle).find(s => s.description === 'owner_symbol') ?? null
  return ownerSymbol !== null ? handle[ownerSymbol] : undefined
}

/**
 * @param {string} module
 * @param {string | null} api the function the app called (`readFile`, `Object.readFile`, `FSReqCallback.open`)
 */
function apiName (module, api) {
  if (api === null) return module
  const fn = api.split('.').pop() ?? api
  return `${module}.${fn}`
}

/** @param {number} ms */
const round = (ms) => Math.round(ms * 1000) / 1000
