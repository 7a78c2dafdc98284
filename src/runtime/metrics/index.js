import { AgentWatcher } from '../../sampling/agents.js'
import { ListenerWatcher } from '../../sampling/listeners.js'
import { warnOnce } from '../../sampling/warn.js'
import { Monitor } from '../monitor.js'
import { agentMetrics } from './agents.js'
import { eventLoopMetrics } from './event-loop.js'
import { listenerMetrics } from './listeners.js'
import { memoryMetrics } from './memory.js'
import { loadPromClient } from './prom-client.js'

/** @typedef {import('./prom-client.js').PromRegistry} PromRegistry */

/**
 * Creates one prom-client metric and registers it; the metric's `collect` runs at each scrape.
 * @callback Define
 * @param {'Gauge' | 'Counter'} type
 * @param {{ name: string, help: string, labelNames?: string[], collect: () => void }} config
 * @returns {void}
 */

/**
 * @typedef {object} MetricsOptions
 * @property {string} [prefix] of every metric name (default 'hotpath_'; prom-client's collectDefaultMetrics uses
 *   'nodejs_' and 'process_', so the two never clash)
 * @property {import('../monitor.js').Monitor} [monitor] a running monitor to read GC, heap spaces and resources from
 *   (default: one started here, sampling every second)
 * @property {boolean | { threshold?: number }} [listeners] watch listener-count growth (default true, threshold 10)
 * @property {boolean} [agents] watch outgoing HTTP agent pools (default true)
 * @property {unknown} [client] the prom-client module, when hotpath cannot import the app's own
 */

/**
 * @typedef {object} RuntimeMetrics
 * @property {string[]} names the metric names registered
 * @property {() => void} close unregisters them and stops what was started for them
 */

/**
 * Registers hotpath's runtime metrics into a prom-client registry: event-loop delay percentiles and utilisation, GC
 * time by kind, heap spaces, active resources, listener-count growth and HTTP agent pool saturation. prom-client
 * writes the exposition format. Never throws: without prom-client, or with a registry that refuses a metric (a name
 * already taken), it warns and registers what it can.
 * @param {PromRegistry} registry e.g. prom-client's `register`, or a `new Registry()`
 * @param {MetricsOptions} [opts]
 * @returns {RuntimeMetrics}
 */
export function registerMetrics (registry, opts = {}) {
  const o = opts !== null && typeof opts === 'object' ? opts : {}
  /** @type {string[]} */
  const names = []
  /** @type {(() => void)[]} */
  const cleanups = []
  const handle = {
    names,
    close () {
      for (const name of names.splice(0)) {
        try { registry.removeSingleMetric?.(name) } catch {}
      }
      for (const cleanup of cleanups.splice(0)) {
        try { cleanup() } catch {}
      }
    }
  }
  const client = loadPromClient(o.client)
  if (client === null) {
    warnOnce('no-prom-client', 'hotpath: registerMetrics needs prom-client (npm install prom-client); no metrics registered')
    return handle
  }
  if (registry === null || typeof registry !== 'object' || typeof registry.registerMetric !== 'function') {
    warnOnce('bad-registry', 'hotpath: registerMetrics needs a prom-client Registry; no metrics registered')
    return handle
  }
  const prefix = typeof o.prefix === 'string' ? o.prefix : 'hotpath_'

  /** @type {Define} */
  const define = (type, config) => {
    try {
      const collect = config.collect
      // A scrape must not fail because of one collector.
      /** @this {any} */
      const safeCollect = function () {
        try { collect.call(this) } catch {}
      }
      new client[type]({ ...config, collect: safeCollect, registers: [registry] }) // eslint-disable-line no-new
      names.push(config.name)
    } catch (err) {
      warnOnce(`metric-${config.name}`, `hotpath: could not register ${config.name}: ${err instanceof Error ? err.message : String(err)}`)
    }
  }

  const ownMonitor = !(o.monitor instanceof Monitor)
  const monitor = o.monitor instanceof Monitor ? o.monitor : new Monitor({ interval: 1000 }).start()
  if (ownMonitor) cleanups.push(() => monitor.stop())
  cleanups.push(eventLoopMetrics(define, prefix))
  memoryMetrics(define, prefix, monitor)
  if (o.listeners !== false) {
    const watcher = new ListenerWatcher(typeof o.listeners === 'object' && o.listeners !== null ? o.listeners : {})
    watcher.start()
    cleanups.push(() => watcher.stop())
    listenerMetrics(define, prefix, watcher)
  }
  if (o.agents !== false) {
    const watcher = new AgentWatcher()
    watcher.start()
    cleanups.push(() => watcher.stop())
    agentMetrics(define, prefix, watcher)
  }
  return handle
}
