// hotpath load through its public API, against real servers on 127.0.0.1: what it reports must match what the server
// saw, and latencies must match servers with known delays.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { load, mergeResults } from 'hotpath'
import { countRequests, httpServer, rawServer } from './helpers/servers.js'

const ok = (/** @type {import('node:http').ServerResponse} */ res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 })
  res.end('ok')
}

test('an amount of requests: counts match what the server saw', async () => {
  const server = await httpServer((req, res) => ok(res))
  try {
    const r = await load({ url: server.url, connections: 10, amount: 3000 })
    assert.equal(server.seen.requests, 3000)
    assert.equal(r.requests.total, 3000)
    assert.equal(r.requests.sent, 3000)
    assert.equal(r['2xx'], 3000)
    assert.equal(r.statusCodeStats['200'].count, 3000)
    assert.equal(r.latency.totalCount, 3000)
    assert.equal(r.errors, 0)
    assert.equal(r.non2xx, 0)
    assert.equal(r.failed, null, 'the load measured what was asked')
    assert.equal(server.seen.connections, 10 + 1, 'ten load connections and the reachability check')
    // autocannon's field names, so existing tooling reads the result
    for (const key of ['url', 'connections', 'pipelining', 'duration', 'start', 'finish', 'errors', 'timeouts', 'non2xx', '1xx', '2xx', '3xx', '4xx', '5xx', 'latency', 'requests', 'throughput', 'statusCodeStats']) {
      assert.ok(key in r, `result has ${key}`)
    }
    for (const key of ['average', 'mean', 'stddev', 'min', 'max', 'p50', 'p90', 'p97_5', 'p99', 'p99_9', 'p99_99']) {
      assert.equal(typeof r.latency[/** @type {'p50'} */ (key)], 'number', `latency.${key}`)
    }
    assert.ok(r.throughput.total >= 3000 * 2, 'bytes counted')
    assert.equal(typeof r.hotpath.shard.histogram, 'string')
  } finally {
    await server.close()
  }
})

test('a duration: the run lasts as long as asked and every response is counted', async () => {
  const server = await httpServer((req, res) => ok(res))
  try {
    const started = Date.now()
    const r = await load({ url: server.url, connections: 4, duration: 1.5 })
    const elapsed = (Date.now() - started) / 1000
    assert.ok(r.duration >= 1.45 && r.duration <= 1.7, `measured ${r.duration} s`)
    assert.ok(elapsed < 3, `returned after ${elapsed} s`)
    assert.ok(r.requests.total > 100)
    // the server saw every counted request, plus at most the ones in flight when the run ended
    assert.ok(server.seen.requests >= r.requests.total && server.seen.requests <= r.requests.total + 4,
      `server ${server.seen.requests}, counted ${r.requests.total}`)
    assert.ok(r.samples >= 1)
  } finally {
    await server.close()
  }
})

test('percentiles match a server with known delays, with microsecond resolution', async () => {
  // every 10th request waits 60 ms, the others 15 ms (Node timers count from the loop's cached clock, so they may
  // fire up to a millisecond early in wall time)
  const server = await httpServer((req, res, n) => setTimeout(() => ok(res), n % 10 === 0 ? 60 : 15))
  try {
    const r = await load({ url: server.url, connections: 10, amount: 600 })
    assert.ok(r.latency.min >= 13.5, `min ${r.latency.min}`)
    // upper bounds leave room for late timers on a busy machine; the lower bounds are what a wrong clock would break
    assert.ok(r.latency.p50 >= 13.5 && r.latency.p50 < 35, `p50 ${r.latency.p50}`)
    assert.ok(r.latency.p99 >= 58.5 && r.latency.p99 < 100, `p99 ${r.latency.p99}`)
    assert.ok(r.latency.max < 150, `max ${r.latency.max}`)
    // whole milliseconds would hide the sub-millisecond part every one of these has
    assert.ok(!Number.isInteger(r.latency.p50) || !Number.isInteger(r.latency.p99), 'sub-millisecond precision')
  } finally {
    await server.close()
  }
  const fast = await httpServer((req, res) => ok(res))
  try {
    const r = await load({ url: fast.url, connections: 1, amount: 500 })
    assert.ok(r.latency.min > 0 && r.latency.min < 1, `a fast server is measured below 1 ms: ${r.latency.min}`)
  } finally {
    await fast.close()
  }
})

