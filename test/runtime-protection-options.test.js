// Every option of monitor(), overloadProtection(), its adapters and registerMetrics() is checked when the API is
// called: a misspelt key or a wrong type is one TypeError naming the API and the key — never silence, which in
// production means a server left unprotected for months. The British spelling hotpath prints is an alias.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import client from 'prom-client'
import { Monitor, monitor, OverloadProtection, overloadProtection, registerMetrics, TYPE_EVENT_LOOP_UTILIZATION } from 'hotpath/runtime'

/**
 * @param {() => unknown} call
 * @param {string | RegExp} message
 */
function refused (call, message) {
  assert.throws(call, (/** @type {unknown} */ err) => {
    assert.ok(err instanceof TypeError, `a TypeError, got ${String(err)}`)
    if (typeof message === 'string') assert.equal(err.message, message)
    else assert.match(err.message, message)
    return true
  })
}

test('maxEventLoopUtilisation (British spelling) protects like maxEventLoopUtilization', async () => {
  const guard = overloadProtection({ maxEventLoopUtilisation: 0.5, sampleInterval: 50 })
  try {
    // keep the loop busy over several samples
    const end = Date.now() + 400
    while (Date.now() < end) {
      const slice = Date.now() + 40
      while (Date.now() < slice);
      await sleep(1)
      if (guard.isUnderPressure()) break
    }
    assert.equal(guard.pressure()?.type, TYPE_EVENT_LOOP_UTILIZATION)
    assert.equal(guard.pressure()?.threshold, 0.5)
  } finally {
    guard.close()
  }
  refused(() => overloadProtection({ maxEventLoopUtilization: 0.9, maxEventLoopUtilisation: 0.8 }),
    'overloadProtection(): maxEventLoopUtilization and maxEventLoopUtilisation are one option, given twice with different values')
  overloadProtection({ maxEventLoopUtilization: 0.9, maxEventLoopUtilisation: 0.9 }).close()
})

test('overloadProtection() and new OverloadProtection(): unknown keys and wrong types are one TypeError', () => {
  refused(() => overloadProtection(/** @type {any} */ ({ monitor: {} })), 'overloadProtection(): monitor must be a Monitor (from monitor()), got an object')
  refused(() => overloadProtection(/** @type {any} */ ({ healthCheck: 'notfn' })), 'overloadProtection(): healthCheck must be a function, got "notfn"')
  refused(() => new OverloadProtection(/** @type {any} */ ({ maxEventLoopDelay: 'fast' })), 'overloadProtection(): maxEventLoopDelay must be 0 or a positive number of ms, got "fast"')
  refused(() => overloadProtection(/** @type {any} */ ({ maxEventloopDelay: 100 })), "overloadProtection(): unknown option 'maxEventloopDelay' (did you mean 'maxEventLoopDelay'?)")
  refused(() => overloadProtection(/** @type {any} */ ({ maxEventLoopUtilization: 1.5 })), 'overloadProtection(): maxEventLoopUtilization must be a number from 0 to 1, got 1.5')
  refused(() => overloadProtection(/** @type {any} */ ({ retryAfter: -1 })), 'overloadProtection(): retryAfter must be a positive number of seconds, got -1')
  refused(() => overloadProtection(/** @type {any} */ ({ exposeStatusRoute: 'status' })), /exposeStatusRoute must be true, false or a path starting with '\/', got "status"/)
  refused(() => overloadProtection(/** @type {any} */ ({ pressureHandler: 1 })), 'overloadProtection(): pressureHandler must be a function, got 1')
  refused(() => overloadProtection(/** @type {any} */ ('x')), 'overloadProtection(): options must be an object, got "x"')
  refused(() => overloadProtection(/** @type {any} */ ({ sampleInterval: 0 })), /sampleInterval must be a positive number of ms/)
  // a shared monitor is accepted, and a threshold of 0 is off
  const m = monitor({ interval: 1000 })
  overloadProtection({ monitor: m, maxEventLoopDelay: 0, exposeStatusRoute: false }).close()
  m.stop()
})

test('the adapters: no handler, or options in the wrong place, is a TypeError', async () => {
  const guard = overloadProtection()
  try {
    refused(() => guard.http(/** @type {any} */ (undefined)), 'guard.http(): the argument must be your request handler, a function; got undefined')
    refused(() => /** @type {any} */ (guard).express({ maxEventLoopDelay: 1 }), 'guard.express(): takes no options; give them to overloadProtection()')
    refused(() => /** @type {any} */ (guard).koa({}), 'guard.koa(): takes no options; give them to overloadProtection()')
    refused(() => /** @type {any} */ (guard).fastify({ retryAfter: 1 }), 'guard.fastify(): takes no options; give them to overloadProtection()')
    // Fastify's own way of passing options to a plugin
    const app = Fastify()
    await assert.rejects(async () => { await app.register(guard.fastify(), /** @type {any} */ ({ maxEventLoopDelay: 100 })) }, {
      name: 'TypeError',
      message: "guard.fastify(): register() was given 'maxEventLoopDelay'; give options to overloadProtection()"
    })
    await app.close()
    // and the right way still serves
    const ok = Fastify()
    await ok.register(guard.fastify(), { prefix: '/api' })
    ok.get('/', async () => 'ok')
    await ok.ready()
    assert.equal((await ok.inject({ url: '/' })).statusCode, 200)
    await ok.close()
    const server = http.createServer(guard.http((req, res) => res.end('ok'))).listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'ok')
    server.closeAllConnections()
    server.close()
  } finally {
    guard.close()
  }
})

test('monitor() and new Monitor(): bad options are a TypeError', () => {
  refused(() => monitor(/** @type {any} */ (42)), 'monitor(): options must be an object, got 42')
  refused(() => monitor({ interval: NaN }), 'monitor(): interval must be a positive number of ms, got NaN')
  refused(() => new Monitor({ slowInterval: -1 }), 'monitor(): slowInterval must be a positive number of ms, got -1')
  refused(() => new Monitor(/** @type {any} */ ({ intervl: 100 })), "monitor(): unknown option 'intervl' (did you mean 'interval'?)")
  new Monitor({ interval: 100 }).stop()
})

test('registerMetrics(): a registry that is not one, and bad options, are a TypeError', () => {
  const registry = new client.Registry()
  refused(() => registerMetrics(/** @type {any} */ (null)), /registerMetrics\(\): the first argument must be a prom-client Registry/)
  refused(() => registerMetrics(registry, /** @type {any} */ ('opts')), 'registerMetrics(): options must be an object, got "opts"')
  refused(() => registerMetrics(registry, { prefix: 'bad prefix ' }), /registerMetrics\(\): prefix must be letters, digits/)
  refused(() => registerMetrics(registry, /** @type {any} */ ({ monitor: {} })), 'registerMetrics(): monitor must be a Monitor (from monitor()), got an object')
  refused(() => registerMetrics(registry, /** @type {any} */ ({ listeners: { treshold: 5 } })), "registerMetrics() listeners: unknown option 'treshold' (did you mean 'threshold'?)")
  refused(() => registerMetrics(registry, /** @type {any} */ ({ listeners: 'yes' })), /listeners must be true, false or \{ threshold, settle \}/)
  refused(() => registerMetrics(registry, /** @type {any} */ ({ agent: false })), "registerMetrics(): unknown option 'agent' (did you mean 'agents'?)")
  assert.equal(registry.getMetricsAsArray().length, 0, 'nothing registered by a refused call')
})
