// overloadProtection()'s options: what each means, how each is checked (a mistake is a TypeError when the app sets
// it up, never at a request), and the settings they come to.
import { Monitor } from '../monitor.js'
import { checkOptions, rule } from '../options.js'

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
 * The options, checked and with their defaults.
 * @typedef {object} OverloadSettings
 * @property {import('./pressure.js').Limits} limits
 * @property {string} retryAfter seconds, as the header says it
 * @property {string} message
 * @property {((...args: any[]) => unknown) | undefined} pressureHandler
 * @property {string | null} statusPath
 * @property {Monitor | undefined} monitor one to share; undefined to start one of `sampleInterval`
 * @property {number} sampleInterval ms
 * @property {(() => unknown) | undefined} healthCheck
 * @property {number | undefined} healthCheckInterval ms; undefined for the monitor's interval
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
 * @param {OverloadOptions} [opts] bad ones are a TypeError
 * @returns {OverloadSettings}
 */
export function overloadSettings (opts) {
  checkOptions('overloadProtection()', opts, RULES)
  const o = opts ?? {}
  if (o.maxEventLoopUtilization !== undefined && o.maxEventLoopUtilisation !== undefined &&
    o.maxEventLoopUtilization !== o.maxEventLoopUtilisation) {
    throw new TypeError('overloadProtection(): maxEventLoopUtilization and maxEventLoopUtilisation are one option, given twice with different values')
  }
  return {
    limits: {
      eventLoopDelay: o.maxEventLoopDelay ?? 0,
      eventLoopUtilization: o.maxEventLoopUtilization ?? o.maxEventLoopUtilisation ?? 0,
      heapUsedBytes: o.maxHeapUsedBytes ?? 0,
      rssBytes: o.maxRssBytes ?? 0
    },
    retryAfter: String(Math.max(1, Math.round(o.retryAfter ?? 10))),
    message: o.message ?? 'Service Unavailable',
    pressureHandler: o.pressureHandler,
    statusPath: o.exposeStatusRoute === true ? '/status' : typeof o.exposeStatusRoute === 'string' ? o.exposeStatusRoute : null,
    monitor: o.monitor,
    sampleInterval: o.sampleInterval ?? 1000,
    healthCheck: o.healthCheck,
    healthCheckInterval: o.healthCheckInterval
  }
}
