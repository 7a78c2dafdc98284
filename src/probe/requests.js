import dc from 'node:diagnostics_channel'

/**
 * Requests handled by one server (one listening port) during an interval.
 * @typedef {object} RequestStats
 * @property {number} port
 * @property {number} started requests whose head arrived
 * @property {number} finished responses fully written
 * @property {number} inflight started and not yet finished, at the end of the interval
 */

/**
 * Counts requests per listening port through the http server's diagnostics channels (no patching; https and every
 * framework on node:http go through them). Only counters, on purpose: the mean time a request spends on the server
 * follows from them exactly by Little's law (mean requests in flight ÷ requests finished per second), while timing
 * each request would cost a clock read and a property on every response — a few percent of a fast server.
 */
export class RequestTracker {
  constructor () {
    /** @type {WeakMap<object, RequestStats>} */
    this.byServer = new WeakMap()
    /** @type {Set<RequestStats>} */
    this.all = new Set()
    // Nearly every request comes to the same server: remembering the last one spares a WeakMap lookup.
    /** @type {object | null} */
    this.lastServer = null
    /** @type {RequestStats | null} */
    this.lastStats = null
    this.onStart = this.onStart.bind(this)
    this.onFinish = this.onFinish.bind(this)
  }

  start () {
    dc.subscribe('http.server.request.start', this.onStart)
    dc.subscribe('http.server.response.finish', this.onFinish)
  }

  stop () {
    dc.unsubscribe('http.server.request.start', this.onStart)
    dc.unsubscribe('http.server.response.finish', this.onFinish)
  }

  /**
   * @param {any} server
   * @returns {RequestStats}
   */
  statsOf (server) {
    if (server === this.lastServer) return /** @type {RequestStats} */ (this.lastStats)
    let stats = this.byServer.get(server)
    if (stats === undefined) {
      const address = server?.address?.()
      stats = { port: typeof address === 'object' && address !== null ? address.port : 0, started: 0, finished: 0, inflight: 0 }
      this.byServer.set(server, stats)
      this.all.add(stats)
    }
    this.lastServer = server
    this.lastStats = stats
    return stats
  }

  /** @param {any} message */
  onStart (message) {
    const stats = this.statsOf(message.server)
    stats.started++
    stats.inflight++
  }

  /** @param {any} message */
  onFinish (message) {
    const stats = this.statsOf(message.server)
    stats.finished++
    stats.inflight--
  }

  /**
   * The interval's figures for every server that saw requests, and a fresh interval.
   * @returns {RequestStats[]}
   */
  take () {
    /** @type {RequestStats[]} */
    const out = []
    for (const s of this.all) {
      if (s.started === 0 && s.finished === 0 && s.inflight === 0) continue
      out.push({ port: s.port, started: s.started, finished: s.finished, inflight: s.inflight })
      s.started = 0
      s.finished = 0
    }
    return out
  }
}
