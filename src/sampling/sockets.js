import { performance } from 'node:perf_hooks'
import { executionAsyncId } from 'node:async_hooks'
import { hookConnect, watchers, watchOpenSockets } from './connect-hook.js'
import { SocketTrips } from './socket-trips.js'
import { appSite, captureStack, isAppFile, parseFrame } from './stack.js'

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
 * @property {number} [ahead] ms of the trip spent behind replies to earlier operations: on its own connection (a
 *   pipelined one answers in order), or, for a backend that runs one operation at a time (Redis), on any connection
 *   to it — queueing at the backend, not the operation's own time
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
 * @typedef {EndpointStats & { stacks: number, busy: number, lastReply: number, ops: Map<string, TripStats & { stacks: number }> }} Endpoint
 *   lastReply: performance.now() of the last reply read from it while trips were timed
 */

/** Operations kept per endpoint; more distinct ones are counted under `op: null`. */
const MAX_OPS = 50
/** Stacks taken per operation while looking for the app's call site (a stack costs a few µs). */
const STACKS_PER_OP = 3
/** Connections whose opening stack is read for their owner classes, per endpoint. */
const STACKS_PER_ENDPOINT = 3

/**
 * @typedef {object} TraceHooks what the wait tracer needs from client sockets (see wait-tracer.js)
 * @property {() => boolean} active whether it traces now: trips are timed only then
 * @property {(endpoint: object, reading: boolean) => any} onWrite called as a trip starts, with its endpoint and
 *   whether a client socket's read is running (its client writes from its reply's handlers): what to remember of the
 *   traced request making it (or undefined)
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
 * watched (net.Socket.prototype.connect, tls.connect: connect-hook.js); the server's own connections are never touched.
 * Each connection's trips are followed by socket-trips.js; this class keeps what they count, per endpoint and operation.
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
  /** Reads of watched sockets running now (a client's reply handlers run inside them). */
  reading = 0
  /** @type {import('./driver-ops.js').DriverOps | null} what drivers announce on their tracing channels, while watched */
  drivers = null
  /** @type {{ trip: Trip, e: Endpoint, context: number } | null} the last trip started: a driver may announce it after */
  #last = null

  start () {
    if (this.#active) return
    this.#active = true
    watchers.add(this)
    hookConnect()
    watchOpenSockets(this)
  }

  stop () {
    if (!this.#active) return
    this.#active = false
    watchers.delete(this)
  }

  /** How many servers this process has client connections open to. */
  openEndpoints () {
    let n = 0
    for (const e of this.#endpoints.values()) if (e.open > 0) n++
    return n
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
   * @param {import('node:net').Socket} socket
   * @param {{ host?: string, port?: number, path?: string }} target as given to connect, until the socket knows better
   * @param {Function} above the connecting hook: the opening stack starts at its caller
   */
  watch (socket, target, above) {
    const watcher = this
    // Taken now, while the frames of whoever opens the connection (a pool, a client class, the app) are on the stack.
    const trips = new SocketTrips(this, socket, target, captureStack(above, 40))
    const onOpen = () => trips.opened()
    // (one opened before the watch began, seen on attach, is open already)
    if (!socket.connecting && socket.remotePort !== undefined) onOpen()
    else {
      socket.once('connect', onOpen)
      socket.once('secureConnect', onOpen)
    }
    socket.once('close', () => trips.closed())

    const write = socket.write
    /**
     * @this {import('node:net').Socket}
     * @param {any} chunk
     * @param {any} encoding
     * @param {any} cb
     */
    function watchedWrite (chunk, encoding, cb) {
      if (watchers.has(watcher)) {
        try { trips.started(chunk) } catch {}
      }
      return write.call(this, chunk, encoding, cb)
    }
    socket.write = /** @type {any} */ (watchedWrite)
    const push = socket.push
    socket.push = function watchedPush (chunk, encoding) {
      /** @type {unknown} */
      let resumed
      if (chunk !== null && chunk !== undefined && watchers.has(watcher)) {
        try { resumed = trips.answered(chunk) } catch {}
      }
      // The client's reply callbacks run inside this push ('data'): they continue the request that wrote the trip.
      watcher.reading++
      try {
        return push.call(this, chunk, encoding)
      } finally {
        watcher.reading--
        if (resumed !== undefined) watcher.trace?.resumed(resumed)
      }
    }
  }

  /**
   * A trip starts, timed (the wait tracer is on): where the app made the call is read from the first few.
   * @param {Endpoint} e
   * @param {string | null} op
   * @param {string} protocol
   * @param {Function} above the socket's write hook, on the stack now
   * @returns {Trip}
   */
  startTrip (e, op, protocol, above) {
    /** @type {Trip} */
    const trip = { id: this.#nextId++, start: performance.now(), end: 0, protocol, op, endpoint: e.endpoint, owners: e.owners, stats: SocketWatcher.statsOf(e, op, protocol) }
    const trace = /** @type {TraceHooks} */ (this.trace).onWrite(e, this.reading > 0)
    if (trace !== undefined) trip.trace = trace
    this.#site(trip, above)
    this.#last = { trip, e, context: executionAsyncId() }
    return trip
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
   * The endpoint a connection goes to, whose owners are read from its first connections' opening stacks.
   * @param {string} name
   * @param {string} protocol
   * @param {string[]} stack the connecting call's frames
   * @returns {Endpoint}
   */
  endpoint (name, protocol, stack) {
    let e = this.#endpoints.get(name)
    if (e === undefined) {
      e = { endpoint: name, protocol, open: 0, maxOpen: 0, inFlight: 0, maxInFlight: 0, maxBusy: 0, busy: 0, owners: [], openedAt: null, stacks: 0, lastReply: 0, ops: new Map() }
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
 * rather than the line where a request waits. They end at the app's own code that called them (a function of the
 * app's, not a method of one of its classes): what called that — node's HTTP parser, a framework's router —
 * dispatched the request that happened to open the connection, and taken for the client it made the app's frames
 * above it read as the client's (fetch() on Node 22 opens its connection inside the first request: no wait had a
 * line).
 * @param {string[]} frames
 * @returns {string[]}
 */
function ownerClasses (frames) {
  /** @type {string[]} */
  const out = []
  for (const frame of frames) {
    const m = /^(?:async\s+)?(?:new\s+([A-Za-z_$][\w$]*) \(|([A-Za-z_$][\w$]*)\.[\w$<>]+ \()/.exec(frame)
    const name = m === null ? null : m[1] ?? m[2]
    if (name === null || GENERIC.has(name)) {
      const site = parseFrame(frame)
      if (site !== null && isAppFile(site.file)) break
      continue
    }
    if (!out.includes(name)) out.push(name)
  }
  return out
}

/** Receivers that name no client: Node's own classes and plain objects. */
const GENERIC = new Set(['Object', 'Socket', 'TLSSocket', 'Function', 'Module', 'process', 'Promise', 'EventEmitter', 'Server', 'ModuleJob', 'ModuleLoader', 'Array', 'Map'])

/** @param {number} ms */
const round = (ms) => Math.round(ms * 1000) / 1000
