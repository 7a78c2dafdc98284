// hotpath doctor on servers that wait, through the CLI as a user runs it: a real PostgreSQL and Redis (Debian's
// packages, started here in temporary directories and stopped by PID) driven by the drivers people use (pg, ioredis),
// a home-made line protocol, timers and worker threads. The first culprit of each is the line the requests wait at,
// with what they wait on, how often and for how long; an N+1 is called one, and a pool too small is blamed where it is
// created.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assertSchema } from './helpers/schema.js'
import { hotpath } from './helpers/cli.js'
import { lineOf } from './helpers/source-lines.js'
import { backendsEnv, stopBackends } from './helpers/backends.js'
import { exampleRun } from './helpers/example-runs.js'
import { missing } from '../examples/backends/backends.js'
import { startLineStore } from '../bench/lib/line-protocol.js'

/**
 * Runs doctor on a server and returns its JSON diagnosis and terminal output.
 * @param {string} file the server, relative to the repository
 * @param {Record<string, string>} env
 * @param {string[]} [extra]
 */
async function doctor (file, env, extra = []) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-waits-'))
  const json = join(dir, 'diagnosis.json')
  const r = await hotpath(['doctor', '-d', '4', '--no-progress', '--save', join(dir, 'run'), '--json', json, ...extra, '--', process.execPath, file], { env: { PORT: '0', ...env }, timeout: 120000, alone: true })
  assert.equal(r.code, 0, `doctor exited ${r.code}\n${r.stderr}\n${r.stdout}`)
  const d = JSON.parse(await readFile(json, 'utf8'))
  assertSchema('doctor', d)
  return { d, out: r.stdout }
}

/**
 * Asserts that a culprit blames this line for waiting, and returns its wait facts.
 * @param {any} c
 * @param {string} file
 * @param {number} line
 */
function assertWaitCulprit (c, file, line) {
  assert.ok(c, 'there is a culprit')
  assert.equal(c.measure, 'waits', JSON.stringify(c))
  assert.equal(c.file, file)
  assert.equal(c.line, line, `blamed ${c.file}:${c.line} (${c.reason})`)
  assert.ok(c.share >= 0.5 && c.share <= 1, `share ${c.share}`)
  assert.ok(c.wait, 'the JSON carries the wait in numbers')
  return c.wait
}

after(stopBackends)

