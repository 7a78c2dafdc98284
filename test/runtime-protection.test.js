// Overload protection in real node:http, Express, Fastify and Koa servers, loaded by hotpath's own generator with a
// handler that blocks the event loop: 503s must appear while overloaded and stop after.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import express from 'express'
import Fastify from 'fastify'
import Koa from 'koa'
import { load } from 'hotpath'
import { monitor, overloadProtection, TYPE_HEAP_USED_BYTES, TYPE_HEALTH_CHECK } from 'hotpath/runtime'

/** @param {number} ms */
function block (ms) {
  const end = Date.now() + ms
  while (Date.now() < end);
}

/**
 * @typedef {object} App
 * @property {string} url
 * @property {() => Promise<void>} close
 */

/**
 * The same app in each framework: GET / blocks the loop for `blockMs`, then answers JSON; GET /light answers at once.
 * @param {'http' | 'express' | 'fastify' | 'koa'} kind
 * @param {import('hotpath/runtime').OverloadProtection} guard
 * @param {number} blockMs
 * @returns {Promise<App>}
 */
async function startApp (kind, guard, blockMs) {
  const body = JSON.stringify({ hello: 'world' })
  if (kind === 'fastify') {
    const app = Fastify()
    await app.register(guard.fastify())
    app.get('/', async () => { block(blockMs); return { hello: 'world' } })
    app.get('/light', async () => ({ hello: 'world' }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = /** @type {import('node:net').AddressInfo} */ (app.server.address())
    return { url: `http://127.0.0.1:${port}`, close: () => app.close() }
  }
  /** @type {http.RequestListener} */
  let listener
  if (kind === 'express') {
    const app = express()
    app.use(guard.express())
    app.get('/', (req, res) => { block(blockMs); res.json({ hello: 'world' }) })
    app.get('/light', (req, res) => { res.json({ hello: 'world' }) })
    listener = app
  } else if (kind === 'koa') {
    const app = new Koa()
    app.use(guard.koa())
    app.use(async (ctx) => {
      if (ctx.path === '/') block(blockMs)
      ctx.body = { hello: 'world' }
    })
    listener = app.callback()
  } else {
    listener = guard.http((req, res) => {
      if (req.url === '/') block(blockMs)
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(body)
    })
  }
  const server = http.createServer(listener)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}

/**
 * @param {() => boolean} condition
 * @param {number} [ms]
 */
async function waitFor (condition, ms = 3000) {
  const end = Date.now() + ms
  while (!condition()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await sleep(10)
  }
}

for (const kind of /** @type {const} */ (['http', 'express', 'fastify', 'koa'])) {
  test(`${kind}: 503s while a blocking handler overloads the loop, none after`, async () => {
    const guard = overloadProtection({ maxEventLoopDelay: 25, sampleInterval: 100 })
    const app = await startApp(kind, guard, 50)
    try {
      // calm before the load: the first samples cover the app's start-up work, which can pass the threshold itself
      await sleep(250)
      await waitFor(() => !guard.isUnderPressure())
      assert.equal((await fetch(app.url + '/light')).status, 200)
      // worker threads generate the load, so the blocked loop is the server's alone
      const r = await load({ url: app.url + '/', connections: 4, workers: 2, duration: 1.5 })
      assert.ok(r['5xx'] > 0, `503s while overloaded: ${JSON.stringify(r.statusCodeStats)}`)
      assert.ok(r['2xx'] > 0, 'the app still served some requests between verdicts')
      assert.equal(r.statusCodeStats['503']?.count, r['5xx'], 'every 5xx is a 503')
      assert.equal(r.errors, 0)
      // once the load is gone (and the requests the server had already read are done), the next samples clear it
      await sleep(400)
      await waitFor(() => !guard.isUnderPressure())
      const statuses = []
      for (let i = 0; i < 20; i++) statuses.push((await fetch(app.url + '/light')).status)
      assert.deepEqual(statuses, Array(20).fill(200), `no 503 after the load (${JSON.stringify(guard.status())})`)
    } finally {
      guard.close()
      await app.close()
    }
  })

  test(`${kind}: the 503 has Retry-After and a JSON body; the status route tells the load balancer`, async () => {
    const guard = overloadProtection({ maxHeapUsedBytes: 1, sampleInterval: 20, retryAfter: 7, exposeStatusRoute: true, message: 'busy' })
    const app = await startApp(kind, guard, 0)
    try {
      await waitFor(() => guard.isUnderPressure())
      assert.deepEqual({ ...guard.pressure(), value: 0 }, { type: TYPE_HEAP_USED_BYTES, value: 0, threshold: 1 })
      const res = await fetch(app.url + '/light')
      assert.equal(res.status, 503)
      assert.equal(res.headers.get('retry-after'), '7')
      assert.match(res.headers.get('content-type') ?? '', /application\/json/)
      assert.deepEqual(await res.json(), { statusCode: 503, error: 'Service Unavailable', message: 'busy' })
      const status = await fetch(app.url + '/status')
      assert.equal(status.status, 503)
      const s = /** @type {any} */ (await status.json())
      assert.equal(s.status, 'under-pressure')
      assert.equal(s.healthy, false, 'the body agrees with the 503: not healthy while under pressure')
      assert.equal(s.healthCheck, null, 'no health check was given')
      assert.equal(s.pressure.type, 'heapUsedBytes')
      assert.ok(s.heapUsed > 1 && s.rss > 0 && typeof s.eventLoopDelay === 'number' && typeof s.eventLoopUtilization === 'number')
    } finally {
      guard.close()
      await app.close()
    }
    const calm = overloadProtection({ maxHeapUsedBytes: 1e12, sampleInterval: 20, exposeStatusRoute: '/healthz' })
    const app2 = await startApp(kind, calm, 0)
    try {
      await sleep(60)
      const ok = await fetch(app2.url + '/healthz?probe=1')
      assert.equal(ok.status, 200)
      const body = /** @type {any} */ (await ok.json())
      assert.equal(body.status, 'ok')
      assert.equal(body.healthy, true)
      assert.equal(body.pressure, null)
      assert.equal((await fetch(app2.url + '/light')).status, 200)
    } finally {
      calm.close()
      await app2.close()
    }
  })
}

test('a pressure handler decides: answer itself, or let the request through', async () => {
  const seen = /** @type {unknown[][]} */ ([])
  const guard = overloadProtection({
    maxRssBytes: 1,
    sampleInterval: 20,
    pressureHandler: (req, res, type, value) => {
      seen.push([type, typeof value])
      if (req.url === '/light') return // degrade: let it through
      res.statusCode = 429
      res.end('slow down')
    }
  })
  const app = await startApp('express', guard, 0)
  try {
    await waitFor(() => guard.isUnderPressure())
    const refused = await fetch(app.url + '/')
    assert.equal(refused.status, 429)
    assert.equal(await refused.text(), 'slow down')
    assert.equal((await fetch(app.url + '/light')).status, 200)
    assert.deepEqual(seen[0], ['rssBytes', 'number'])
  } finally {
    guard.close()
    await app.close()
  }
  // async handlers in Fastify and Koa, and a throwing one that falls back to 503
  for (const kind of /** @type {const} */ (['fastify', 'koa'])) {
    const g = overloadProtection({
      maxRssBytes: 1,
      sampleInterval: 20,
      pressureHandler: async (/** @type {any[]} */ ...args) => {
        await sleep(1)
        if (kind === 'fastify') args[1].code(429).send('fastify says wait')
        else args[0].status = 429
      }
    })
    const a = await startApp(kind, g, 0)
    try {
      await waitFor(() => g.isUnderPressure())
      assert.equal((await fetch(a.url + '/light')).status, 429, kind)
    } finally {
      g.close()
      await a.close()
    }
  }
  const throwing = overloadProtection({ maxRssBytes: 1, sampleInterval: 20, pressureHandler: () => { throw new Error('handler bug') } })
  const a = await startApp('http', throwing, 0)
  try {
    await waitFor(() => throwing.isUnderPressure())
    assert.equal((await fetch(a.url + '/light')).status, 503)
  } finally {
    throwing.close()
    await a.close()
  }
})

test('a failing health check refuses work until it passes again; a shared monitor keeps running after close', async () => {
  let healthy = false
  const m = monitor({ interval: 20 })
  const guard = overloadProtection({ monitor: m, healthCheck: async () => healthy, healthCheckInterval: 20, exposeStatusRoute: true })
  const app = await startApp('koa', guard, 0)
  try {
    await waitFor(() => guard.isUnderPressure())
    assert.equal(guard.pressure()?.type, TYPE_HEALTH_CHECK)
    assert.equal((await fetch(app.url + '/light')).status, 503)
    const res = await fetch(app.url + '/status')
    assert.equal(res.status, 503)
    const status = /** @type {any} */ (await res.json())
    assert.equal(status.healthy, false)
    assert.equal(status.healthCheck, false)
    assert.equal(status.status, 'under-pressure')
    healthy = true
    await waitFor(() => !guard.isUnderPressure())
    assert.equal((await fetch(app.url + '/light')).status, 200)
  } finally {
    guard.close()
    await app.close()
  }
  assert.equal(m.running, true, 'a monitor passed in belongs to the caller')
  m.stop()
  // a health check that throws counts as unhealthy, not as a crash
  const g = overloadProtection({ healthCheck: () => { throw new Error('db down') }, healthCheckInterval: 20 })
  try {
    assert.equal(g.isUnderPressure(), true)
  } finally {
    g.close()
  }
})

test('no threshold means never under pressure', async () => {
  const guard = overloadProtection({ sampleInterval: 20 })
  try {
    await sleep(60)
    assert.equal(guard.isUnderPressure(), false)
    assert.equal(guard.status().status, 'ok')
    assert.equal(guard.status().healthy, true)
  } finally {
    guard.close()
  }
  overloadProtection().close()
})
