import { checkOptions } from '../options.js'
import { createInstruments } from './instruments.js'
import { METRICS_RULES } from './index.js'

/**
 * The parts of an @opentelemetry/api Meter hotpath uses, typed structurally so that hotpath's types do not need
 * @opentelemetry/api's.
 * @typedef {object} OtelMeter
 * @property {(name: string, options?: object) => { record: (value: number, attributes?: Record<string, string>) => void }} createHistogram
 * @property {(name: string, options?: object) => OtelObservable} createObservableGauge
 * @property {(name: string, options?: object) => OtelObservable} createObservableCounter
 */

/**
 * @typedef {object} OtelObservable
 * @property {(callback: (result: { observe: (value: number, attributes?: Record<string, string>) => void }) => void) => void} addCallback
 * @property {(callback: (result: { observe: (value: number, attributes?: Record<string, string>) => void }) => void) => void} removeCallback
 */

/**
 * @typedef {object} OtelMetricsOptions
 * @property {string} [prefix] of every instrument name (default 'hotpath_', so that a Prometheus exporter writes the
 *   names registerMetrics writes)
 * @property {import('../monitor.js').Monitor} [monitor]
 * @property {boolean | { threshold?: number, settle?: number }} [listeners]
 * @property {boolean} [agents]
 * @property {number} [interval]
 */

/**
 * Registers the same instruments as registerMetrics on an OpenTelemetry meter, for apps that export metrics through
 * @opentelemetry/api rather than prom-client: observable gauges for levels, observable counters for running totals
 * (named without `_total`, which exporters add), and a histogram of event-loop delay recorded tick by tick (explicit
 * bucket boundaries advised, 1 ms … 10 s). With cumulative temporality (the default) every reader reads the same
 * totals. Bad options are a TypeError.
 * @param {OtelMeter} meter e.g. `metrics.getMeter('my-app')`
 * @param {OtelMetricsOptions} [opts]
 * @returns {import('./index.js').RuntimeMetrics}
 */
export function registerOtelMetrics (meter, opts) {
  if (meter === null || typeof meter !== 'object' || typeof meter.createObservableGauge !== 'function' ||
    typeof meter.createHistogram !== 'function' || typeof meter.createObservableCounter !== 'function') {
    throw new TypeError('registerOtelMetrics(): the first argument must be an OpenTelemetry Meter (metrics.getMeter(name))')
  }
  checkOptions('registerOtelMetrics()', opts, METRICS_RULES)
  const o = opts ?? {}
  const sources = createInstruments({ ...o, prefix: o.prefix ?? 'hotpath_' })
  /** @type {string[]} */
  const names = []
  /** @type {(() => void)[]} */
  const stops = []
  for (const inst of sources.instruments) {
    const name = inst.type === 'counter' ? inst.name.replace(/_total$/, '') : inst.name
    const options = { description: inst.help, unit: inst.unit }
    if (inst.type === 'histogram') {
      const histogram = meter.createHistogram(name, { ...options, advice: { explicitBucketBoundaries: inst.bounds } })
      const observe = /** @type {NonNullable<typeof inst.observe>} */ (inst.observe)
      stops.push(observe((value) => histogram.record(value)))
    } else {
      const observable = inst.type === 'counter' ? meter.createObservableCounter(name, options) : meter.createObservableGauge(name, options)
      /** @param {{ observe: (value: number, attributes?: Record<string, string>) => void }} result */
      const callback = (result) => {
        try {
          for (const point of inst.read?.() ?? []) result.observe(point.value, point.labels)
        } catch {}
      }
      observable.addCallback(callback)
      stops.push(() => observable.removeCallback(callback))
    }
    names.push(name)
  }
  return {
    names,
    close () {
      names.splice(0)
      for (const stop of stops.splice(0)) {
        try { stop() } catch {}
      }
      sources.close()
    }
  }
}
