import { performance } from 'node:perf_hooks'

/** Request intervals kept per window at most (three numbers each): a few req/s for minutes, or a busy second's worth. */
const MAX_INTERVALS = 20000
/** Paths folded at most: a crawler's endless distinct URLs must not grow the cache without end. */
const FOLDED_MAX = 2000

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
 * The cost is a closure and a 'finish' listener per request, and a lookup by method and route (the folded paths
 * cached): paid only in an observing window, never with hotpath's own load, which knows its requests already. Nothing
 * is set on the request or the response: a property of ours would change the shape node:http's own code reads.
 */
export class RouteTimer {
  constructor () {
    this.active = false
    /** @type {Map<string, Map<string, RouteFigures & { index: number }>>} by method, then route */
    this.routes = new Map()
    /** @type {(RouteFigures & { index: number })[]} the routes in the order first seen: an interval names its route by
     * index here */
    this.list = []
    /** @type {number[]} [start ms, end ms, route index] per request, on performance.now()'s clock */
    this.intervals = []
    this.dropped = 0
    /** @type {Map<string, string>} raw URL → folded path */
    this.folded = new Map()
  }

  /** Starts a window: what the last one counted is forgotten. */
  start () {
    this.routes = new Map()
    this.list = []
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
    res.on('finish', () => {
      try { this.finished(req, t0, performance.now()) } catch {}
    })
  }

  /**
   * @param {any} req
   * @param {number} t0
   * @param {number} t1
   */
  finished (req, t0, t1) {
    if (!this.active || req === undefined) return
    const method = String(req.method ?? 'GET')
    const route = this.routeOf(req)
    let byRoute = this.routes.get(method)
    if (byRoute === undefined) this.routes.set(method, byRoute = new Map())
    let r = byRoute.get(route)
    if (r === undefined) {
      r = { method, route, requests: 0, totalMs: 0, maxMs: 0, index: this.list.length }
      byRoute.set(route, r)
      this.list.push(r)
    }
    const ms = t1 - t0
    r.requests++
    r.totalMs += ms
    if (ms > r.maxMs) r.maxMs = ms
    if (this.intervals.length < MAX_INTERVALS * 3) this.intervals.push(round(t0), round(t1), r.index)
    else this.dropped++
  }

  /**
   * routeOf, with the folded paths cached.
   * @param {any} req
   */
  routeOf (req) {
    const pattern = patternOf(req)
    if (pattern !== null) return pattern
    const url = String(req.originalUrl ?? req.url ?? '/')
    let folded = this.folded.get(url)
    if (folded === undefined) {
      folded = foldPath(url)
      if (this.folded.size >= FOLDED_MAX) this.folded.clear()
      this.folded.set(url, folded)
    }
    return folded
  }

  /**
   * The window's figures, as its event log keeps them: `origin` puts the intervals on the CPU profile's clock (µs of
   * the monotonic clock at performance.now() = 0).
   */
  take () {
    const origin = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000
    const routes = this.list.map(r => ({ method: r.method, route: r.route, requests: r.requests, totalMs: round(r.totalMs), maxMs: round(r.maxMs) }))
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
  return patternOf(req) ?? foldPath(String(req.originalUrl ?? req.url ?? '/'))
}

/**
 * The route pattern a framework left on the request, or null.
 * @param {any} req
 * @returns {string | null}
 */
function patternOf (req) {
  const pattern = req.route?.path ?? req.routeOptions?.url ?? req.routerPath
  if (typeof pattern === 'string' && pattern !== '') return `${typeof req.baseUrl === 'string' ? req.baseUrl : ''}${pattern}`
  return null
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
