/**
 * @typedef {object} PromRegistry a prom-client Registry (or anything with its registerMetric/removeSingleMetric)
 * @property {(metric: any) => void} registerMetric
 * @property {(name: string) => void} [removeSingleMetric]
 */

/**
 * One instrument as a metric a prom-client Registry can hold: the object shape the registry reads (`name`, `help`,
 * `type`, `get()`), written here rather than with prom-client's classes because a prom-client Histogram can only be fed
 * one observation at a time, and these are running totals read at scrape time. No prom-client import is needed.
 * A reading that throws gives an empty metric: a scrape must not fail because of one collector.
 * @param {import('./instruments.js').Instrument} inst
 */
export function promMetric (inst) {
  return {
    name: inst.name,
    help: inst.help,
    type: inst.type,
    aggregator: 'sum',
    reset () {},
    /** @this {{ name: string }} */
    get () {
      return { name: this.name, help: inst.help, type: inst.type, aggregator: 'sum', values: safeValues(inst, this.name) }
    }
  }
}

/**
 * @param {import('./instruments.js').Instrument} inst
 * @param {string} name
 */
function safeValues (inst, name) {
  try {
    if (inst.type !== 'histogram') return inst.read?.() ?? []
    const t = /** @type {() => import('./loop-delay.js').DelayTotals} */ (inst.totals)()
    const bounds = inst.bounds ?? []
    return [
      ...bounds.map((le, i) => ({ metricName: `${name}_bucket`, labels: { le: String(le) }, value: t.buckets[i] })),
      { metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: t.count },
      { metricName: `${name}_sum`, labels: {}, value: t.sum },
      { metricName: `${name}_count`, labels: {}, value: t.count }
    ]
  } catch {
    return []
  }
}
