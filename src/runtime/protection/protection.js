import { Monitor } from '../monitor.js'
import { checkOptions, rule } from '../options.js'
import { expressMiddleware, httpHandler } from './node-http.js'
import { fastifyPlugin } from './fastify.js'
import { koaMiddleware } from './koa.js'
import { afterHandler } from './pressure-handler.js'

// The same names as @fastify/under-pressure, so handlers written for it read the same.
export const TYPE_EVENT_LOOP_DELAY = 'eventLoopDelay'
export const TYPE_EVENT_LOOP_UTILIZATION = 'eventLoopUtilization'
export const TYPE_HEAP_USED_BYTES = 'heapUsedBytes'
export const TYPE_RSS_BYTES = 'rssBytes'
export const TYPE_HEALTH_CHECK = 'healthCheck'

/** @typedef {'eventLoopDelay' | 'eventLoopUtilization' | 'heapUsedBytes' | 'rssBytes' | 'healthCheck'} PressureType */

/**
 * @typedef {object} Pressure why the server refuses work
 * @property {PressureType} type
 * @property {number} value the measure (ms, 0..1 or bytes; 0 for a failed health check)
 * @property {number} threshold
 */

/**
 * @typedef {object} OverloadOptions
 * @property {number} [maxEventLoopDelay] ms of mean event-loop delay over the last sample interval (0 or absent: off)
 * @property {number} [maxEventLoopUtilization] 0..1 over the last sample interval (off by default)
 * @property {number} [maxEventLoopUtilisation] the same, spelt as hotpath prints it
 * @property {number} [maxHeapUsedBytes] (off by default)
 * @property {number} [maxRssBytes] (off by default)
 * @property {number} [retryAfter] seconds, sent as Retry-After with each 503 (default 10)
 * @property {string} [message] in the 503's JSON body (default 'Service Unavailable')
 * @property {(...args: any[]) => unknown} [pressureHandler] called instead of answering 503: (req, res, type, value) for
 *   node:http and Express, (request, reply, type, value) for Fastify, (ctx, type, value) for Koa; when it sends no
 *   response, the request goes on to the app
 * @property {boolean | string} [exposeStatusRoute] answer GET on this path ('/status' for true) with 200 or 503 and the
 *   measures, for a load balancer's health check
 * @property {() => unknown} [healthCheck] checked every healthCheckInterval: false, a throw or a rejection means unhealthy
 * @property {number} [healthCheckInterval] ms (default: the sample interval)
 * @property {number} [sampleInterval] ms between measures (default 1000); ignored with `monitor`
 * @property {Monitor} [monitor] a running monitor to share instead of starting one
 */

/**
 * @typedef {object} OverloadStatus what the status route answers; `status`, `healthy` and the status code (200 or 503)
 *   always tell the same verdict
 * @property {'ok' | 'under-pressure'} status
 * @property {boolean} healthy whether requests are served (false while under pressure, whatever the reason)
 * @property {Pressure | null} pressure why not
 * @property {boolean | null} healthCheck the last health check's result (null without a healthCheck option)
 * @property {number} eventLoopDelay mean ms over the last interval
 * @property {number} eventLoopUtilization 0..1 over the last interval
 * @property {number} heapUsed bytes
 * @property {number} rss bytes
 */

/** @type {Record<string, import('../options.js').OptionRule>} */
const RULES = {
  maxEventLoopDelay: rule.nonNegative('ms'),
  maxEventLoopUtilization: rule.ratio(),
  maxEventLoopUtilisation: rule.ratio(),
  maxHeapUsedBytes: rule.nonNegative('bytes'),
  maxRssBytes: rule.nonNegative('bytes'),
  retryAfter: rule.positive('seconds'),
  message: { types: ['string'], expect: 'a string' },
  pressureHandler: rule.fn(),
  exposeStatusRoute: {
    types: ['boolean', 'string'],
    expect: "true, false or a path starting with '/'",
    valid: (v) => typeof v === 'boolean' || v.startsWith('/')
  },
  healthCheck: rule.fn(),
  healthCheckInterval: rule.positive('ms'),
  sampleInterval: rule.positive('ms'),
  monitor: { types: ['object'], expect: 'a Monitor (from monitor())', valid: (v) => v instanceof Monitor }
}

