import net from 'node:net'
import tls from 'node:tls'
import { performance } from 'node:perf_hooks'
import { executionAsyncId } from 'node:async_hooks'
import { createSniffer } from './protocols.js'
import { appSite, captureStack } from './stack.js'

/** @typedef {import('./stack.js').Site} Site */

/**
 * One round trip on a client socket: what the client wrote (one operation of its protocol, or one write of an unknown
 * one) until the reply that completed it was read.
 * @typedef {object} Trip
 * @property {number} id
 * @property {number} start performance.now() of the first write
 * @property {number} end performance.now() of the read that completed it (0 while in flight)
 * @property {boolean} [certain] false when the protocol's replies cannot be counted and other trips were in flight:
 *   the read may have answered one of them instead
 * @property {string} protocol 'postgres', 'redis', 'mysql', 'mongodb', 'http', … or 'tcp' when not recognised
 * @property {string | null} op the operation, as protocols.js names it (`SELECT … FROM t WHERE id = $1`, `GET`)
 * @property {string} endpoint `127.0.0.1:5432`, or a unix socket's path
 * @property {string[]} owners the classes that opened the connection (see EndpointStats): their methods are the
 *   client's own code, not where the app waits
 * @property {TripStats & { stacks: number }} stats what it counts towards
 * @property {any} [trace] what the wait tracer attached when the write was made inside a traced request
 */

/**
 * Round trips to one endpoint for one operation, counted since the watcher started.
 * @typedef {object} TripStats
 * @property {string} protocol
 * @property {string} endpoint
 * @property {string | null} op
 * @property {number} trips completed
 * @property {number} totalMs summed over the completed ones
 * @property {number} maxMs the longest since the previous snapshot
 * @property {Site | null} site where the app made the call, from the first trips that had an app frame on the stack
 */

/**
 * @typedef {object} EndpointStats the connections to one endpoint
 * @property {string} endpoint
 * @property {string} protocol
 * @property {number} open connections open now
 * @property {number} maxOpen most open at once since the previous snapshot
 * @property {number} inFlight trips in flight now
 * @property {number} maxInFlight most in flight at once since the previous snapshot
 * @property {number} maxBusy most connections with a trip in flight at once since the previous snapshot
 * @property {string[]} owners the classes whose methods opened these connections (`BoundPool`, `Redis`): the frames
 *   between the app and the socket on the first connections' stacks; a pool among them is where the limit lives
 * @property {Site | null} openedAt where the app opened the first connection, when its frames were on the stack
 */

/**
 * @typedef {EndpointStats & { stacks: number, busy: number, ops: Map<string, TripStats & { stacks: number }> }} Endpoint
 */

/** What the in-flight list holds for an operation written while trips are not timed. */
const UNTIMED = /** @type {Trip} */ (/** @type {unknown} */ (Object.freeze({})))

/** Operations kept per endpoint; more distinct ones are counted under `op: null`. */
const MAX_OPS = 50
/** Stacks taken per operation while looking for the app's call site (a stack costs a few µs). */
const STACKS_PER_OP = 3
/** Connections whose opening stack is read for their owner classes, per endpoint. */
const STACKS_PER_ENDPOINT = 3

/**
 * @typedef {object} TraceHooks what the wait tracer needs from client sockets (see waits.js)
 * @property {() => boolean} active whether it traces now: trips are timed only then
 * @property {() => any} onWrite called as a trip starts: what to remember of the traced request making it (or undefined)
 * @property {(trips: Trip[], count: number) => void} onRead called as a read completes trips, before the client sees
 *   the bytes, so that what runs next knows which trips it is the answer to
 * @property {(trip: Trip) => void} onTrip called when a trip that carries a trace completes
 * @property {(trips: Trip[]) => unknown} resume called before the client sees a read that completed these trips: when
 *   they are one traced request's, what the client's callbacks do next belongs to it (a callback-style driver calls
 *   them from its socket's 'data' handler, outside the request's async context); returns what `resumed` undoes
 * @property {(token: unknown) => void} resumed called once the client has seen the read
 */

/**
 * Times the round trips of every client socket the process opens — a database driver's connections, a Redis or
 * memcached client, an HTTP client, a home-made protocol over `net` — whatever library makes them: a trip starts
 * with the operation the client writes (protocols.js names it from the bytes) and ends with the read that completes
 * its reply (counted by protocol where it can be, else one read per trip). Only sockets this process connects are
 * watched (net.Socket.prototype.connect, tls.connect); the server's own connections are never touched.
 *
 * Cost per trip: a sniff of the written bytes (a few hundred at most), two clock reads and a counter; a stack for the
 * first few trips of each operation only. A server that opens no client socket pays nothing.
 */
