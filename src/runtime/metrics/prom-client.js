import { createRequire } from 'node:module'

/**
 * The parts of prom-client hotpath uses, typed structurally so that hotpath's types do not need prom-client's.
 * @typedef {object} PromClient
 * @property {new (config: any) => any} Gauge
 * @property {new (config: any) => any} Counter
 */

/**
 * @typedef {object} PromRegistry a prom-client Registry (or anything with its registerMetric/removeSingleMetric)
 * @property {(metric: any) => void} registerMetric
 * @property {(name: string) => void} [removeSingleMetric]
 */

/**
 * prom-client is an optional peer dependency: the one passed in, else the one the app installed. Loaded on demand so
 * that hotpath/runtime imports without it.
 * @param {unknown} given
 * @returns {PromClient | null}
 */
export function loadPromClient (given) {
  if (isClient(given)) return given
  try {
    const client = createRequire(import.meta.url)('prom-client')
    return isClient(client) ? client : null
  } catch {
    return null
  }
}

/**
 * @param {unknown} c
 * @returns {c is PromClient}
 */
function isClient (c) {
  return c !== null && typeof c === 'object' &&
    typeof (/** @type {any} */ (c).Gauge) === 'function' && typeof (/** @type {any} */ (c).Counter) === 'function'
}