test('rate mode holds its rate, spread over connections', async () => {
  const server = await httpServer((req, res) => ok(res))
  try {
    const r = await load({ url: server.url, connections: 4, rate: 400, duration: 2 })
    assert.ok(r.hotpath.rate)
    assert.equal(r.hotpath.rate.asked, 400)
    assert.ok(Math.abs(r.hotpath.rate.achieved - 400) <= 4, `achieved ${r.hotpath.rate.achieved} req/s`)
    assert.equal(r.hotpath.rate.keptUp, true)
    assert.equal(r.hotpath.rate.missed, 0)
    assert.ok(Math.abs(server.seen.requests - 800) <= 6, `server saw ${server.seen.requests}`)
    assert.ok(r.hotpath.uncorrectedLatency, 'uncorrected latency reported beside the corrected one')
  } finally {
    await server.close()
  }
})

test('rate mode says so when the server cannot keep up', async () => {
  const server = await httpServer((req, res) => setTimeout(() => ok(res), 50))
  try {
    // two connections at 50 ms each carry at most 40 req/s
    const r = await load({ url: server.url, connections: 2, rate: 200, duration: 1.5 })
    assert.ok(r.hotpath.rate)
    assert.equal(r.hotpath.rate.keptUp, false)
    assert.ok(r.hotpath.rate.achieved < 50, `achieved ${r.hotpath.rate.achieved}`)
    assert.ok(r.hotpath.rate.missed > 100, `missed ${r.hotpath.rate.missed}`)
  } finally {
    await server.close()
  }
})

test('rate mode removes coordinated omission: p99 matches a server that stalls for a known time', async () => {
  // The server's event loop stalls 200 ms out of every 1000. At a constant arrival rate a fifth of all requests arrive
  // during a stall and wait for its end: their latencies spread evenly over 0–200 ms, so the true p99 is
  // 200 × (1 − 0.01 / 0.2) = 190 ms. A closed-loop measurement sees only the few requests in flight at the stall.
  const server = await httpServer((req, res) => ok(res))
  const stall = setInterval(() => { const end = Date.now() + 200; while (Date.now() < end); }, 1000)
  try {
    const r = await load({ url: server.url, connections: 2, rate: 500, duration: 4 })
    const u = /** @type {NonNullable<typeof r.hotpath.uncorrectedLatency>} */ (r.hotpath.uncorrectedLatency)
    assert.ok(r.latency.p99 > 150 && r.latency.p99 < 230, `corrected p99 ${r.latency.p99} ms, expected about 190`)
    assert.ok(r.latency.max >= 190 && r.latency.max < 260, `max ${r.latency.max}`)
    assert.ok(u.p99 < r.latency.p99 / 4, `uncorrected p99 ${u.p99} ms hides the stalls`)
  } finally {
    clearInterval(stall)
    await server.close()
  }
})

test('pipelining keeps several requests in flight per connection', async () => {
  let maxBatch = 0
  const server = await rawServer((socket, data, seen) => {
    const n = countRequests(data)
    seen.requests += n
    maxBatch = Math.max(maxBatch, n)
    socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'.repeat(n))
  })
  try {
    const r = await load({ url: server.url, connections: 2, pipelining: 8, amount: 2000 })
    assert.equal(r.requests.total, 2000)
    assert.equal(server.seen.requests, 2000)
    assert.equal(r.errors, 0)
    assert.ok(maxBatch > 1, `server received up to ${maxBatch} requests at once`)
    assert.ok(maxBatch <= 8)
  } finally {
    await server.close()
  }
})