export class SocketWatcher {
  /** @type {Map<string, Endpoint>} */
  #endpoints = new Map()
  #active = false
  #nextId = 1
  /** @type {TraceHooks | null} */
  trace = null
  /** @type {import('./driver-ops.js').DriverOps | null} what drivers announce on their tracing channels, while watched */
  drivers = null
  /** @type {{ trip: Trip, e: Endpoint, context: number } | null} the last trip started: a driver may announce it after */
  #last = null

  start () {
    if (this.#active) return
    this.#active = true
    watchers.add(this)
    hookConnect()
  }

  stop () {
    if (!this.#active) return
    this.#active = false
    watchers.delete(this)
  }

  /**
   * Every operation seen so far, and every endpoint; resets the high-water marks.
   * @returns {{ ops: TripStats[], endpoints: EndpointStats[] }}
   */
  snapshot () {
    const ops = []
    const endpoints = []
    for (const e of this.#endpoints.values()) {
      for (const s of e.ops.values()) {
        ops.push({ protocol: s.protocol, endpoint: s.endpoint, op: s.op, trips: s.trips, totalMs: round(s.totalMs), maxMs: round(s.maxMs), site: s.site })
        s.maxMs = 0
      }
      endpoints.push({ endpoint: e.endpoint, protocol: e.protocol, open: e.open, maxOpen: e.maxOpen, inFlight: e.inFlight, maxInFlight: e.maxInFlight, maxBusy: e.maxBusy, owners: e.owners, openedAt: e.openedAt })
      e.maxOpen = e.open
      e.maxInFlight = e.inFlight
      e.maxBusy = e.busy
    }
    return { ops, endpoints }
  }

  /**
   * A socket this process is connecting: watch its writes and reads.
   * @param {net.Socket} socket
   * @param {{ host?: string, port?: number, path?: string }} target as given to connect, until the socket knows better
   * @param {Function} above the connecting hook: the opening stack starts at its caller
   */
  watch (socket, target, above) {
    const watcher = this
    const sniffer = createSniffer()
    /** @type {Trip[]} */
    const pending = []
    let head = 0
    let inFlight = 0
    /** @type {Endpoint | null} */
    let endpoint = null
    let protocol = 'tcp'
    let opened = false
    // Taken now, while the frames of whoever opens the connection (a pool, a client class, the app) are on the stack.
    const openStack = captureStack(above, 40)
    const fallback = target.path ?? `${target.host ?? 'localhost'}:${target.port ?? 0}`

    const endpointOf = () => {
      if (endpoint !== null) return endpoint
      const address = socket.remoteAddress
      const name = address ? `${address.includes(':') ? `[${address}]` : address}:${socket.remotePort}` : fallback
      endpoint = this.#endpoint(name, protocol, openStack)
      return endpoint
    }
    const onOpen = () => {
      if (opened) return
      opened = true
      const e = endpointOf()
      e.open++
      if (e.open > e.maxOpen) e.maxOpen = e.open
    }
    socket.once('connect', onOpen)
    socket.once('secureConnect', onOpen)
    socket.once('close', () => {
      if (endpoint !== null && opened) endpoint.open--
      // Whatever was in flight will not be answered.
      if (endpoint !== null) endpoint.inFlight -= inFlight
      if (inFlight > 0 && endpoint !== null) endpoint.busy--
      inFlight = 0
      pending.length = 0
      head = 0
    })

    const write = socket.write
    /**
     * @this {net.Socket}
     * @param {any} chunk
     * @param {any} encoding
     * @param {any} cb
     */
    function watchedWrite (chunk, encoding, cb) {
      if (watchers.has(watcher)) {
        try { started(chunk) } catch {}
      }
      return write.call(this, chunk, encoding, cb)
    }
    socket.write = /** @type {any} */ (watchedWrite)
    const push = socket.push
    socket.push = function watchedPush (chunk, encoding) {
      /** @type {unknown} */
      let resumed
      if (chunk !== null && chunk !== undefined && watchers.has(watcher)) {
        try { resumed = answered(chunk) } catch {}
      }
      if (resumed === undefined) return push.call(this, chunk, encoding)
      // The client's reply callbacks run inside this push ('data'): they continue the request that wrote the trip.
      try {
        return push.call(this, chunk, encoding)
      } finally {
        watcher.trace?.resumed(resumed)
      }
    }

    /** @param {unknown} chunk */
    function started (chunk) {
      const sniffed = sniffer.write(/** @type {any} */ (chunk))
      // A write that starts no operation of its own (the Bind/Execute/Sync after a Parse, the rest of a long
      // message, a message that gets no reply) starts no trip.
      if (sniffed === null) return
      if (sniffed.protocol !== 'tcp') protocol = sniffed.protocol
      const e = endpointOf()
      if (e.protocol === 'tcp' && protocol !== 'tcp') e.protocol = protocol
      if (inFlight === 0) {
        e.busy++
        if (e.busy > e.maxBusy) e.maxBusy = e.busy
      }
      inFlight++
      e.inFlight++
      if (e.inFlight > e.maxInFlight) e.maxInFlight = e.inFlight
      // Trips are timed while the wait tracer runs, the only reader of their times; between, the sniffer keeps its
      // place in the protocol, and the connection counts how many it has in flight (what a pool's size shows in).
      if (watcher.trace === null || !watcher.trace.active()) {
        pending.push(UNTIMED)
        return
      }
      // Bytes that say nothing are named by what a driver announced in the same synchronous run, if it did.
      const announced = sniffed.op === null || sniffed.protocol === 'tcp' || sniffed.protocol === 'tls' ? watcher.drivers?.current() ?? null : null
      const op = announced?.op ?? sniffed.op
      if (announced !== null) protocol = announced.protocol
      /** @type {Trip} */
      const trip = { id: watcher.#nextId++, start: performance.now(), end: 0, protocol, op, endpoint: e.endpoint, owners: e.owners, stats: SocketWatcher.statsOf(e, op, protocol) }
      const trace = watcher.trace.onWrite()
      if (trace !== undefined) trip.trace = trace
      watcher.#site(trip, socket.write)
      watcher.#last = { trip, e, context: executionAsyncId() }
      pending.push(trip)
    }

    /**
     * @param {unknown} chunk
     * @returns {unknown} what the tracer needs to undo once the client has seen the chunk, if anything
     */
    function answered (chunk) {
      const counted = sniffer.reads(/** @type {any} */ (chunk))
      if (pending.length === head) return
      // Unknown protocols: a read answers the oldest trip — surely only when it was the only one in flight.
      const certain = counted >= 0 || pending.length - head === 1
      const n = Math.min(counted < 0 ? 1 : counted, pending.length - head)
      if (n === 0) return
      const from = head
      head += n
      const e = endpointOf()
      inFlight -= n
      e.inFlight -= n
      if (inFlight === 0) e.busy--
      /** @type {Trip[] | null} */
      let done = null
      let now = 0
      for (let i = from; i < head; i++) {
        const trip = pending[i]
        if (trip === UNTIMED) continue
        if (done === null) {
          done = []
          now = performance.now()
        }
        trip.end = now
        trip.certain = certain
        watcher.#count(trip)
        done.push(trip)
      }
      if (head === pending.length) {
        pending.length = 0
        head = 0
      } else if (head > 64) {
        pending.splice(0, head)
        head = 0
      }
      const hooks = watcher.trace
      if (hooks !== null && done !== null) {
        hooks.onRead(done, done.length)
        for (const trip of done) if (trip.trace !== undefined) hooks.onTrip(trip)
        return hooks.resume(done)
      }
      return undefined
    }
  }

  /**
   * A driver announced an operation after writing it (ioredis does): it names the trip just started in the same
   * synchronous run, when the bytes did not.
   * @param {import('./driver-ops.js').DriverOp} op
   */
  named (op) {
    const last = this.#last
    if (last === null || last.trip.end !== 0 || last.context !== op.context || op.at - last.trip.start > 1) return
    const trip = last.trip
    if (trip.op !== null && trip.protocol !== 'tcp' && trip.protocol !== 'tls') return
    trip.protocol = op.protocol
    trip.op = op.op
    trip.stats = SocketWatcher.statsOf(last.e, op.op, op.protocol)
  }

  /**
   * @param {string} name
   * @param {string} protocol
   * @param {string[]} stack the connecting call's frames
   */
  #endpoint (name, protocol, stack) {
    let e = this.#endpoints.get(name)
    if (e === undefined) {
      e = { endpoint: name, protocol, open: 0, maxOpen: 0, inFlight: 0, maxInFlight: 0, maxBusy: 0, busy: 0, owners: [], openedAt: null, stacks: 0, ops: new Map() }
      this.#endpoints.set(name, e)
    }
    if (e.stacks < STACKS_PER_ENDPOINT) {
      e.stacks++
      for (const owner of ownerClasses(stack)) if (!e.owners.includes(owner)) e.owners.push(owner)
      e.openedAt ??= appSite(stack)
    }
    return e
  }

  /**
   * Where the app made the call, from the first trips of each operation.
   * @param {Trip} trip
   * @param {Function} above the socket's write hook, on the stack now
   */
  #site (trip, above) {
    const stats = trip.stats
    if (stats.site !== null || stats.stacks >= STACKS_PER_OP) return
    stats.stacks++
    const site = appSite(captureStack(above, 40))
    if (site !== null && !site.file.startsWith('node:')) stats.site = site
  }

  /** @param {Trip} trip */
  #count (trip) {
    const stats = trip.stats
    const ms = trip.end - trip.start
    stats.trips++
    stats.totalMs += ms
    if (ms > stats.maxMs) stats.maxMs = ms
  }

