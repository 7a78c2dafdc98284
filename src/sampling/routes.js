import { performance } from 'node:perf_hooks'

/** Request intervals kept per window at most (three numbers each): a few req/s for minutes, or a busy second's worth. */
const MAX_INTERVALS = 20000

/**
 * @typedef {object} RouteFigures one route's requests in a window
 * @property {string} method
 * @property {string} route the framework's route pattern where the request carries it, else the URL's path with ids
 *   folded to `:id`
 * @property {number} requests finished in the window
 * @property {number} totalMs their time on the server, all together
 * @property {number} maxMs
 */

/**
 * Times every request of the watched servers by route, while a window observes real traffic (`--observe`): there is
 * no load of hotpath's to know the requests by, so each one's method, route and time on the server are the figures.
 * The cost is a closure and a 'finish' listener per request (about what timing each request through node:http's
 * diagnostics channels cost, ~2.5% of a saturated hello server): paid only in an observing window, never with hotpath's
 * own load, which knows its requests already.
 */
export class RouteTimer {
  constructor () {
    this.active = false
    /** @type {Map<string, RouteFigures & { index: number }>} */
    this.routes = new Map()
    /** @type {string[]} the routes in the order first seen: an interval names its route by index here */
    this.keys = []
    /** @type {number[]} [start ms, end ms, route index] per request, on performance.now()'s clock */
    this.intervals = []
    this.dropped = 0
  }

  /** Starts a window: what the last one counted is forgotten. */
  start () {
    this.routes = new Map()
    this.keys = []
    this.intervals = []
    this.dropped = 0
    this.active = true
  }

  stop () { this.active = false }

  /**
   * Called in each request's 'request' event, before the application's handler.
   * @param {any} req
   * @param {any} res
   */
  onRequest (req, res) {
    if (!this.active) return
    const t0 = performance.now()
    res.once('finish', () => {
      try { this.#finished(req, t0, performance.now()) } catch {}
    })
  }

  /**
   * @param {any} req
   * @param {number} t0
   * @param {number} t1
   */
  #finished (req, t0, t1) {
    if (!this.active) return
    const method = String(req.method ?? 'GET')
    const route = routeOf(req)
    const key = `${method} ${route}`
    let r = this.routes.get(key)
    if (r === undefined) {
      r = { method, route, requests: 0, totalMs: 0, maxMs: 0, index: this.keys.length }
      this.routes.set(key, r)
      this.keys.push(key)
    }
    const ms = t1 - t0
    r.requests++
    r.totalMs += ms
    if (ms > r.maxMs) r.maxMs = ms
    if (this.intervals.length < MAX_INTERVALS * 3) this.intervals.push(round(t0), round(t1), r.index)
    else this.dropped++
  }

  /**
   * The window's figures, as its event log keeps them: `origin` puts the intervals on the CPU profile's clock (µs of
   * the monotonic clock at performance.now() = 0).
   */
  take () {
    const origin = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000
    const routes = this.keys.map(k => {
      const r = /** @type {RouteFigures & { index: number }} */ (this.routes.get(k))
      return { method: r.method, route: r.route, requests: r.requests, totalMs: round(r.totalMs), maxMs: round(r.maxMs) }
    })
    return { origin: Math.round(origin), routes, intervals: this.intervals, dropped: this.dropped }
  }
}

/**
 * A request's route: the pattern its framework matched where the request object carries it (Express's `req.route`
 * under `req.baseUrl`, a router's `routeOptions.url` or `routerPath`), else its URL's path, the query dropped and each
 * segment holding a digit shown as `:id`, so that one endpoint is one route.
 * @param {any} req
 * @returns {string}
 */
export function routeOf (req) {
  const pattern = req.route?.path ?? req.routeOptions?.url ?? req.routerPath
  if (typeof pattern === 'string' && pattern !== '') return `${typeof req.baseUrl === 'string' ? req.baseUrl : ''}${pattern}`
  return foldPath(String(req.originalUrl ?? req.url ?? '/'))
}

/**
 * `/users/42/orders?x=1` → `/users/:id/orders`.
 * @param {string} url
 */
export function foldPath (url) {
  const bare = url.split(/[?#]/)[0] || '/'
  return bare.split('/').map(s => /\d/.test(s) ? ':id' : s).join('/')
}

/** @param {number} x */
function round (x) {
  return Math.round(x * 100) / 100
}