test('servers that close keep-alive connections: reconnect and count it, no errors', async () => {
  const server = await httpServer((req, res, n) => {
    res.writeHead(200, { 'content-length': 2, ...(n % 10 === 0 ? { connection: 'close' } : {}) })
    res.end('ok')
  })
  try {
    const r = await load({ url: server.url, connections: 2, amount: 500 })
    assert.equal(r.requests.total, 500)
    assert.equal(r.errors, 0)
    assert.ok(r.hotpath.reconnects >= 45, `reconnects ${r.hotpath.reconnects}`)
    assert.ok(server.seen.connections >= 45)
  } finally {
    await server.close()
  }
})

test('chunked responses, HEAD, 204 and 304 are framed right', async () => {
  const server = await httpServer((req, res) => {
    if (req.url === '/chunked') {
      res.write('part one,')
      setImmediate(() => res.end('part two'))
    } else if (req.url === '/204') {
      res.writeHead(204).end()
    } else if (req.url === '/304') {
      res.writeHead(304, { etag: '"x"' }).end()
    } else {
      res.writeHead(200, { 'content-length': 1000 }).end(req.method === 'HEAD' ? undefined : 'x'.repeat(1000))
    }
  })
  try {
    // one connection, so the round-robin order gives each request exactly a quarter
    const r = await load({
      url: server.url,
      connections: 1,
      pipelining: 4,
      amount: 400,
      timeout: 2,
      requests: [{ path: '/chunked' }, { method: 'HEAD', path: '/head' }, { path: '/204' }, { path: '/304' }]
    })
    assert.equal(r.errors, 0)
    assert.equal(r.timeouts, 0)
    assert.equal(r.requests.total, 400)
    assert.equal(server.seen.methods.HEAD, 100)
    assert.equal(server.seen.paths['/chunked'], 100)
    assert.equal(r.statusCodeStats['204'].count, 100)
    assert.equal(r.statusCodeStats['304'].count, 100)
    assert.equal(r['3xx'], 100)
    assert.equal(r.non2xx, 100)
  } finally {
    await server.close()
  }
})

test('https with a self-signed certificate', async () => {
  const server = await httpServer((req, res) => ok(res), { tls: true })
  try {
    const r = await load({ url: server.url, connections: 4, amount: 500 })
    assert.equal(r.requests.total, 500)
    assert.equal(server.seen.requests, 500)
    assert.equal(r.errors, 0)
  } finally {
    await server.close()
  }
})

test('a unix socket', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-test-'))
  const socketPath = join(dir, 'server.sock')
  const server = await httpServer((req, res) => ok(res), { socketPath })
  try {
    const r = await load({ url: 'http://localhost/', socketPath, connections: 2, amount: 300 })
    assert.equal(r.requests.total, 300)
    assert.equal(server.seen.requests, 300)
    assert.equal(r.socketPath, socketPath)
  } finally {
    await server.close()
  }
})

test('methods, headers, bodies and a round-robin request list arrive as sent', async () => {
  const server = await httpServer((req, res) => ok(res), { keepBodies: true })
  try {
    await load({ url: server.url, connections: 1, amount: 3, method: 'POST', headers: ['X-Test: yes', 'Authorization: Bearer t'], body: 'hello' })
    assert.equal(server.seen.methods.POST, 3)
    assert.equal(server.seen.bodies[0], 'hello')
    assert.equal(server.seen.headers[0]['x-test'], 'yes')
    assert.equal(server.seen.headers[0].authorization, 'Bearer t')
    assert.equal(server.seen.headers[0]['content-length'], '5')

    const list = await httpServer((req, res) => ok(res), { keepBodies: true })
    try {
      await load({
        url: list.url,
        connections: 2,
        amount: 90,
        headers: { 'X-Common': '1' },
        requests: [
          { path: '/a' },
          { method: 'PUT', path: '/b?x=1', body: { json: true }, headers: { 'X-Own': '2' } },
          { method: 'DELETE', path: '/c' }
        ]
      })
      assert.deepEqual(list.seen.paths, { '/a': 30, '/b?x=1': 30, '/c': 30 })
      const put = list.seen.headers.findIndex(h => h['x-own'] === '2')
      assert.ok(put !== -1)
      assert.equal(list.seen.bodies[put], '{"json":true}')
      assert.equal(list.seen.headers[put]['content-type'], 'application/json')
      assert.ok(list.seen.headers.every(h => h['x-common'] === '1'))
    } finally {
      await list.close()
    }
  } finally {
    await server.close()
  }
})

