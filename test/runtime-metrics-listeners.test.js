// Listener growth is judged after start-up and over time: a healthy Fastify app, whose boot puts a `preReady`
// listener per route on avvio's Boot, exports no growing emitter; a listener added per request in the same app does.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import client from 'prom-client'
import { registerMetrics } from 'hotpath/runtime'
import { parseExposition } from './helpers/exposition.js'

class Bus extends EventEmitter {}

test('a healthy Fastify app exports no growing emitter; a listener added per request does', async () => {
  const registry = new client.Registry()
  const metrics = registerMetrics(registry, { listeners: { settle: 300 }, interval: 100, agents: false })
  const bus = new Bus()
  const app = Fastify()
  // enough routes for avvio's Boot to pass Node's limit of 10 'preReady' listeners while the app boots
  for (let i = 0; i < 15; i++) app.get(`/r${i}`, async () => ({ i }))
  app.get('/leak', async () => {
    bus.on('message', () => {})
    return { listeners: bus.listenerCount('message') }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = /** @type {import('node:net').AddressInfo} */ (app.server.address())
  const url = `http://127.0.0.1:${port}`
  try {
    // the healthy part: steady traffic for a while after start-up
    for (let i = 0; i < 15; i++) {
      assert.equal((await fetch(`${url}/r${i % 15}`)).status, 200)
      await sleep(60)
    }
    const healthy = parseExposition(await registry.metrics())
    const series = healthy.samples.filter(x => x.name.startsWith('hotpath_event_listeners'))
    assert.deepEqual(series, [], `no growing emitter in a healthy app, got ${JSON.stringify(series)}`)

    // the leak: one listener per request, requests spread over several checks
    for (let i = 0; i < 30; i++) {
      await (await fetch(`${url}/leak`)).json()
      await sleep(40)
    }
    await sleep(150)
    const leaking = parseExposition(await registry.metrics())
    assert.equal(leaking.get('hotpath_event_listeners_growing_emitters', { emitter: 'Bus', event: 'message' }), 1)
    assert.ok(leaking.get('hotpath_event_listeners_max', { emitter: 'Bus', event: 'message' }) >= 20)
    const others = leaking.samples.filter(x => x.name.startsWith('hotpath_event_listeners') && x.labels.emitter !== 'Bus')
    assert.deepEqual(others, [], 'still nothing from the boot')
  } finally {
    metrics.close()
    await app.close()
  }
})