  /**
   * The counts a trip adds to: its endpoint's, for its operation.
   * @param {Endpoint} e
   * @param {string | null} op
   * @param {string} protocol
   */
  static statsOf (e, op, protocol) {
    let stats = e.ops.get(op ?? '')
    if (stats === undefined) {
      const kept = e.ops.size < MAX_OPS ? op : null
      stats = e.ops.get(kept ?? '')
      if (stats === undefined) {
        stats = { protocol, endpoint: e.endpoint, op: kept, trips: 0, totalMs: 0, maxMs: 0, site: null, stacks: 0 }
        e.ops.set(kept ?? '', stats)
      }
    }
    if (stats.protocol === 'tcp' && protocol !== 'tcp') stats.protocol = protocol
    return stats
  }
}

/**
 * The classes whose methods or constructors stand between the app and a socket it opens: `BoundPool.connect` →
 * `BoundPool`, `new LineClient` → `LineClient`. A connection pool is one of them (its construction site, see pools.js,
 * is where its limit was set); a client class the app wrote itself is another, whose methods are the client's code
 * rather than the line where a request waits.
 * @param {string[]} frames
 * @returns {string[]}
 */
function ownerClasses (frames) {
  /** @type {string[]} */
  const out = []
  for (const frame of frames) {
    const m = /^(?:async\s+)?(?:new\s+([A-Za-z_$][\w$]*) \(|([A-Za-z_$][\w$]*)\.[\w$<>]+ \()/.exec(frame)
    if (m === null) continue
    const name = m[1] ?? m[2]
    if (GENERIC.has(name)) continue
    if (!out.includes(name)) out.push(name)
  }
  return out
}

/** Receivers that name no client: Node's own classes and plain objects. */
const GENERIC = new Set(['Object', 'Socket', 'TLSSocket', 'Function', 'Module', 'process', 'Promise', 'EventEmitter', 'Server', 'ModuleJob', 'ModuleLoader', 'Array', 'Map'])

/** @type {Set<SocketWatcher>} */
const watchers = new Set()
let hooked = false

/**
 * Client sockets all pass through net.Socket.prototype.connect (net.connect, new net.Socket().connect, http's and
 * undici's agents, every database driver) — except a TLS socket over an existing one, made by tls.connect. Both are
 * wrapped once per process and stay wrapped: with no watcher active, the wrappers only check a set.
 */
function hookConnect () {
  if (hooked) return
  hooked = true
  const proto = /** @type {any} */ (net.Socket.prototype)
  const connect = proto.connect
  proto.connect = function connectWatched (/** @type {any[]} */ ...args) {
    // connect() resets an own `write` (net.js undoes an old end() trick): watch after it.
    const result = connect.apply(this, args)
    if (watchers.size > 0 && !watched.has(this)) {
      try {
        watched.add(this)
        const target = targetOf(args)
        for (const w of watchers) w.watch(this, target, connectWatched)
      } catch {}
    }
    return result
  }
  const tlsModule = /** @type {any} */ (tls)
  const tlsConnect = tlsModule.connect
  tlsModule.connect = function tlsConnectWatched (/** @type {any[]} */ ...args) {
    const socket = Reflect.apply(tlsConnect, this, args)
    if (watchers.size > 0 && !watched.has(socket)) {
      try {
        watched.add(socket)
        const options = args.find(a => a !== null && typeof a === 'object') ?? {}
        for (const w of watchers) w.watch(socket, { host: options.host ?? options.servername, port: options.port }, tlsConnectWatched)
      } catch {}
    }
    return socket
  }
}

/** @type {WeakSet<object>} */
const watched = new WeakSet()

/**
 * connect(port, host), connect(path), connect({ port, host } | { path }), or the array net.connect normalises to.
 * @param {any[]} args
 * @returns {{ host?: string, port?: number, path?: string }}
 */
function targetOf (args) {
  const a = Array.isArray(args[0]) ? args[0] : args
  const first = a[0]
  if (first !== null && typeof first === 'object') return { host: first.host, port: Number(first.port) || undefined, path: first.path }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { path: first }
  return { port: Number(first) || undefined, host: typeof a[1] === 'string' ? a[1] : undefined }
}

/** @param {number} ms */
const round = (ms) => Math.round(ms * 1000) / 1000
