// hotpath's runtime metrics in a real prom-client registry, scraped from a real /metrics endpoint over HTTP and parsed;
// then, where Debian's prometheus is installed, scraped by a real Prometheus server.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import client from 'prom-client'
import { monitor, registerMetrics } from 'hotpath/runtime'
import { httpServer } from './helpers/servers.js'
import { parseExposition } from './helpers/exposition.js'

/** @param {number} ms */
function block (ms) {
  const end = Date.now() + ms
  while (Date.now() < end);
}

/**
 * A /metrics endpoint for a registry.
 * @param {import('prom-client').Registry} registry
 */
async function metricsServer (registry) {
  return httpServer(async (req, res) => {
    const text = await registry.metrics()
    res.writeHead(200, { 'content-type': registry.contentType })
    res.end(text)
  })
}

/** @param {string} url */
async function scrape (url) {
  const res = await fetch(url)
  assert.equal(res.status, 200)
  return parseExposition(await res.text())
}

class RequestCache extends EventEmitter {}

test('a scrape shows event-loop delay, busy time, GC, heap spaces, listener growth and agent saturation', async () => {
  const registry = new client.Registry()
  client.collectDefaultMetrics({ register: registry })
  const m = monitor({ interval: 50 })
  const metrics = registerMetrics(registry, { monitor: m, listeners: { threshold: 10, settle: 0 }, interval: 50 })
  const endpoint = await metricsServer(registry)
  const slow = await httpServer((req, res) => setTimeout(() => res.end('slow'), 300))
  const agent = new http.Agent({ maxSockets: 2 })
  try {
    // names: Prometheus conventions, all under hotpath_, none taken from collectDefaultMetrics
    assert.ok(metrics.names.length >= 10)
    for (const name of metrics.names) {
      assert.match(name, /^hotpath_[a-z_]+$/)
      assert.ok(!name.startsWith('nodejs_') && !name.startsWith('process_'))
    }
    const before = await scrape(endpoint.url)
    block(120)
    const junk = []
    for (let i = 0; i < 300000; i++) junk.push({ i })
    // a listener leak: the count keeps rising check after check
    const cache = new RequestCache()
    cache.setMaxListeners(0)
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 12; i++) cache.on('after', () => i)
      await sleep(70)
    }
    const pending = []
    for (let i = 0; i < 5; i++) {
      pending.push(new Promise((resolve, reject) => {
        http.get(slow.url, { agent }, (res) => { res.resume(); res.on('end', resolve) }).on('error', reject)
      }))
    }
    await sleep(120)
    const s = await scrape(endpoint.url)
    assert.equal(s.types.hotpath_eventloop_delay_seconds, 'histogram')
    const stalls = (/** @type {ReturnType<typeof parseExposition>} */ x) =>
      x.get('hotpath_eventloop_delay_seconds_count') - x.get('hotpath_eventloop_delay_seconds_bucket', { le: '0.1' })
    assert.ok(stalls(s) - stalls(before) >= 1, 'the 120 ms block is a tick above 100 ms')
    assert.ok(s.get('hotpath_eventloop_delay_seconds_sum') - before.get('hotpath_eventloop_delay_seconds_sum') >= 0.1)
    assert.equal(s.types.hotpath_eventloop_busy_seconds_total, 'counter')
    const busy = s.get('hotpath_eventloop_busy_seconds_total') - before.get('hotpath_eventloop_busy_seconds_total')
    assert.ok(busy >= 0.1, `busy ${busy} s across the block`)
    assert.equal(s.types.hotpath_gc_pause_seconds_total, 'counter')
    assert.ok(s.get('hotpath_gc_runs_total', { kind: 'scavenge' }) > 0)
    assert.ok(s.get('hotpath_gc_pause_seconds_total', { kind: 'scavenge' }) > 0)
    for (const kind of ['mark-compact', 'incremental', 'weak-callbacks']) assert.ok(s.get('hotpath_gc_runs_total', { kind }) >= 0)
    assert.ok(s.get('hotpath_heap_space_used_bytes', { space: 'old_space' }) > 0)
    assert.ok(s.samples.some(x => x.name === 'hotpath_active_resources'))
    assert.equal(s.get('hotpath_event_listeners_max', { emitter: 'RequestCache', event: 'after' }), 72)
    assert.equal(s.get('hotpath_event_listeners_growing_emitters', { emitter: 'RequestCache', event: 'after' }), 1)
    const pool = { agent: 'Agent', protocol: 'http' }
    assert.equal(s.get('hotpath_http_agent_max_sockets', pool), 2)
    assert.equal(s.get('hotpath_http_agent_sockets', { ...pool, state: 'in_use' }), 2)
    assert.equal(s.get('hotpath_http_agent_queued_requests', pool), 3)
    assert.equal(s.get('hotpath_http_agent_queued_requests_max', pool), 3)
    assert.equal(s.get('hotpath_http_agent_max_sockets', { agent: 'http.globalAgent', protocol: 'http' }), Infinity)
    // collectDefaultMetrics still works beside it
    assert.ok(s.samples.some(x => x.name === 'nodejs_eventloop_lag_seconds'))
    assert.ok(junk.length > 0)
    assert.equal(cache.listenerCount('after'), 72)
    await Promise.all(pending)

    // the next scrape still has the block (running totals), and the queue's peak (over the last minute)
    await sleep(50)
    const next = await scrape(endpoint.url)
    assert.equal(stalls(next), stalls(s), 'a scrape takes nothing away from the next')
    assert.equal(next.get('hotpath_http_agent_queued_requests', pool), 0)
    assert.equal(next.get('hotpath_http_agent_queued_requests_max', pool), 3)
    assert.ok(next.get('hotpath_gc_runs_total', { kind: 'scavenge' }) >= s.get('hotpath_gc_runs_total', { kind: 'scavenge' }), 'counters only grow')

    metrics.close()
    const after = await scrape(endpoint.url)
    assert.ok(!after.samples.some(x => x.name.startsWith('hotpath_')), 'close() unregisters')
    assert.equal(m.running, true, 'a monitor passed in keeps running')
  } finally {
    metrics.close()
    m.stop()
    agent.destroy()
    await endpoint.close()
    await slow.close()
  }
})

