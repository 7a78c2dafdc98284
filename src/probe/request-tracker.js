import http from 'node:http'
import https from 'node:https'

/**
 * Requests handled by one server (one listening port) during an interval.
 * @typedef {object} RequestStats
 * @property {number} port
 * @property {number} started requests whose head arrived
 * @property {number} finished responses fully written; at a count of the requests in flight, less than zero when the
 *   samples since the last count had guessed finished requests still in flight (the sum over any run of samples that
 *   ends with a count is exact)
 * @property {number} inflight started and not yet finished, at the end of the interval
 */

/**
 * @typedef {object} Watched
 * @property {RequestStats} stats
 * @property {Set<any>} sockets the server's connections, pruned of closed ones at each count
 * @property {Set<WeakRef<any>>} orphans responses whose connection closed before the handler ended them: the handler
 *   still runs (node:http does not stop it), and holds what it made, until it ends them or is collected
 * @property {number} inflight at the previous count
 * @property {number} started requests started since watching began
 * @property {number} reported requests reported finished since watching began
 * @property {number} dropped requests that never finished: orphans the handler let go of without ending them
 */

/** In-flight requests are counted every SCAN_EVERY-th sampling interval… */
const SCAN_EVERY = 10
/** …and more rarely above this many open connections per SCAN_EVERY (the count walks them all). */
const SCAN_BUDGET = 2000 * SCAN_EVERY

/**
 * Counts requests per listening server, as cheaply as the request path allows: the only per-request work is one
 * counter increment in a 'request' listener. Requests in flight are not tracked per request at all — they are counted
 * every few takes by looking at the server's connections (a connection with a response in progress holds it in
 * `_httpMessage`, the field node:http's own keep-alive and pipelining logic reads), and finished requests follow as
 * started − growth of in-flight. With in-flight known every tenth sample, the mean time a request spends on the server
 * follows closely by Little's law (mean in flight ÷ requests finished per second).
 *
 * Measured on a saturated hello server, timing each request through node:http's diagnostics channels cost ~2.5% of
 * its throughput; this costs well under 1%. A pipelined connection counts as one request in flight, whatever is
 * queued behind it (browsers and proxies do not pipeline).
 */
export class RequestTracker {
  constructor () {
    /** @type {Watched[]} */
    this.watched = []
    /** @type {WeakSet<object>} */
    this.servers = new WeakSet()
    this.active = false
    this.takes = 0
    /** @type {((res: any, port: number) => void) | null} called in each request's own async context (the wait tracer) */
    this.onRequest = null
    /** @type {((req: any, res: any, port: number) => void) | null} called for every request while a window observes
     * real traffic (route-timer.js) */
    this.onObserved = null
  }

  start () { this.active = true }

  stop () { this.active = false }

  /**
   * Starts counting the requests of an http or https server that has just begun listening.
   * @param {any} server
   * @param {number} port
   */
  watch (server, port) {
    if (!this.active || this.servers.has(server)) return
    if (!isHttpServer(server)) return
    this.servers.add(server)
    /** @type {Watched} */
    const w = { stats: { port, started: 0, finished: 0, inflight: 0 }, sockets: new Set(), orphans: new Set(), inflight: 0, started: 0, reported: 0, dropped: 0 }
    this.watched.push(w)
    const stats = w.stats
    const sockets = w.sockets
    // Prepended, so a request is counted before the application's handler can throw, and so that what the wait
    // tracer attaches to the request's async context is there when the handler runs.
    server.prependListener('request', (/** @type {any} */ req, /** @type {any} */ res) => {
      stats.started++
      const o = this.onObserved
      if (o !== null) o(req, res, port)
      const f = this.onRequest
      if (f !== null) f(res, port)
    })
    // An https server's requests arrive on the TLS socket, which 'secureConnection' hands over.
    server.on(server instanceof https.Server ? 'secureConnection' : 'connection', (/** @type {any} */ socket) => { sockets.add(socket) })
  }