/**
 * Overload protection: after each monitor sample, compares event-loop delay, utilisation, heap used and RSS with their
 * thresholds; while one is over, requests are answered `503` with `Retry-After` before the app does any work. The check
 * on the request path is one field read: the verdict is made per interval, not per request.
 */
export class OverloadProtection {
  /** @type {Pressure | null} */
  #pressure = null
  #monitor
  #ownMonitor
  #limits
  /** @type {boolean | null} the last health check's result; null without one */
  #healthy = null
  #healthPending = false
  /** @type {ReturnType<typeof setInterval> | null} */
  #healthTimer = null
  /** @type {(s: import('../monitor.js').Sample) => void} */
  #onSample

  /** @param {OverloadOptions} [opts] bad ones are a TypeError */
  constructor (opts) {
    checkOptions('overloadProtection()', opts, RULES)
    const o = opts ?? {}
    if (o.maxEventLoopUtilization !== undefined && o.maxEventLoopUtilisation !== undefined &&
      o.maxEventLoopUtilization !== o.maxEventLoopUtilisation) {
      throw new TypeError('overloadProtection(): maxEventLoopUtilization and maxEventLoopUtilisation are one option, given twice with different values')
    }
    this.#limits = {
      eventLoopDelay: o.maxEventLoopDelay ?? 0,
      eventLoopUtilization: o.maxEventLoopUtilization ?? o.maxEventLoopUtilisation ?? 0,
      heapUsedBytes: o.maxHeapUsedBytes ?? 0,
      rssBytes: o.maxRssBytes ?? 0
    }
    this.retryAfter = String(Math.max(1, Math.round(o.retryAfter ?? 10)))
    const message = o.message ?? 'Service Unavailable'
    /** The 503 body, built once: refusing work must cost less than doing it. */
    this.body = Buffer.from(JSON.stringify({ statusCode: 503, error: 'Service Unavailable', message }))
    this.message = message
    this.pressureHandler = o.pressureHandler
    /** @type {string | null} */
    this.statusPath = o.exposeStatusRoute === true ? '/status' : typeof o.exposeStatusRoute === 'string' ? o.exposeStatusRoute : null
    this.#ownMonitor = o.monitor === undefined
    this.#monitor = o.monitor ?? new Monitor({ interval: o.sampleInterval ?? 1000 })
    this.#onSample = (s) => this.#judge(s)
    this.#monitor.on('sample', this.#onSample)
    if (this.#ownMonitor) this.#monitor.start()
    if (o.healthCheck !== undefined) {
      this.#healthy = true
      const check = o.healthCheck
      const every = o.healthCheckInterval ?? this.#monitor.interval
      this.#healthTimer = setInterval(() => this.#runHealthCheck(check), every)
      this.#healthTimer.unref()
      this.#runHealthCheck(check)
    }
  }

  /** Whether requests are being refused now. */
  isUnderPressure () {
    return this.#pressure !== null
  }

  /** Why requests are being refused, or null. @returns {Pressure | null} */
  pressure () {
    return this.#pressure === null ? null : { ...this.#pressure }
  }

  /** The verdict and the measures it rests on. @returns {OverloadStatus} */
  status () {
    const s = this.#monitor.snapshot()
    const pressure = this.pressure()
    return {
      status: pressure === null ? 'ok' : 'under-pressure',
      healthy: pressure === null,
      pressure,
      healthCheck: this.#healthy,
      eventLoopDelay: s.delay.mean,
      eventLoopUtilization: s.utilization,
      heapUsed: s.memory.heapUsed,
      rss: s.memory.rss
    }
  }

  /**
   * Wraps a node:http request handler: `http.createServer(guard.http((req, res) => { ... }))`.
   * @template {import('node:http').IncomingMessage} Req
   * @template {import('node:http').ServerResponse} Res
   * @param {(req: Req, res: Res) => void} handler
   * @returns {(req: Req, res: Res) => void}
   */
  http (handler) {
    return httpHandler(this, handler)
  }

  /**
   * Express middleware: `app.use(guard.express())`, before the routes it protects.
   * @param {...never} args none: the options belong to overloadProtection()
   */
  express (...args) {
    noOptions('express', args)
    return expressMiddleware(this)
  }

