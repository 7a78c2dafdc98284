// hotpath/runtime lives in other people's production processes: everything left on must let the process exit, and
// no input, however wrong, may throw into the app.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runModule } from './helpers/child.js'

test('monitor, protection, metrics and watchers all left running: the process still exits on its own', async () => {
  const r = await runModule(`
    import http from 'node:http'
    import client from 'prom-client'
    import { monitor, overloadProtection, registerMetrics, Sampler, ListenerWatcher, AgentWatcher } from 'hotpath/runtime'
    const m = monitor({ interval: 10 })
    // (a limit no start-up reaches: a module load on a busy machine held the loop past 100 ms once, and the request
    // was refused — what is tested is that the process exits, not the limit)
    const guard = overloadProtection({ monitor: m, maxEventLoopDelay: 10000, healthCheck: async () => true, healthCheckInterval: 10 })
    overloadProtection({ sampleInterval: 10, maxRssBytes: 1 })
    registerMetrics(new client.Registry(), { monitor: m })
    new Sampler({ interval: 5 }).start()
    new ListenerWatcher().start()
    new AgentWatcher().start()
    // a server that served a request and closed
    const server = http.createServer(guard.http((req, res) => res.end('ok'))).listen(0, '127.0.0.1', () => {
      http.get('http://127.0.0.1:' + server.address().port + '/', (res) => {
        res.resume()
        res.on('end', () => { server.close(); console.log('served', res.statusCode) })
      })
    })
  `)
  assert.equal(r.timedOut, false, 'exited on its own')
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /served 200/)
})

test('wrong input: a TypeError at the call for a bad option, warnings for the rest, never a throw later', async () => {
  const r = await runModule(`
    import client from 'prom-client'
    import * as rt from 'hotpath/runtime'
    const tolerated = [
      () => new rt.Sampler('fast').sample(),
      () => new rt.Sampler({ interval: Infinity, onSample: 'no' }).start(),
      () => new rt.ListenerWatcher(null).snapshot(),
      () => new rt.ListenerWatcher({ threshold: 'ten' }).start(),
      () => new rt.AgentWatcher().snapshot(),
      () => rt.monitor({ interval: 5 }).snapshot().totals.gc.byKind.scavenge.count
    ]
    const refused = [
      () => rt.monitor(42).stop(),
      () => rt.monitor({ interval: NaN, slowInterval: -1 }).stop(),
      () => rt.overloadProtection('x').close(),
      () => rt.overloadProtection({ maxHeapUsedBytes: -5, maxEventLoopUtilization: {}, monitor: {}, pressureHandler: 1, healthCheck: 'y' }).close(),
      () => rt.overloadProtection().http(undefined),
      () => rt.registerMetrics(null).close(),
      () => rt.registerMetrics(new client.Registry(), 'opts').close(),
      () => rt.registerMetrics(new client.Registry(), { prefix: 'bad prefix ' }).close()
    ]
    let threw = 0
    for (const call of tolerated) {
      try { call() } catch (err) { threw++; console.log('threw', err.message) }
    }
    let typeErrors = 0
    for (const call of refused) {
      try { call() } catch (err) { if (err instanceof TypeError && !err.message.includes('\\n')) typeErrors++ }
    }
    console.log('threw', threw, 'of', tolerated.length, 'type errors', typeErrors, 'of', refused.length)
    setTimeout(() => console.log('still alive'), 50)
  `)
  assert.equal(r.timedOut, false)
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /threw 0 of 6 type errors 8 of 8/)
  assert.match(r.stdout, /still alive/, 'nothing thrown later, from a timer')
  assert.match(r.stderr, /HotpathWarning/)
})