  /**
   * Whether the last count found a request in flight on a port (any port: null) — one that outlived the loop's turn.
   * @param {number | null} port
   */
  inflightAt (port) {
    return this.watched.some(w => w.inflight > 0 && (port === null || w.stats.port === port))
  }

  /**
   * Requests whose handlers still run on a port (any port: null), counted now: those on open connections, and those
   * whose client went away first — a load that stops abandons its requests in flight, and the server goes on with them.
   * @param {number | null} port
   */
  handling (port) {
    let n = 0
    for (const w of this.watched) if (port === null || w.stats.port === port) n += countInflight(w)
    return n
  }

  /**
   * The interval's figures for every server that saw requests, and a fresh interval.
   * @param {boolean} [count] count the requests in flight now, whatever the cadence (the last sample of a window)
   * @param {number} [intervals] sampling intervals since the last take: a sampler that stretched its pace takes less
   *   often, and the count keeps to its cadence in time
   * @returns {RequestStats[]}
   */
  take (count = false, intervals = 1) {
    /** @type {RequestStats[]} */
    const out = []
    const before = this.takes
    this.takes += intervals
    for (const w of this.watched) {
      const s = w.stats
      // Walking the connections touches every socket object, which a busy server has long evicted from the cache
      // (~10 µs a sample at 50 connections): count them every SCAN_EVERY-th sample, more rarely with many connections,
      // and keep the last count between — Little's law needs the mean over the load, not every value.
      const every = Math.max(SCAN_EVERY, Math.ceil(w.sockets.size / SCAN_BUDGET))
      w.started += s.started
      if (count || Math.floor(this.takes / every) !== Math.floor(before / every)) {
        // Finished so far is exactly started − in flight − dropped: report what the samples since the last count have
        // not. Less than zero when in flight grew since (a load that stops leaves its last requests to the server, the
        // client gone): those samples guessed too high, and this undoes it, so that a window, which ends with a count,
        // sums to what finished in it. Held at zero, the guesses stayed counted as requests served.
        w.inflight = countInflight(w)
        s.finished = w.started - w.inflight - w.dropped - w.reported
      } else {
        // Between counts, a request is guessed finished in the sample it started in: right while in flight holds steady.
        s.finished = s.started
      }
      w.reported += s.finished
      s.inflight = w.inflight
      if (s.started === 0 && s.finished === 0 && s.inflight === 0) continue
      out.push({ port: s.port, started: s.started, finished: s.finished, inflight: s.inflight })
      s.started = 0
      s.finished = 0
    }
    return out
  }
}

/**
 * Whether a listening server speaks HTTP: node:http's and node:https's, and what frameworks build on them.
 * @param {unknown} server
 */
export function isHttpServer (server) {
  return server instanceof http.Server || server instanceof https.Server
}

/**
 * Requests whose handlers still run: connections with a response in progress, and responses orphaned by their closed
 * connection that the handler has not ended yet; forgets the closed connections and the ended or collected orphans
 * (counting the collected ones as dropped).
 * A closed connection keeps its response in `_httpMessage`, and `writableEnded` turns true when the handler ends it
 * even then: that is the only sign the handler is done, as no event follows the connection's 'close'.
 * @param {Watched} w
 */
function countInflight (w) {
  let n = 0
  for (const socket of w.sockets) {
    if (socket.destroyed) {
      w.sockets.delete(socket)
      const res = socket._httpMessage
      // Weakly: a handler that never ends its response must not be kept alive by the probe.
      if (res && !res.writableEnded) w.orphans.add(new WeakRef(res))
    } else if (socket._httpMessage) n++
  }
  for (const ref of w.orphans) {
    const res = ref.deref()
    if (res === undefined) {
      // Collected unended: the handler let go of it, and it never finished.
      w.orphans.delete(ref)
      w.dropped++
    } else if (res.writableEnded) {
      w.orphans.delete(ref)
    } else {
      n++
    }
  }
  return n
}
