// `doctor --observe`: no load of hotpath's, the traffic a client of the test's own sends (a CPU-bound route, one that
// waits on a real PostgreSQL, one that leaks) — doctor names each route's problem and its line, attached to a server
// started without hotpath and with a command it starts; and refuses the flags of a load it does not send.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, readFile } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath, ROOT } from './helpers/cli.js'
import { alone } from './helpers/machine.js'
import { backendsEnv, stopBackends } from './helpers/backends.js'
import { missing } from '../examples/backends/backends.js'
import { lineOf } from './helpers/source-lines.js'
import { assertSchema } from './helpers/schema.js'

const SERVER = 'test/fixtures/observed/server.js'
const TRAFFIC = 'test/fixtures/observed/traffic.js'

after(stopBackends)

/**
 * Starts a node script as a user would, without hotpath.
 * @param {string[]} args
 * @param {Record<string, string>} env
 * @param {RegExp} [ready] waited for in its output
 */
async function start (args, env, ready) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (c) => { out += c })
  child.stderr.setEncoding('utf8').on('data', (c) => { out += c })
  const match = ready === undefined
    ? null
    : await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${out}`)), 15000)
      child.stdout.on('data', () => {
        const m = ready.exec(out)
        if (m) { clearTimeout(timer); resolve(m) }
      })
      child.once('exit', () => { clearTimeout(timer); reject(new Error(`${args.join(' ')} exited: ${out}`)) })
    })
  return { child, match, output: () => out, stop: () => { if (child.exitCode === null) child.kill('SIGKILL') } }
}

/** A port free on 127.0.0.1 now. */
function freePort () {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = /** @type {import('node:net').AddressInfo} */ (s.address()).port
      s.close(() => resolve(port))
    })
  })
}

/**
 * @param {any} d the diagnosis
 * @param {string} key `GET /report`
 */
function route (d, key) {
  const r = d.routes.find((/** @type {any} */ x) => `${x.method} ${x.route}` === key)
  assert.ok(r, `route ${key} in ${d.routes.map((/** @type {any} */ x) => `${x.method} ${x.route}`).join(', ')}`)
  return r
}

describe('doctor --observe on traffic it did not send', { skip: missing().postgres ?? missing().redis ?? false }, () => {
  /** @type {Record<string, string>} */
  let env = {}
  before(async () => { env = await backendsEnv() })

  test('--attach --observe names the CPU route\'s function, the waiting route\'s query line and the leaking route\'s line, and leaves the server serving', { timeout: 180000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hotpath-observe-'))
    const [cpuLine, waitLine, leakLine] = await Promise.all(['// the CPU', '// the wait', '// the leak'].map(t => lineOf(SERVER, t)))
    await alone(async () => {
      const server = await start([SERVER], { ...env, PORT: '0' }, /127\.0\.0\.1:(\d+)\//)
      const port = Number(/** @type {RegExpExecArray} */ (server.match)[1])
      // Its own client, a request every 30 ms to the three routes in turn, until stopped.
      const traffic = await start([TRAFFIC, String(port), '600', '30'], {})
      try {
        const r = await hotpath(['doctor', '--attach', String(server.child.pid), '--observe', '5s', '--no-retainers', '--save', join(dir, 'run'), '--json', join(dir, 'd.json')], { timeout: 120000, alone: true })
        assert.equal(r.code, 0, r.stderr)
        assert.match(r.stdout.split('\n')[0], /^hotpath doctor: .* — observed real traffic, no load sent: \d+ requests in 5\.\d s/)
        assert.match(r.stderr, /observing the traffic it gets for 5 s, no load sent/)
        const d = JSON.parse(await readFile(join(dir, 'd.json'), 'utf8'))
        assertSchema('doctor', d)
        assert.equal(d.observed, true)
        assert.equal(d.load, null)
        assert.ok(d.traffic.requests >= 30, `requests counted: ${d.traffic.requests}`)
        const run = JSON.parse(await readFile(join(dir, 'run', 'run.json'), 'utf8'))
        assert.ok(run.observed.seconds >= 4.9)
        assert.equal(run.load, null)

        // Express's route pattern, not the URL with its id.
        const report = route(d, 'GET /report')
        const orders = route(d, 'GET /orders/:id')
        const track = route(d, 'GET /track')
        assert.equal(d.routes.length, 3, 'one route per pattern: the ids folded')
        for (const x of [report, orders, track]) assert.ok(x.requests >= 10 && x.meanMs > 0, JSON.stringify(x))
        assert.ok(d.routes.reduce((/** @type {number} */ a, /** @type {any} */ x) => a + x.requests, 0) <= d.traffic.requests + 3)
        // The server time of the whole window is its routes' timed requests', not Little's law over connections the
        // attached probe saw only some of (those opened before it came).
        const timed = d.routes.reduce((/** @type {number} */ a, /** @type {any} */ x) => a + x.meanMs * x.requests, 0) / d.routes.reduce((/** @type {number} */ a, /** @type {any} */ x) => a + x.requests, 0)
        const serverTime = d.evidence.find((/** @type {any} */ e) => e.signal === 'server-time')
        assert.ok(Math.abs(serverTime.value - timed) <= 0.05 * timed, `server time ${serverTime.value} ms, routes ${timed} ms`)

        /** @type {(x: any, measure: string) => string[]} */
        const where = (x, measure) => x.culprits.filter((/** @type {any} */ c) => c.measure === measure).map((/** @type {any} */ c) => `${c.function} ${c.file}:${c.line}`)
        assert.ok(where(report, 'cpu')[0] === `buildReport ${SERVER}:${cpuLine}`, `the CPU route's first culprit: ${where(report, 'cpu')}`)
        assert.deepEqual(where(report, 'waits'), [], 'the CPU route waits nowhere')
        assert.ok(where(orders, 'waits').some(w => w.endsWith(`${SERVER}:${waitLine}`)), `the waiting route's line: ${where(orders, 'waits')}`)
        // (the pool's connection was opened before the probe attached: what it speaks is told from its next write)
        assert.match(orders.culprits.find((/** @type {any} */ c) => c.measure === 'waits').waitsOn, /^postgres SELECT pg_sleep/)
        assert.ok(orders.meanMs > report.meanMs / 4 && orders.meanMs >= 30, `the query sleeps 30 ms: ${orders.meanMs}`)
        // The leak: the verdict's, and charged to the route that runs it only.
        assert.equal(d.category, 'memory-leak', d.summary)
        assert.ok(where(track, 'allocations').some(w => w.endsWith(`${SERVER}:${leakLine}`)), `the leaking route's line: ${JSON.stringify(track.culprits)}`)
        assert.deepEqual([...where(report, 'allocations'), ...where(orders, 'allocations')], [], 'the other routes do not run the leak')
        assert.match(r.stdout, /Routes \(observed\)\n {2}GET /)

        // Detached: the server serves on, its traffic answered.
        assert.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 200)
      } finally {
        traffic.stop()
        server.stop()
      }
    }, 'doctor --observe on a server and its own client')
  })

  test('--observe with a command: doctor starts the server and counts the traffic another client sends it, by route', { timeout: 120000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hotpath-observe-'))
    const port = await freePort()
    /** @type {Awaited<ReturnType<typeof start>> | null} */
    let traffic = null
    // The client waits for the server's port, as a user's would.
    const waitAndSend = (async () => {
      for (let i = 0; i < 300; i++) {
        const open = await new Promise(resolve => {
          const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true) }).once('error', () => resolve(false))
        })
        if (open) break
        await new Promise(resolve => setTimeout(resolve, 100))
      }
      traffic = await start([TRAFFIC, String(port), '600', '40'], {})
    })()
    try {
      const r = await hotpath(['doctor', '--observe', '3s', '--no-retainers', '--heap-interval', '0', '--save', join(dir, 'run'), '--json', '--', process.execPath, SERVER], { env: { ...env, PORT: String(port) }, timeout: 90000 })
      assert.equal(r.code, 0, r.stderr)
      await waitAndSend
      const d = JSON.parse(r.stdout)
      assertSchema('doctor', d)
      assert.equal(d.observed, true)
      assert.ok(d.traffic.requests > 0)
      assert.deepEqual(d.routes.map((/** @type {any} */ x) => `${x.method} ${x.route}`).sort(), ['GET /orders/:id', 'GET /report', 'GET /track'])
      // Re-read, the run says the same.
      const again = await hotpath(['doctor', '--analyse', join(dir, 'run'), '--json'])
      assert.deepEqual(JSON.parse(again.stdout).routes, d.routes)
    } finally {
      await waitAndSend.catch(() => {})
      const client = /** @type {{ stop: () => void } | null} */ (traffic)
      client?.stop()
    }
  })
})

test('--observe refuses the flags of a load it does not send, and a duration that is none, in one line', async () => {
  for (const [args, message] of /** @type {const} */ ([
    [['--observe', '5s', '-c', '10'], /--observe sends no load: --connections has nothing to set/],
    [['--observe', '5s', '--on-port', 'true'], /--observe sends no load: --on-port/],
    [['--observe', 'soon'], /--observe must be a duration/]
  ])) {
    const r = await hotpath(['doctor', ...args, '--', process.execPath, '-e', '0'], { refused: true })
    assert.equal(r.code, 2, r.stderr)
    assert.match(r.stderr, message)
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
  }
})
