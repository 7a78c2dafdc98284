import dc from 'node:diagnostics_channel'
import { appSite, captureStack, fromCaller } from './stack.js'
import { watchAgentRequests, unwatchAgentRequests } from './agents.js'

/** @typedef {import('./stack.js').Site} Site */

/**
 * @typedef {object} OutgoingCalls the outgoing HTTP calls to one target, counted since the watcher started
 * @property {string} target `GET http://api.local:8080/users/:id`: method, origin and path, the query dropped and
 *   each path segment holding a digit shown as `:id`, so that one endpoint is one target
 * @property {number} started
 * @property {number} finished responses read to the end
 * @property {number} failed
 * @property {number} totalMs time from the call to the end of its response, summed over the finished ones
 * @property {number} maxMs the longest of those since the previous snapshot
 * @property {Site | null} site where the app makes the call: its first frame outside Node, hotpath and
 *   node_modules (else the first outside Node and hotpath), from the first calls to this target
 */

/** Targets kept per process; calls to more distinct endpoints than this are counted under one "other" target. */
const MAX_TARGETS = 100
/** Stacks taken per target: the site is the same call in almost every app, and a stack costs ~10 µs. */
const STACKS_PER_TARGET = 3

/**
 * Times the outgoing HTTP calls the app makes while it serves — what an I/O-bound server waits on — and finds where
 * each is made. node:http calls are seen where the request meets its agent (Agent.prototype.addRequest, shared
 * with the pool watcher: inside http.request(), so the app's frames are on the stack) and end with the
 * 'http.client.response.finish' channel; fetch() calls through undici's 'undici:request:create' and
 * 'undici:request:trailers' channels. Database drivers speak their own protocols and are not seen.
 *
 * Cost per call: a WeakMap entry, two clock reads, and a stack for the first few calls to each target only.
 */
export class OutgoingWatcher {
  /** @type {Map<string, OutgoingCalls & { stacks: number }>} */
  #targets = new Map()
  /** @type {WeakMap<object, { calls: OutgoingCalls & { stacks: number }, start: number }>} */
  #inFlight = new WeakMap()
  #active = false

  // Channel subscribers must not throw: diagnostics_channel rethrows a subscriber's error as an uncaught exception.
  constructor () {
    /** @param {any} message */
    this.onHttpFinish = (message) => this.#end(message, false)
    /** @param {any} message */
    this.onHttpError = (message) => this.#end(message, true)
    /** @param {any} message */
    this.onFetchCreate = (message) => {
      try {
        const r = message?.request
        if (r === null || typeof r !== 'object') return
        this.#begin(r, String(r.method ?? 'GET'), String(r.origin ?? ''), String(r.path ?? '/'), this.onFetchCreate)
      } catch {}
    }
    /** @param {any} message */
    this.onFetchEnd = (message) => this.#end(message, false)
    /** @param {any} message */
    this.onFetchError = (message) => this.#end(message, true)
  }

  start () {
    if (this.#active) return
    this.#active = true
    watchAgentRequests(this)
    dc.subscribe('http.client.response.finish', this.onHttpFinish)
    dc.subscribe('http.client.request.error', this.onHttpError)
    dc.subscribe('undici:request:create', this.onFetchCreate)
    dc.subscribe('undici:request:trailers', this.onFetchEnd)
    dc.subscribe('undici:request:error', this.onFetchError)
  }

  stop () {
    if (!this.#active) return
    this.#active = false
    unwatchAgentRequests(this)
    dc.unsubscribe('http.client.response.finish', this.onHttpFinish)
    dc.unsubscribe('http.client.request.error', this.onHttpError)
    dc.unsubscribe('undici:request:create', this.onFetchCreate)
    dc.unsubscribe('undici:request:trailers', this.onFetchEnd)
    dc.unsubscribe('undici:request:error', this.onFetchError)
  }

  /**
   * Called by the agent hook inside http.request().
   * @param {unknown} agent
   * @param {number} queued
   * @param {unknown} request
   */
  saw (agent, queued, request) {
    if (request === null || typeof request !== 'object') return
    const r = /** @type {any} */ (request)
    const protocol = String(r.protocol ?? /** @type {any} */ (agent)?.protocol ?? 'http:')
    const host = String(r.host ?? 'localhost')
    const port = r.socketPath ? '' : portOf(r, protocol)
    this.#begin(request, String(r.method ?? 'GET'), `${protocol}//${host}${port}`, String(r.path ?? '/'), this.saw)
  }

  /**
   * Every target called so far; resets each one's longest call.
   * @returns {OutgoingCalls[]}
   */
  snapshot () {
    /** @type {OutgoingCalls[]} */
    const out = []
    for (const c of this.#targets.values()) {
      out.push({ target: c.target, started: c.started, finished: c.finished, failed: c.failed, totalMs: round(c.totalMs), maxMs: round(c.maxMs), site: c.site })
      c.maxMs = 0
    }
    return out
  }

  /**
   * @param {object} request
   * @param {string} method
   * @param {string} origin
   * @param {string} path
   * @param {Function} above the hook's own function: the stack starts at its caller
   */
  #begin (request, method, origin, path, above) {
    try {
      let target = `${method} ${origin}${pathPattern(path)}`
      let calls = this.#targets.get(target)
      if (calls === undefined) {
        if (this.#targets.size >= MAX_TARGETS) target = 'other'
        calls = this.#targets.get(target)
        if (calls === undefined) {
          calls = { target, started: 0, finished: 0, failed: 0, totalMs: 0, maxMs: 0, site: null, stacks: 0 }
          this.#targets.set(target, calls)
        }
      }
      calls.started++
      if (calls.site === null && calls.stacks < STACKS_PER_TARGET) {
        calls.stacks++
        calls.site = appSite(fromCaller(captureStack(above)))
      }
      this.#inFlight.set(request, { calls, start: performance.now() })
    } catch {}
  }

  /**
   * @param {any} message a channel's message: `{ request, … }`
   * @param {boolean} failed
   */
  #end (message, failed) {
    try {
      const request = message?.request
      if (request === null || typeof request !== 'object') return
      const call = this.#inFlight.get(request)
      if (call === undefined) return
      this.#inFlight.delete(request)
      if (failed) {
        call.calls.failed++
        return
      }
      const ms = performance.now() - call.start
      call.calls.finished++
      call.calls.totalMs += ms
      if (ms > call.calls.maxMs) call.calls.maxMs = ms
    } catch {}
  }
}

/**
 * @param {any} r a ClientRequest
 * @param {string} protocol
 */
function portOf (r, protocol) {
  const port = Number(r.socket?.remotePort ?? r.agent?.defaultPort ?? r.port)
  const fromHeader = /:(\d+)$/.exec(String(r.getHeader?.('host') ?? ''))
  const p = fromHeader ? Number(fromHeader[1]) : port
  if (!Number.isFinite(p) || p <= 0) return ''
  return (protocol === 'https:' && p === 443) || (protocol === 'http:' && p === 80) ? '' : `:${p}`
}

/**
 * `/users/42/orders?x=1` → `/users/:id/orders`: ids in paths would make every call its own target.
 * @param {string} path
 */
function pathPattern (path) {
  const q = path.indexOf('?')
  const bare = q === -1 ? path : path.slice(0, q)
  return bare.split('/').map(s => /\d/.test(s) ? ':id' : s).join('/')
}

/** @param {number} ms */
const round = (ms) => Math.round(ms * 1000) / 1000
