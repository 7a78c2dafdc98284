// The round trips of one client socket: each write the sniffer says starts an operation opens a trip, each read whose
// replies complete operations closes the oldest. Runs on every write and read of the socket, so it keeps its state in
// fields of one object per connection and allocates only for the trips it times.

import { performance } from 'node:perf_hooks'
import { createSniffer } from './protocols.js'

/** @typedef {import('./sockets.js').SocketWatcher} SocketWatcher */
/** @typedef {import('./sockets.js').Trip} Trip */
/** @typedef {import('./sockets.js').Endpoint} Endpoint */

/** Protocols whose servers run one operation at a time, whatever the connection: a reply to any connection comes
 * before the next operation begins (Redis executes commands one by one). */
const ONE_AT_A_TIME = new Set(['redis'])

/** What the in-flight list holds for an operation written while trips are not timed. */
const UNTIMED = /** @type {Trip} */ (/** @type {unknown} */ (Object.freeze({})))

/** One client connection's trips, from its first write to its close. */
export class SocketTrips {
  #watcher
  #socket
  #sniffer = createSniffer()
  /** @type {Trip[]} */
  #pending = []
  #head = 0
  #inFlight = 0
  /** @type {Endpoint | null} */
  #endpoint = null
  #protocol = 'tcp'
  #opened = false
  /** performance.now() of this connection's last reply read while trips were timed */
  #lastReply = 0
  #openStack
  #fallback

  /**
   * @param {SocketWatcher} watcher
   * @param {import('node:net').Socket} socket
   * @param {{ host?: string, port?: number, path?: string }} target as given to connect, until the socket knows better
   * @param {string[]} openStack the frames of whoever opened the connection
   */
  constructor (watcher, socket, target, openStack) {
    this.#watcher = watcher
    this.#socket = socket
    this.#openStack = openStack
    this.#fallback = target.path ?? `${target.host ?? 'localhost'}:${target.port ?? 0}`
  }

  #endpointOf () {
    if (this.#endpoint !== null) return this.#endpoint
    const address = this.#socket.remoteAddress
    const name = address ? `${address.includes(':') ? `[${address}]` : address}:${this.#socket.remotePort}` : this.#fallback
    this.#endpoint = this.#watcher.endpoint(name, this.#protocol, this.#openStack)
    return this.#endpoint
  }

  /** The socket connected (or finished its TLS handshake). */
  opened () {
    if (this.#opened) return
    this.#opened = true
    const e = this.#endpointOf()
    e.open++
    if (e.open > e.maxOpen) e.maxOpen = e.open
  }

  closed () {
    const endpoint = this.#endpoint
    if (endpoint !== null && this.#opened) endpoint.open--
    // Whatever was in flight will not be answered.
    if (endpoint !== null) endpoint.inFlight -= this.#inFlight
    if (this.#inFlight > 0 && endpoint !== null) endpoint.busy--
    this.#inFlight = 0
    this.#pending.length = 0
    this.#head = 0
  }

  /**
   * The client writes a chunk.
   * @param {unknown} chunk
   */
  started (chunk) {
    const watcher = this.#watcher
    const sniffed = this.#sniffer.write(/** @type {any} */ (chunk))
    // A write that starts no operation of its own (the Bind/Execute/Sync after a Parse, the rest of a long
    // message, a message that gets no reply) starts no trip.
    if (sniffed === null) return
    if (sniffed.protocol !== 'tcp') this.#protocol = sniffed.protocol
    const e = this.#endpointOf()
    if (e.protocol === 'tcp' && this.#protocol !== 'tcp') e.protocol = this.#protocol
    if (this.#inFlight === 0) {
      e.busy++
      if (e.busy > e.maxBusy) e.maxBusy = e.busy
    }
    this.#inFlight++
    e.inFlight++
    if (e.inFlight > e.maxInFlight) e.maxInFlight = e.inFlight
    // Trips are timed while the wait tracer runs, the only reader of their times; between, the sniffer keeps its
    // place in the protocol, and the connection counts how many it has in flight (what a pool's size shows in).
    if (watcher.trace === null || !watcher.trace.active()) {
      this.#pending.push(UNTIMED)
      return
    }
    // Bytes that say nothing are named by what a driver announced in the same synchronous run, if it did.
    const announced = sniffed.op === null || sniffed.protocol === 'tcp' || sniffed.protocol === 'tls' ? watcher.drivers?.current() ?? null : null
    const op = announced?.op ?? sniffed.op
    if (announced !== null) this.#protocol = announced.protocol
    this.#pending.push(watcher.startTrip(e, op, this.#protocol, this.#socket.write))
  }

  /**
   * The client's socket reads a chunk.
   * @param {unknown} chunk
   * @returns {unknown} what the tracer needs to undo once the client has seen the chunk, if anything
   */
  answered (chunk) {
    const counted = this.#sniffer.reads(/** @type {any} */ (chunk))
    const pending = this.#pending
    if (pending.length === this.#head) return
    // Unknown protocols: a read answers the oldest trip — surely only when it was the only one in flight.
    const certain = counted >= 0 || pending.length - this.#head === 1
    const n = Math.min(counted < 0 ? 1 : counted, pending.length - this.#head)
    if (n === 0) return
    const from = this.#head
    const head = this.#head = from + n
    const e = this.#endpointOf()
    this.#inFlight -= n
    e.inFlight -= n
    if (this.#inFlight === 0) e.busy--
    /** @type {Trip[] | null} */
    let done = null
    let now = 0
    // What a reply came behind: the last one on this connection (it answers in order), or on any connection to a
    // backend that runs one operation at a time.
    const before = ONE_AT_A_TIME.has(this.#protocol) ? Math.max(e.lastReply, this.#lastReply) : this.#lastReply
    for (let i = from; i < head; i++) {
      const trip = pending[i]
      if (trip === UNTIMED) continue
      if (done === null) {
        done = []
        now = performance.now()
      }
      trip.end = now
      trip.certain = certain
      trip.ahead = before > trip.start ? Math.min(now, before) - trip.start : 0
      count(trip)
      done.push(trip)
    }
    if (done !== null) {
      this.#lastReply = now
      e.lastReply = now
    }
    if (head === pending.length) {
      pending.length = 0
      this.#head = 0
    } else if (head > 64) {
      pending.splice(0, head)
      this.#head = 0
    }
    const hooks = this.#watcher.trace
    if (hooks !== null && done !== null) {
      hooks.onRead(done, done.length)
      for (const trip of done) if (trip.trace !== undefined) hooks.onTrip(trip)
      return hooks.resume(done)
    }
    return undefined
  }
}

/** @param {Trip} trip */
function count (trip) {
  const stats = trip.stats
  const ms = trip.end - trip.start
  stats.trips++
  stats.totalMs += ms
  if (ms > stats.maxMs) stats.maxMs = ms
}