test('garbage responses are counted as errors, each once, never a crash; the result says the load failed', async () => {
  const server = await rawServer((socket) => { socket.write('SSH-2.0-nope\r\n\r\n') })
  try {
    const r = await load({ url: server.url, connections: 2, duration: 0.5 })
    assert.equal(r.requests.total, 0)
    assert.ok(r.errors > 0)
    assert.deepEqual(r.hotpath.errorKinds, { 'malformed status line': r.errors }, 'not also closed by server')
    assert.equal(r.resets, 0)
    assert.equal(r.failed?.reason, 'no-http')
  } finally {
    await server.close()
  }
})

test('connections reset mid-request are counted as resets and reopened', async () => {
  const server = await rawServer((socket, data, seen) => {
    seen.requests++
    if (seen.requests % 2 === 0) socket.resetAndDestroy()
    else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
  })
  try {
    const r = await load({ url: server.url, connections: 2, duration: 0.8 })
    assert.ok(r.requests.total > 10)
    assert.ok(r.resets > 10, `resets ${r.resets}`)
    assert.ok(r.errors >= r.resets)
    assert.ok(r.hotpath.reconnects >= r.resets)
  } finally {
    await server.close()
  }
})

test('requests that get no answer time out, and are counted', async () => {
  const server = await rawServer(() => {})
  try {
    const r = await load({ url: server.url, connections: 2, duration: 1, timeout: 0.25 })
    assert.ok(r.timeouts >= 4, `timeouts ${r.timeouts}`)
    assert.equal(r.hotpath.errorKinds.timeout, r.timeouts)
    assert.equal(r.errors, r.timeouts, 'a timed-out request is not also a close')
    assert.equal(r.requests.total, 0)
    assert.equal(r.failed?.reason, 'no-response')
  } finally {
    await server.close()
  }
})

test('worker threads share the connections and their results merge exactly', async () => {
  const server = await httpServer((req, res) => ok(res))
  try {
    const r = await load({ url: server.url, connections: 4, workers: 2, amount: 2000 })
    assert.equal(r.workers, 2)
    assert.equal(r.requests.total, 2000)
    assert.equal(server.seen.requests, 2000)
    assert.equal(r.latency.totalCount, 2000)
    assert.equal(server.seen.connections, 4 + 1, 'four load connections and the reachability check')
  } finally {
    await server.close()
  }
})

test('runs split across machines merge into one: counts add, histograms add exactly', async () => {
  const server = await httpServer((req, res, n) => setTimeout(() => ok(res), n % 4))
  try {
    const [a, b] = await Promise.all([
      load({ url: server.url, connections: 2, amount: 400 }),
      load({ url: server.url, connections: 3, amount: 600 })
    ])
    const merged = mergeResults([a, b])
    assert.equal(merged.requests.total, 1000)
    assert.equal(merged.latency.totalCount, 1000)
    assert.equal(merged.connections, 5)
    assert.equal(merged.hotpath.options.machines, 2)
    assert.equal(merged.latency.max, Math.max(a.latency.max, b.latency.max))
    assert.equal(merged.latency.min, Math.min(a.latency.min, b.latency.min))
    const lo = Math.min(a.latency.p50, b.latency.p50)
    const hi = Math.max(a.latency.p50, b.latency.p50)
    assert.ok(merged.latency.p50 >= lo && merged.latency.p50 <= hi)
    // merging is associative: a merged result merges again like the originals
    const again = mergeResults([merged, a])
    assert.equal(again.latency.totalCount, 1400)
  } finally {
    await server.close()
  }
})

