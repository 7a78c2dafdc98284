// Any number of scrapers read the same runtime metrics: two registries (as two apps' /metrics, or an HA pair of
// Prometheus servers scraping one endpoint) both see a stall that happened before either scraped, and a scrape takes
// nothing away from the next one.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import client from 'prom-client'
import { registerMetrics } from 'hotpath/runtime'
import { parseExposition } from './helpers/exposition.js'

/** @param {number} ms */
function block (ms) {
  const end = Date.now() + ms
  while (Date.now() < end);
}

/** @param {import('prom-client').Registry} registry */
async function scrape (registry) {
  const s = parseExposition(await registry.metrics())
  return {
    /** ticks that came more than 100 ms late */
    stalls: s.get('hotpath_eventloop_delay_seconds_count') - s.get('hotpath_eventloop_delay_seconds_bucket', { le: '0.1' }),
    sum: s.get('hotpath_eventloop_delay_seconds_sum'),
    busy: s.get('hotpath_eventloop_busy_seconds_total'),
    type: s.types.hotpath_eventloop_delay_seconds,
    buckets: s.samples.filter(x => x.name === 'hotpath_eventloop_delay_seconds_bucket')
  }
}

test('two registries scraped back to back both see a stall from before; a scrape does not change the next', async () => {
  const a = new client.Registry()
  const b = new client.Registry()
  const ma = registerMetrics(a, { listeners: false, agents: false })
  const mb = registerMetrics(b, { listeners: false, agents: false })
  try {
    await sleep(100)
    const a0 = await scrape(a)
    const b0 = await scrape(b)
    assert.equal(a0.type, 'histogram')
    // cumulative buckets: each bound holds at least what the one below holds
    for (let i = 1; i < a0.buckets.length; i++) assert.ok(a0.buckets[i].value >= a0.buckets[i - 1].value)
    assert.equal(a0.buckets.at(-1)?.labels.le, '+Inf')

    block(250)
    await sleep(30)
    // scraper A twice, then scraper B: three reads, one stall, all of them see it
    const a1 = await scrape(a)
    const a2 = await scrape(a)
    const b1 = await scrape(b)
    assert.equal(a1.stalls - a0.stalls, 1, 'A sees the stall')
    assert.equal(a2.stalls - a0.stalls, 1, 'A\'s second scrape still sees it: the first took nothing away')
    assert.equal(b1.stalls - b0.stalls, 1, 'B sees it too, after A scraped twice')
    assert.ok(a2.sum - a0.sum >= 0.24 && b1.sum - b0.sum >= 0.24, 'the stall\'s 250 ms are in both sums')
    assert.ok(a1.busy - a0.busy >= 0.24 && b1.busy - b0.busy >= 0.24, 'the busy time counts the stall for both')
    assert.ok(a2.busy >= a1.busy, 'a counter never goes back')
  } finally {
    ma.close()
    mb.close()
  }
})
