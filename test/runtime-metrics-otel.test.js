// The runtime metrics through OpenTelemetry: the same instruments on an app's meter, read by the real SDK's
// MeterProvider with two pull readers (two scrapers), which must agree.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { metrics } from '@opentelemetry/api'
import { MeterProvider, MetricReader, DataPointType } from '@opentelemetry/sdk-metrics'
import { monitor, registerOtelMetrics } from 'hotpath/runtime'

/** A reader that reads when asked, as a Prometheus scrape would. */
class PullReader extends MetricReader {
  async onForceFlush () {}
  async onShutdown () {}
}

/** @param {number} ms */
function block (ms) {
  const end = Date.now() + ms
  while (Date.now() < end);
}

/**
 * The metrics one reader collects, by name.
 * @param {PullReader} reader
 */
async function read (reader) {
  const { resourceMetrics, errors } = await reader.collect()
  assert.deepEqual(errors, [])
  /** @type {Map<string, import('@opentelemetry/sdk-metrics').MetricData>} */
  const byName = new Map()
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const m of scope.metrics) byName.set(m.descriptor.name, m)
  }
  return byName
}

/**
 * Ticks more than 100 ms late, from the delay histogram's data point.
 * @param {Map<string, import('@opentelemetry/sdk-metrics').MetricData>} m
 */
function stalls (m) {
  const h = m.get('hotpath_eventloop_delay_seconds')
  assert.equal(h?.dataPointType, DataPointType.HISTOGRAM)
  const point = /** @type {any} */ (h).dataPoints[0].value
  const i = point.buckets.boundaries.indexOf(0.1)
  assert.ok(i > 0, `boundaries ${point.buckets.boundaries}`)
  return point.buckets.counts.slice(i + 1).reduce((/** @type {number} */ a, /** @type {number} */ b) => a + b, 0)
}

/**
 * The value of a gauge or counter's point with these attributes.
 * @param {Map<string, import('@opentelemetry/sdk-metrics').MetricData>} m
 * @param {string} name
 * @param {Record<string, string>} [attributes]
 */
function value (m, name, attributes = {}) {
  const points = /** @type {any[]} */ (m.get(name)?.dataPoints ?? [])
  const found = points.filter(p => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
  assert.equal(found.length, 1, `${name} ${JSON.stringify(attributes)}: ${found.length} points`)
  return /** @type {number} */ (found[0].value)
}

class Cache extends EventEmitter {}

test('OpenTelemetry: the same instruments on the app\'s meter; two readers both see a stall and a leak', async () => {
  const a = new PullReader()
  const b = new PullReader()
  const provider = new MeterProvider({ readers: [a, b] })
  metrics.setGlobalMeterProvider(provider)
  const m = monitor({ interval: 50 })
  const registered = registerOtelMetrics(metrics.getMeter('my-app'), { monitor: m, listeners: { settle: 0 }, interval: 50 })
  const cache = new Cache()
  try {
    assert.ok(registered.names.includes('hotpath_eventloop_delay_seconds'))
    assert.ok(registered.names.includes('hotpath_eventloop_busy_seconds'), 'counters without _total: exporters add it')
    await sleep(100)
    const a0 = await read(a)
    const b0 = await read(b)
    const delay = a0.get('hotpath_eventloop_delay_seconds')
    assert.equal(delay?.descriptor.unit, 's')
    assert.equal(a0.get('hotpath_eventloop_busy_seconds')?.dataPointType, DataPointType.SUM)
    assert.equal(/** @type {any} */ (a0.get('hotpath_eventloop_busy_seconds')).isMonotonic, true)
    assert.ok(value(a0, 'hotpath_gc_runs', { kind: 'scavenge' }) >= 0)
    assert.ok(value(a0, 'hotpath_heap_space_used_bytes', { space: 'old_space' }) > 0)
    assert.equal(value(a0, 'hotpath_http_agent_max_sockets', { agent: 'http.globalAgent', protocol: 'http' }), Infinity)

    block(250)
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 12; i++) cache.on('set', () => i)
      await sleep(70)
    }
    const a1 = await read(a)
    const a2 = await read(a)
    const b1 = await read(b)
    assert.equal(stalls(a1) - stalls(a0), 1, 'reader A sees the stall')
    assert.equal(stalls(a2) - stalls(a0), 1, 'and still does at its next read')
    assert.equal(stalls(b1) - stalls(b0), 1, 'reader B sees it too')
    assert.ok(value(b1, 'hotpath_eventloop_busy_seconds') - value(b0, 'hotpath_eventloop_busy_seconds') >= 0.24)
    assert.equal(value(b1, 'hotpath_event_listeners_growing_emitters', { emitter: 'Cache', event: 'set' }), 1)
    assert.equal(value(a2, 'hotpath_event_listeners_max', { emitter: 'Cache', event: 'set' }), 72)
  } finally {
    registered.close()
    m.stop()
    await provider.shutdown()
    metrics.disable()
  }
})

test('registerOtelMetrics: a meter that is not one, or a bad option, is a TypeError', () => {
  assert.throws(() => registerOtelMetrics(/** @type {any} */ ({})), { name: 'TypeError', message: /registerOtelMetrics\(\): the first argument must be an OpenTelemetry Meter/ })
  const meter = new MeterProvider().getMeter('x')
  assert.throws(() => registerOtelMetrics(meter, /** @type {any} */ ({ intervall: 5 })), { name: 'TypeError', message: "registerOtelMetrics(): unknown option 'intervall' (did you mean 'interval'?)" })
})