test('asked to, reads are coalesced only where the wait is small beside the latency, and the result says by how much', async () => {
  const slow = await httpServer((req, res) => setTimeout(() => ok(res), 20))
  try {
    const r = await load({ url: slow.url, connections: 10, duration: 1, coalesce: true })
    assert.ok(r.hotpath.maxNapUs > 0 && r.hotpath.maxNapUs <= 50, `nap ${r.hotpath.maxNapUs} µs on 20 ms responses`)
    assert.ok(r.latency.min >= 18.5, `min ${r.latency.min}`)
    assert.equal(r.errors, 0)
  } finally {
    await slow.close()
  }
  const fast = await httpServer((req, res) => ok(res))
  try {
    // responses in well under 200 µs (0 on a quiet machine): a 50 µs nap would be a large part of each latency
    const r = await load({ url: fast.url, connections: 1, duration: 0.5, coalesce: true })
    assert.ok(r.hotpath.maxNapUs <= 0.06 * r.latency.p99 * 1000, `nap ${r.hotpath.maxNapUs} µs, p99 ${r.latency.p99} ms`)
  } finally {
    await fast.close()
  }
})

test('busy-poll mode measures the same, and goes back to sleep when responses stop', async () => {
  const server = await httpServer((req, res) => ok(res))
  try {
    const r = await load({ url: server.url, connections: 4, pipelining: 4, amount: 2000, busyPoll: true })
    assert.equal(r.requests.total, 2000)
    assert.equal(server.seen.requests, 2000)
    assert.equal(r.hotpath.options.busyPoll, true)
    // an open loop at a low rate leaves long gaps: the generator must sleep through them, not spin
    const before = process.cpuUsage()
    await load({ url: server.url, connections: 1, rate: 20, duration: 1, busyPoll: true })
    const used = process.cpuUsage(before)
    assert.ok((used.user + used.system) / 1000 < 600, `slept between responses: ${(used.user + used.system) / 1000} ms of CPU in 1 s`)
  } finally {
    await server.close()
  }
})

test('warm-up load is not counted', async () => {
  const server = await httpServer((req, res) => ok(res))
  try {
    const r = await load({ url: server.url, connections: 2, duration: 0.5, warmup: 0.5 })
    assert.ok(r.requests.total > 0)
    assert.ok(server.seen.requests > r.requests.total * 1.3, `server ${server.seen.requests}, counted ${r.requests.total}`)
    assert.ok(r.duration < 0.7)
  } finally {
    await server.close()
  }
})

test('an aborted run resolves with what was measured', async () => {
  const server = await httpServer((req, res) => ok(res))
  try {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 400)
    const r = await load({ url: server.url, connections: 2, duration: 30, signal: controller.signal })
    assert.ok(r.duration < 1, `stopped after ${r.duration} s`)
    assert.ok(r.requests.total > 0)
  } finally {
    await server.close()
  }
})

test('bad options are rejected before any load, with a clear message', async () => {
  await assert.rejects(load({ url: 'not a url' }), /invalid URL 'not a url'/)
  await assert.rejects(load({ url: 'ftp://127.0.0.1/' }), /unsupported protocol/)
  await assert.rejects(load({ url: 'http://127.0.0.1:1/', connections: 0 }), /connections must be a positive integer/)
  await assert.rejects(load({ url: 'http://127.0.0.1:1/', rate: -5 }), /rate must be a positive number/)
  await assert.rejects(load({ url: 'http://127.0.0.1:1/', connections: 2, workers: 3 }), /workers \(3\) cannot exceed connections \(2\)/)
  await assert.rejects(load({ url: 'http://127.0.0.1:1/', headers: ['no colon'] }), /header must look like 'Name: value'/)
  await assert.rejects(load({ url: 'http://127.0.0.1:1/' }), /cannot reach 127\.0\.0\.1:1: ECONNREFUSED/)
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-test-'))
  await writeFile(join(dir, 'x'), '')
  await assert.rejects(load({ url: 'http://127.0.0.1:1/', socketPath: join(dir, 'x') }), /cannot reach/)
})