  /**
   * Koa middleware: `app.use(guard.koa())`, first.
   * @param {...never} args none: the options belong to overloadProtection()
   */
  koa (...args) {
    noOptions('koa', args)
    return koaMiddleware(this)
  }

  /**
   * A Fastify plugin that protects every route of the instance: `await app.register(guard.fastify())`.
   * @param {...never} args none: the options belong to overloadProtection()
   */
  fastify (...args) {
    noOptions('fastify', args)
    return fastifyPlugin(this)
  }

  /** Stops the health checks and the monitor this protection started (a shared monitor keeps running). */
  close () {
    this.#monitor.off('sample', this.#onSample)
    if (this.#ownMonitor) this.#monitor.stop()
    if (this.#healthTimer !== null) clearInterval(this.#healthTimer)
    this.#healthTimer = null
    this.#pressure = null
  }

  /** @param {import('../monitor.js').Sample} s */
  #judge (s) {
    const l = this.#limits
    this.#pressure =
      over(TYPE_EVENT_LOOP_DELAY, s.delay.mean, l.eventLoopDelay) ??
      over(TYPE_HEAP_USED_BYTES, s.memory.heapUsed, l.heapUsedBytes) ??
      over(TYPE_RSS_BYTES, s.memory.rss, l.rssBytes) ??
      over(TYPE_EVENT_LOOP_UTILIZATION, s.utilization, l.eventLoopUtilization) ??
      (this.#healthy === false ? { type: TYPE_HEALTH_CHECK, value: 0, threshold: 0 } : null)
  }

  /** @param {() => unknown} check */
  #runHealthCheck (check) {
    if (this.#healthPending) return
    this.#healthPending = true
    /** @param {boolean} ok */
    const settle = (ok) => {
      this.#healthPending = false
      this.#healthy = ok
      if (!ok && this.#pressure === null) this.#pressure = { type: TYPE_HEALTH_CHECK, value: 0, threshold: 0 }
      if (ok && this.#pressure?.type === TYPE_HEALTH_CHECK) this.#pressure = null
    }
    try {
      Promise.resolve(check()).then((r) => settle(r !== false), () => settle(false))
    } catch {
      settle(false)
    }
  }

  /**
   * Answers a refused request on a node:http response (node:http and Express). With a pressureHandler, that decides;
   * resolves true when the request was answered, false when it should go on to the app.
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @returns {boolean | Promise<boolean>}
   */
  refuse (req, res) {
    const p = this.#pressure
    if (this.pressureHandler !== undefined && p !== null) {
      return afterHandler(this.pressureHandler, [req, res, p.type, p.value], () => res.headersSent || res.writableEnded, () => this.#send503(res))
    }
    this.#send503(res)
    return true
  }

  /** @param {import('node:http').ServerResponse} res */
  #send503 (res) {
    if (!res.headersSent) {
      res.writeHead(503, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': this.body.length,
        'retry-after': this.retryAfter
      })
    }
    res.end(this.body)
  }

  /**
   * The status route's answer: [status code, JSON text].
   * @returns {[number, string]}
   */
  statusResponse () {
    try {
      const status = this.status()
      return [status.status === 'ok' ? 200 : 503, JSON.stringify(status)]
    } catch {
      return [500, '{"status":"unknown"}']
    }
  }
}

/**
 * @param {PressureType} type
 * @param {number} value
 * @param {number} threshold 0: off
 * @returns {Pressure | null}
 */
function over (type, value, threshold) {
  return threshold > 0 && value > threshold ? { type, value, threshold } : null
}

/**
 * The adapters take no options of their own: options given there would otherwise be ignored, silently.
 * @param {string} adapter
 * @param {unknown[]} args
 */
function noOptions (adapter, args) {
  if (args.some(a => a !== undefined)) {
    throw new TypeError(`guard.${adapter}(): takes no options; give them to overloadProtection()`)
  }
}

/**
 * Starts overload protection; mount it with `.http(handler)`, `.express()`, `.koa()` or `.fastify()`.
 * @param {OverloadOptions} [opts]
 * @returns {OverloadProtection}
 */
export function overloadProtection (opts) {
  return new OverloadProtection(opts)
}