test('registering twice is a warning, never a throw; a prefix of one\'s own', async () => {
  const registry = new client.Registry()
  const a = registerMetrics(registry, { listeners: false, agents: false })
  const b = registerMetrics(registry, { listeners: false, agents: false })
  const c = registerMetrics(registry, { prefix: 'api_', listeners: false, agents: false })
  try {
    assert.ok(a.names.length >= 6)
    assert.deepEqual(b.names, [], 'the names were taken')
    assert.ok(c.names.every(n => n.startsWith('api_')))
    assert.ok(!a.names.some(n => n.includes('listeners') || n.includes('agent')))
    const s = parseExposition(await registry.metrics())
    assert.ok(s.samples.some(x => x.name === 'api_eventloop_busy_seconds_total'))
    assert.ok(s.samples.some(x => x.name === 'api_eventloop_delay_seconds_bucket' && x.labels.le === '+Inf'))
  } finally {
    a.close()
    b.close()
    c.close()
  }
})

/** A free TCP port on 127.0.0.1. */
async function freePort () {
  const server = net.createServer()
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const { port } = /** @type {net.AddressInfo} */ (server.address())
  await new Promise(resolve => server.close(resolve))
  return port
}

const PROMETHEUS = ['/usr/bin/prometheus', '/usr/local/bin/prometheus'].find(p => existsSync(p))

test('a real Prometheus scrapes the endpoint and can query the metrics', {
  skip: PROMETHEUS === undefined ? 'prometheus is not installed (Debian: apt-get install prometheus; .ci/run does)' : false,
  timeout: 30000
}, async () => {
  const registry = new client.Registry()
  const metrics = registerMetrics(registry)
  const endpoint = await metricsServer(registry)
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-prom-'))
  const port = await freePort()
  writeFileSync(join(dir, 'prometheus.yml'), [
    'global:',
    '  scrape_interval: 1s',
    'scrape_configs:',
    '  - job_name: hotpath',
    '    static_configs:',
    `      - targets: ['127.0.0.1:${endpoint.port}']`
  ].join('\n'))
  const prom = spawn(/** @type {string} */ (PROMETHEUS), [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`
  ], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  prom.stderr.setEncoding('utf8').on('data', (c) => { log += c })
  /** @param {string} query */
  const query = async (query) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(query)}`)
    const body = /** @type {any} */ (await res.json())
    return /** @type {{ metric: Record<string, string>, value: [number, string] }[]} */ (body.data?.result ?? [])
  }
  try {
    const end = Date.now() + 20000
    /** @type {{ metric: Record<string, string>, value: [number, string] }[]} */
    let found = []
    while (Date.now() < end) {
      await sleep(300)
      try {
        found = await query('hotpath_eventloop_delay_seconds_bucket')
        if (found.length > 0) break
      } catch {} // not listening yet
    }
    assert.ok(found.length > 0, `Prometheus never stored hotpath's metrics:\n${log.slice(-2000)}`)
    assert.equal(found.length, 14, 'thirteen bounds and +Inf')
    assert.ok(found.some(r => r.metric.le === '+Inf'))
    // a histogram Prometheus can take quantiles of
    const p99 = await query('histogram_quantile(0.99, hotpath_eventloop_delay_seconds_bucket)')
    assert.equal(p99.length, 1)
    assert.ok(Number(p99[0].value[1]) >= 0)
    const targets = /** @type {any} */ (await (await fetch(`http://127.0.0.1:${port}/api/v1/targets`)).json())
    const target = targets.data.activeTargets.find((/** @type {any} */ t) => t.labels.job === 'hotpath')
    assert.equal(target.health, 'up')
    assert.equal(target.lastError, '', 'the exposition parsed without error')
    const gc = await query('hotpath_gc_runs_total')
    assert.deepEqual(gc.map(r => r.metric.kind).sort(), ['incremental', 'mark-compact', 'scavenge', 'weak-callbacks'])
    const agents = await query('hotpath_http_agent_max_sockets')
    assert.ok(agents.some(r => r.metric.agent === 'http.globalAgent' && r.value[1] === '+Inf'))
  } finally {
    prom.kill('SIGTERM')
    await new Promise(resolve => prom.once('close', resolve))
    rmSync(dir, { recursive: true, force: true })
    metrics.close()
    await endpoint.close()
  }
})