describe('waits on PostgreSQL and Redis', { skip: missing().postgres ?? missing().redis ?? false }, () => {
  /**
   * The example's doctor run with the backends (-d 4; small-pool -c 12), shared with report.test.js.
   * @param {string} name
   */
  async function example (name) {
    const r = await exampleRun(name, await backendsEnv())
    assert.equal(r.code, 0, `doctor exited ${r.code}\n${r.stderr}\n${r.out}`)
    assertSchema('doctor', r.d)
    return { d: r.d, out: r.out, env: r.env }
  }

  test('a session store in SQL: the line that awaits the query, with the query and its round trip', async () => {
    const file = 'examples/sql-sessions/server.js'
    const { d, out, env } = await example('sql-sessions')
    assert.equal(d.category, 'io', d.summary)
    const wait = assertWaitCulprit(d.culprits[0], file, await lineOf(file, '// the wait'))
    assert.equal(wait.resource.type, 'postgres')
    assert.match(wait.resource.op, /^SELECT … FROM sessions WHERE token = \$1$/)
    assert.equal(wait.resource.target, new URL(env.DATABASE_URL).host)
    assert.ok(Math.abs(wait.perRequest - 1) < 0.1, `one round trip a request: ${wait.perRequest}`)
    assert.ok(wait.msPerTrip > 0 && wait.msPerTrip <= wait.msPerWait * 1.05, `trip ${wait.msPerTrip} ms within the wait ${wait.msPerWait} ms`)
    assert.equal(wait.sequential, null)
    assert.match(out, /waiting on postgres SELECT … FROM sessions WHERE token = \$1/)
    // PostgreSQL's own CPU is what the server waits on, not a busy machine.
    assert.ok(d.evidence.some((/** @type {any} */ e) => e.signal === 'backend-cpu' && /postgres/.test(e.label)), 'the backend is named')
  })

  test('a cache read one key at a time: an N+1, with the loop and what one MGET would save', async () => {
    const file = 'examples/cache-n-plus-one/server.js'
    const { d, out } = await example('cache-n-plus-one')
    assert.equal(d.category, 'io', d.summary)
    const wait = assertWaitCulprit(d.culprits[0], file, await lineOf(file, '// the wait'))
    assert.equal(wait.resource.type, 'redis')
    assert.equal(wait.resource.op, 'GET')
    assert.ok(wait.perRequest >= 18 && wait.perRequest <= 22, `20 round trips a request: ${wait.perRequest}`)
    assert.ok(wait.sequential, 'one after another')
    assert.ok(wait.sequential.perRequest >= 18, `sequential ${wait.sequential.perRequest}`)
    assert.deepEqual(wait.sequential.loop && { file: wait.sequential.loop.file, line: wait.sequential.loop.line }, { file, line: await lineOf(file, '// the loop') })
    assert.ok(wait.sequential.savedMs > 0.5 * wait.msPerWait * 18, `saves most of 20 trips: ${wait.sequential.savedMs} ms`)
    assert.ok(d.evidence.some((/** @type {any} */ e) => e.signal === 'sequential-waits' && e.decisive))
    assert.match(out, /MGET/)
  })

  test('a pool too small: blamed where it is created, with its limit, then the query', async () => {
    const file = 'examples/small-pool/server.js'
    const { d, out } = await example('small-pool')
    assert.equal(d.category, 'io', d.summary)
    const pool = assertWaitCulprit(d.culprits[0], file, await lineOf(file, '// the pool'))
    assert.equal(pool.pool.connections, 2)
    assert.deepEqual(pool.pool.limit, { key: 'max', value: 2 })
    assert.ok(pool.queue.msPerWait > pool.msPerTrip, `queueing (${pool.queue.msPerWait} ms) outlasts the query (${pool.msPerTrip} ms)`)
    const query = d.culprits[1]
    assert.equal(query.measure, 'waits')
    assert.equal(query.line, await lineOf(file, '// the query'))
    assert.match(out, /too small for the concurrency/)
  })

  test('an N+1 whose query is in a helper the loop calls: the loop\'s line, called an N+1, with the batched query', async () => {
    // The tracer sees the first call's stack through the helper and the later ones' not: two sites of one query at
    // one line of the handler, told as one.
    const file = 'test/fixtures/servers/n-plus-one-helper.js'
    const { d } = await doctor(file, { DATABASE_URL: (await backendsEnv()).DATABASE_URL })
    assert.equal(d.category, 'io', d.summary)
    const wait = assertWaitCulprit(d.culprits[0], file, await lineOf(file, '// the loop'))
    assert.equal(wait.resource.type, 'postgres')
    assert.ok(wait.sequential && wait.sequential.perRequest >= 6, `one after another: ${JSON.stringify(wait.sequential)}`)
    const advice = d.facts.recommendations.find((/** @type {any} */ r) => r.kind === 'n-plus-one')
    assert.ok(advice, JSON.stringify(d.facts.recommendations.map((/** @type {any} */ r) => r.kind)))
    assert.match(d.recommendations.join('\n'), /: an N\+1\. One query with WHERE id IN \(…\) or = ANY\(\$1\) would save/)
  })

  test('an ORM\'s N+1 on a loop it saturates: too busy to trace in the window, its queries are counted after it', async () => {
    // Sequelize's CPU for each query, not PostgreSQL, is what runs out: the verdict is the loop's, and the advice that
    // comes first is the line that makes a query per order, in its loop.
    const file = 'test/fixtures/servers/orm-n-plus-one.js'
    const { d } = await doctor(file, { DATABASE_URL: (await backendsEnv()).DATABASE_URL })
    assert.equal(d.category, 'event-loop', d.summary)
    const [first] = d.facts.recommendations
    assert.equal(first.kind, 'fewer-calls', JSON.stringify(d.facts.recommendations.map((/** @type {any} */ r) => r.kind)))
    const most = first.calls.most
    assert.deepEqual([most.file, most.line], [file, await lineOf(file, '// the query')])
    assert.deepEqual(most.loop, { file, line: await lineOf(file, '// the loop') })
    // 500 orders of 40 customers: 12 or 13 an order list, and the list's own query.
    assert.ok(most.perRequest >= 10 && most.perRequest <= 14, `${most.perRequest} a request`)
    assert.ok(first.calls.perRequest >= most.perRequest + 0.9 && first.calls.perRequest <= most.perRequest + 1.1, `${first.calls.perRequest} in all`)
    assert.deepEqual(first.calls.to, ['postgres'])
    assert.ok(first.calls.traced >= 4)
    assert.match(d.recommendations[0], /^Each request made \d+ round trips to postgres, \d+ of them at test\/fixtures\/servers\/orm-n-plus-one\.js:\d+ \(postgres SELECT … FROM "shop_order_lines" .*\), one after another in the loop at test\/fixtures\/servers\/orm-n-plus-one\.js:\d+: /)
  })
})

