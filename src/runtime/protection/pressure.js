// What counts as pressure: a monitor sample's measure over its threshold, or a failed health check. Judged once per
// sample interval, never per request: the request path reads the verdict only.

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
 * The thresholds, 0 for off.
 * @typedef {object} Limits
 * @property {number} eventLoopDelay ms
 * @property {number} eventLoopUtilization 0..1
 * @property {number} heapUsedBytes
 * @property {number} rssBytes
 */

/**
 * The first measure over its threshold, in the order under-pressure checks them, else a failed health check.
 * @param {import('../monitor.js').Sample} s
 * @param {Limits} l
 * @param {boolean | null} healthy the last health check's result (null without one)
 * @returns {Pressure | null}
 */
export function pressureOf (s, l, healthy) {
  return over(TYPE_EVENT_LOOP_DELAY, s.delay.mean, l.eventLoopDelay) ??
    over(TYPE_HEAP_USED_BYTES, s.memory.heapUsed, l.heapUsedBytes) ??
    over(TYPE_RSS_BYTES, s.memory.rss, l.rssBytes) ??
    over(TYPE_EVENT_LOOP_UTILIZATION, s.utilization, l.eventLoopUtilization) ??
    (healthy === false ? unhealthy() : null)
}

/** @returns {Pressure} */
export function unhealthy () {
  return { type: TYPE_HEALTH_CHECK, value: 0, threshold: 0 }
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
