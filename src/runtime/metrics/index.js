import { warnOnce } from '../../sampling/warn.js'
import { Monitor } from '../monitor.js'
import { checkOptions, rule } from '../options.js'
import { createInstruments } from './instruments.js'
import { promMetric } from './prom-client.js'

/** @typedef {import('./prom-client.js').PromRegistry} PromRegistry */

/**
 * @typedef {object} MetricsOptions
 * @property {string} [prefix] of every metric name (default 'hotpath_'; prom-client's collectDefaultMetrics uses
 *   'nodejs_' and 'process_', so the two never clash)
 * @property {import('../monitor.js').Monitor} [monitor] a running monitor to read GC, heap spaces and resources from
 *   (default: one started here, sampling every second)
 * @property {boolean | { threshold?: number, settle?: number }} [listeners] watch listener-count growth (default true;
 *   threshold 10 listeners; settle: ms of start-up whose growth does not count, default 10000)
 * @property {boolean} [agents] watch outgoing HTTP agent pools (default true)
 * @property {number} [interval] ms between the checks of listener growth and agent queues (default 1000)
 * @property {unknown} [client] no longer needed (hotpath writes the registry's metric objects itself); ignored
 */

/**
 * @typedef {object} RuntimeMetrics
 * @property {string[]} names the metric names registered
 * @property {() => void} close unregisters them and stops what was started for them
 */

/** A Prometheus metric name prefix: empty, or the start of a valid name. */
const PREFIX = /^(?:[a-zA-Z_:][a-zA-Z0-9_:]*)?$/

/** The options registerMetrics and registerOtelMetrics share. @type {Record<string, import('../options.js').OptionRule>} */
export const METRICS_RULES = {
  prefix: { types: ['string'], expect: "letters, digits, '_' or ':' (not starting with a digit)", valid: (v) => PREFIX.test(v) },
  monitor: { types: ['object'], expect: 'a Monitor (from monitor())', valid: (v) => v instanceof Monitor },
  listeners: {
    types: ['boolean', 'object'],
    expect: 'true, false or { threshold, settle }',
    nested: { threshold: rule.positive('listeners'), settle: rule.nonNegative('ms') }
  },
  agents: rule.boolean(),
  interval: rule.positive('ms')
}

/**
 * Registers hotpath's runtime metrics into a prom-client registry: event-loop delay as a histogram and busy time as a
 * counter, GC time by kind, heap spaces, active resources, listener-count growth and HTTP agent pool saturation —
 * levels and running totals only, so any number of scrapers read the same series. Bad options are a TypeError here;
 * a name already taken in the registry is a warning, and what can be registered is.
 * @param {PromRegistry} registry e.g. prom-client's `register`, or a `new Registry()`
 * @param {MetricsOptions} [opts]
 * @returns {RuntimeMetrics}
 */
export function registerMetrics (registry, opts) {
  if (registry === null || typeof registry !== 'object' || typeof registry.registerMetric !== 'function') {
    throw new TypeError('registerMetrics(): the first argument must be a prom-client Registry (e.g. client.register)')
  }
  checkOptions('registerMetrics()', opts, { ...METRICS_RULES, client: { types: ['object', 'function'], expect: 'the prom-client module' } })
  const o = opts ?? {}
  const sources = createInstruments({ ...o, prefix: o.prefix ?? 'hotpath_' })
  /** @type {string[]} */
  const names = []
  for (const inst of sources.instruments) {
    try {
      registry.registerMetric(promMetric(inst))
      names.push(inst.name)
    } catch (err) {
      warnOnce(`metric-${inst.name}`, `hotpath: could not register ${inst.name}: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  return {
    names,
    close () {
      for (const name of names.splice(0)) {
        try { registry.removeSingleMetric?.(name) } catch {}
      }
      sources.close()
    }
  }
}
