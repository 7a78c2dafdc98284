// overloadProtection(): refuses work while the process is overloaded, mounted on node:http, Express, Koa or Fastify.
// Its options are read in overload-options.js, what counts as pressure is judged in pressure.js once per sample, and
// the app's health check runs in health-check.js; what is left here is the verdict the request path reads, the 503 and
// the status route.
import { Monitor } from '../monitor.js'
import { HealthCheck } from './health-check.js'
import { expressMiddleware, httpHandler } from './node-http.js'
import { fastifyPlugin } from './fastify.js'
import { koaMiddleware } from './koa.js'
import { overloadSettings } from './overload-options.js'
import { afterHandler } from './pressure-handler.js'
import { pressureOf, TYPE_HEALTH_CHECK, unhealthy } from './pressure.js'

/** @typedef {import('./pressure.js').Pressure} Pressure */
/** @typedef {import('./pressure.js').PressureType} PressureType */
/** @typedef {import('./overload-options.js').OverloadOptions} OverloadOptions */

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
  /** @type {HealthCheck | null} */
  #healthCheck = null
  /** @type {(s: import('../monitor.js').Sample) => void} */
  #onSample

  /** @param {OverloadOptions} [opts] bad ones are a TypeError */
  constructor (opts) {
    const o = overloadSettings(opts)
    this.#limits = o.limits
    this.retryAfter = o.retryAfter
    /** The 503 body, built once: refusing work must cost less than doing it. */
    this.body = Buffer.from(JSON.stringify({ statusCode: 503, error: 'Service Unavailable', message: o.message }))
    this.message = o.message
    this.pressureHandler = o.pressureHandler
    /** @type {string | null} */
    this.statusPath = o.statusPath
    this.#ownMonitor = o.monitor === undefined
    this.#monitor = o.monitor ?? new Monitor({ interval: o.sampleInterval })
    this.#onSample = (s) => { this.#pressure = pressureOf(s, this.#limits, this.#healthy) }
    this.#monitor.on('sample', this.#onSample)
    if (this.#ownMonitor) this.#monitor.start()
    if (o.healthCheck !== undefined) {
      this.#healthy = true
      this.#healthCheck = new HealthCheck(o.healthCheck, o.healthCheckInterval ?? this.#monitor.interval, (ok) => this.#settleHealth(ok))
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
    this.#healthCheck?.stop()
    this.#healthCheck = null
    this.#pressure = null
  }

  /**
   * A failed health check refuses work at once, without waiting for the next sample; a passing one lifts only the
   * refusal it caused.
   * @param {boolean} ok
   */
  #settleHealth (ok) {
    this.#healthy = ok
    if (!ok && this.#pressure === null) this.#pressure = unhealthy()
    if (ok && this.#pressure?.type === TYPE_HEALTH_CHECK) this.#pressure = null
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