describe('waits on anything else', () => {
  /** @type {{ port: number, close: () => Promise<void> }} */
  let line
  let linePort = 0
  before(async () => {
    // A home-made line protocol: `GET key\n` answered 10 ms later.
    line = await startLineStore(10)
    linePort = line.port
  })
  after(() => line.close())

  const file = 'test/fixtures/servers/waits.js'
  for (const [kind, type, op] of /** @type {const} */ ([
    ['line', 'tcp', 'GET'],
    ['line-callback', 'tcp', 'GET'],
    ['timer', 'timer', 'setTimeout 30 ms'],
    ['worker', 'worker', 'message'],
    // bytes that name nothing, named by what the client announced on mysql2's tracing channel
    ['driver', 'mysql', 'SELECT name FROM users WHERE id = ?']
  ])) {
    test(`${kind}: the waiting line, and on what`, async () => {
      const { d } = await doctor(file, { WAIT: kind, LINE_PORT: String(linePort) }, ['-d', '3'])
      assert.equal(d.category, 'io', d.summary)
      const wait = assertWaitCulprit(d.culprits[0], file, await lineOf(file, `// wait: ${kind}`))
      assert.equal(wait.resource.type, type)
      assert.equal(wait.resource.op, op)
      if (type === 'tcp') assert.equal(wait.resource.target, `127.0.0.1:${linePort}`)
      assert.ok(Math.abs(wait.perRequest - 1) < 0.1, `one wait a request: ${wait.perRequest}`)
      // Requests that wait are traced all along (the tracer takes up to 25 a second), not only the first few.
      assert.ok(traced(d) >= 20, `traced ${traced(d)}`)
    })
  }

  test('a server that waits on nothing: a few requests traced show it, and the tracer then stays off', async () => {
    // At 300 requests/s the loop idles: the tracer would be on all along, and take 25 requests a second.
    const { d } = await doctor(file, { WAIT: 'none' }, ['-d', '3', '-R', '300'])
    assert.equal(d.category, 'healthy', d.summary)
    assert.ok(!d.culprits.some((/** @type {any} */ c) => c.measure === 'waits'), JSON.stringify(d.culprits))
    assert.ok(traced(d) >= 5 && traced(d) <= 15, `traced ${traced(d)}`)
  })

  test('a half-busy server whose requests end in the turn they began is not traced at all', async () => {
    // 1 ms of CPU a request at 500 requests/s: the loop is about half busy, where the tracer would run a slot in five;
    // but no request is ever in flight between two turns of the loop, so none can wait, and the hooks stay off.
    const { d } = await doctor(file, { WAIT: 'none', SPIN_MS: '1' }, ['-d', '3', '-R', '500'])
    assert.equal(traced(d), 0)
    assert.ok(!d.culprits.some((/** @type {any} */ c) => c.measure === 'waits'), JSON.stringify(d.culprits))
  })

  test('a half-busy server whose requests also wait is traced', async () => {
    const { d } = await doctor(file, { WAIT: 'timer', SPIN_MS: '1' }, ['-d', '3', '-R', '400'])
    assert.ok(traced(d) >= 5, `traced ${traced(d)}`)
    assert.ok(d.culprits.some((/** @type {any} */ c) => c.measure === 'waits'), JSON.stringify(d.culprits))
  })
})

/**
 * How many requests the wait tracer followed over the window.
 * @param {any} d doctor's JSON
 */
function traced (d) {
  return d.evidence.find((/** @type {any} */ e) => e.signal === 'waits-traced')?.value ?? 0
}
