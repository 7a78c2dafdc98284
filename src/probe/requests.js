import dc from 'node:diagnostics_channel'
import { performance } from 'node:perf_hooks'

const kStart = Symbol('hotpath.requestStart')

/**
 * Requests handled by one server (one listening port) during an interval.
 * @typedef {object} RequestStats
 * @property {number} port
 * @property {number} started requests whose head arrived
 * @property {number} finished responses fully written
 * @property {number} inflight started and not yet finished, at the end of the interval
 * @property {number} time sum of server-side times of the finished ones (ms): head received → response written
 * @property {number} maxTime ms
 */

/**
 * Counts requests and their server-side time per listening port, through the http server's diagnostics channels
 * (no patching; https and frameworks on node:http go through them too).
 */
export class RequestTracker {
  constructor () {
    /** @type {WeakMap<object, RequestStats>} */
    this.byServer = new WeakMap()
    /** @type {Set<RequestStats>} */
    this.all = new Set()
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

  /** @param {any} server */
  statsOf (server) {
    let stats = this.byServer.get(server)
    if (stats === undefined) {
      const address = server?.address?.()
      stats = { port: typeof address === 'object' && address !== null ? address.port : 0, started: 0, finished: 0, inflight: 0, time: 0, maxTime: 0 }
      this.byServer.set(server, stats)
      this.all.add(stats)
    }
    return stats
  }

  /** @param {any} message */
  onStart (message) {
    const stats = this.statsOf(message.server)
    stats.started++
    stats.inflight++
    message.response[kStart] = performance.now()
  }

  /** @param {any} message */
  onFinish (message) {
    const start = message.response[kStart]
    if (start === undefined) return
    const stats = this.statsOf(message.server)
    const time = performance.now() - start
    stats.finished++
    stats.inflight--
    stats.time += time
    if (time > stats.maxTime) stats.maxTime = time
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
      out.push({ ...s })
      s.started = 0
      s.finished = 0
      s.time = 0
      s.maxTime = 0
    }
    return out
  }
}
