// hotpath load, merge and compare as a user runs them: a real CLI process, real servers, real files.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath } from './helpers/cli.js'
import { httpServer } from './helpers/servers.js'
import { LOAD_FLAGS } from '../src/cli/load-options.js'

const ok = (/** @type {import('node:http').ServerResponse} */ res) => res.end('ok')

/** One clear line on stderr and no stack trace. @param {string} stderr */
function assertOneLine (stderr) {
  const lines = stderr.trim().split('\n')
  assert.equal(lines.length, 1, `one line, got:\n${stderr}`)
  assert.doesNotMatch(stderr, /\n\s+at /)
}

test('--help documents every flag', async () => {
  const { code, stdout } = await hotpath(['load', '--help'])
  assert.equal(code, 0)
  for (const [name, spec] of Object.entries(LOAD_FLAGS)) {
    assert.match(stdout, new RegExp(`--${name}\\b`), `--${name} documented`)
    if (spec.short) assert.match(stdout, new RegExp(`-${spec.short}, --${name}`))
  }
  for (const flag of ['--json', '--output', '--no-progress', '--listen-timeout', '--port', '--path']) assert.ok(stdout.includes(flag), flag)
  const top = await hotpath(['--help'])
  assert.equal(top.code, 0)
  assert.match(top.stdout, /load/)
})

const BAD = [
  { args: ['load', 'not-a-url'], error: /invalid URL 'not-a-url'/ },
  { args: ['load', 'ftp://127.0.0.1/'], error: /unsupported protocol 'ftp:'/ },
  { args: ['load', '--frobnicate', 'http://127.0.0.1:1/'], error: /unknown option '--frobnicate'/ },
  { args: ['load', '-c', 'abc', 'http://127.0.0.1:1/'], error: /--connections must be a positive integer, got 'abc'/ },
  { args: ['load', '-c', '0', 'http://127.0.0.1:1/'], error: /--connections must be a positive integer, got '0'/ },
  { args: ['load', '-p', '1.5', 'http://127.0.0.1:1/'], error: /--pipelining must be a positive integer/ },
  { args: ['load', '-d', '-3', 'http://127.0.0.1:1/'], error: /option '-d' needs a value; to give one starting with '-', write -d=<value>/ },
  { args: ['load', '--duration=-3', 'http://127.0.0.1:1/'], error: /--duration must be a duration/ },
  { args: ['load', '-d', 'soon', 'http://127.0.0.1:1/'], error: /--duration must be a duration like 10, 10s, 500ms or 2m, got 'soon'/ },
  { args: ['load', '-R', 'fast', 'http://127.0.0.1:1/'], error: /--rate must be a positive number/ },
  { args: ['load', '-c', '2', '-w', '4', 'http://127.0.0.1:1/'], error: /--workers \(4\) cannot exceed --connections \(2\)/ },
  { args: ['load', '-H', 'nocolon', 'http://127.0.0.1:1/'], error: /header must look like 'Name: value'/ },
  { args: ['load', '--body-file', '/nonexistent/body.json', 'http://127.0.0.1:1/'], error: /cannot read body file '\/nonexistent\/body.json': ENOENT/ },
  { args: ['load', '-b', 'x', '--body-file', 'package.json', 'http://127.0.0.1:1/'], error: /either --body or --body-file/ },
  { args: ['load', '--requests', '/nonexistent/reqs.json', 'http://127.0.0.1:1/'], error: /cannot read requests file/ },
  { args: ['load'], error: /load needs a URL or -- <command>/ },
  { args: ['load', 'http://a/', 'http://b/'], error: /load takes one URL/ },
  { args: ['load', 'http://127.0.0.1:1/', '--', 'node', 'x.js'], error: /either a URL or -- <command>, not both/ },
  { args: ['load', '-d', '1', '--', 'hotpath-no-such-command'], error: /command not found: hotpath-no-such-command/ },
  { args: ['merge', 'only-one.json'], error: /merge needs at least two result files/ },
  { args: ['compare', 'a.json'], error: /compare needs exactly two result files/ },
  { args: ['frobnicate'], error: /unknown command 'frobnicate'/ }
]

for (const { args, error } of BAD) {
  test(`bad input: hotpath ${args.join(' ')} → one line, exit 2`, async () => {
    const { code, stderr, stdout } = await hotpath(args)
    assert.equal(code, 2)
    assert.match(stderr, error)
    assertOneLine(stderr)
    assert.equal(stdout, '')
  })
}

test('bad request files: not JSON, empty, wrong shape', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-cli-'))
  const cases = [['garbage', /is not JSON or NDJSON/], ['[]', /non-empty list/], ['[1, 2]', /entry 1 is not an object/], ['{"path": 5}', /non-string path/]]
  for (const [text, error] of cases) {
    const file = join(dir, 'requests.json')
    await writeFile(file, /** @type {string} */ (text))
    const { code, stderr } = await hotpath(['load', '--requests', file, 'http://127.0.0.1:1/'])
    assert.equal(code, 2)
    assert.match(stderr, /** @type {RegExp} */ (error))
    assertOneLine(stderr)
  }
})

test('a result file that is not a hotpath result is refused by merge and compare', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-cli-'))
  const file = join(dir, 'x.json')
  await writeFile(file, '{"hello": 1}')
  for (const command of ['merge', 'compare']) {
    const { code, stderr } = await hotpath([command, file, file])
    assert.equal(code, 2)
    assert.match(stderr, /is not a hotpath load result/)
  }
})

test('asked to, the generator batches its reads, and the table says so and by how much at most', async () => {
  const server = await httpServer((req, res) => setTimeout(() => ok(res), 20))
  try {
    const { code, stdout, stderr } = await hotpath(['load', '--coalesce', '-c', '10', '-d', '1', server.url])
    assert.equal(code, 0, stderr)
    const m = /Reads batched \(--coalesce\): the generator napped up to (\d+) µs between reads/.exec(stdout)
    assert.ok(m, stdout)
    assert.ok(Number(m[1]) > 0 && Number(m[1]) <= 50, m[0])
  } finally {
    await server.close()
  }
})

test('load a URL: the table by default, autocannon-shaped JSON with --json, a file with -o', async () => {
  const server = await httpServer((req, res) => ok(res))
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-cli-'))
  try {
    const text = await hotpath(['load', '-c', '2', '-d', '0.5', server.url])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /Latency/)
    assert.match(text.stdout, /p99/)
    assert.match(text.stdout, /Status: 200 ×/)
    assert.match(text.stdout, /Errors: none/)

    const out = join(dir, 'r.json')
    const json = await hotpath(['load', '-c', '2', '-a', '200', '--json', '-o', out, server.url])
    assert.equal(json.code, 0, json.stderr)
    const r = JSON.parse(json.stdout)
    assert.equal(r.requests.total, 200)
    assert.equal(r['2xx'], 200)
    assert.equal(typeof r.latency.p99, 'number')
    assert.equal(typeof r.hotpath.shard.histogram, 'string')
    assert.deepEqual(JSON.parse(await readFile(out, 'utf8')), r)
  } finally {
    await server.close()
  }
})

test('load -- <command>: starts the example server, learns its port, loads it, stops it', async () => {
  const { code, stdout, stderr } = await hotpath(['load', '-c', '2', '-d', '1', '--json', '--', process.execPath, 'examples/hello/server.js'], { env: { PORT: '0' } })
  assert.equal(code, 0, stderr)
  const r = JSON.parse(stdout)
  assert.ok(r.requests.total > 100)
  assert.equal(r.errors, 0)
  const port = Number(new URL(r.url).port)
  assert.ok(port > 0)
  // stopped: nothing listens on that port any more
  const net = await import('node:net')
  const answered = await new Promise(resolve => {
    const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true) })
    s.on('error', () => resolve(false))
  })
  assert.equal(answered, false)
})

test('load -- <command>: the first port it listens on by default, another with --port, and --path', async () => {
  const net = await import('node:net')
  const apiPort = await new Promise(resolve => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = /** @type {import('node:net').AddressInfo} */ (s.address()); s.close(() => resolve(port)) })
  })
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-cli-'))
  const script = join(dir, 'two-ports.mjs')
  await writeFile(script, `
    import http from 'node:http'
    http.createServer((req, res) => res.end('admin')).listen(0, '127.0.0.1', () => {
      http.createServer((req, res) => res.end(req.url)).listen(${apiPort}, '127.0.0.1')
    })
  `)
  const first = await hotpath(['load', '-c', '1', '-a', '10', '--json', '--', process.execPath, script])
  assert.equal(first.code, 0, first.stderr)
  assert.notEqual(Number(new URL(JSON.parse(first.stdout).url).port), apiPort, 'the admin server listened first')

  const chosen = await hotpath(['load', '-c', '1', '-a', '10', '--port', String(apiPort), '--path', '/v1/items?x=1', '--', process.execPath, script])
  assert.equal(chosen.code, 0, chosen.stderr)
  assert.match(chosen.stderr, new RegExp(`Target listening on http://127\\.0\\.0\\.1:${apiPort}/v1/items\\?x=1`))
  assert.match(chosen.stdout, /10 requests in/)
})

test('a target that exits before listening, or never listens, or crashes mid-run: exit 4', async () => {
  const exits = await hotpath(['load', '-d', '1', '--', process.execPath, '-e', 'console.error("bad config: no DATABASE_URL"); process.exit(3)'])
  assert.equal(exits.code, 4)
  assert.match(exits.stderr, /the target exited with code 3 before listening/)
  assert.match(exits.stderr, /\| bad config: no DATABASE_URL/)
  assert.doesNotMatch(exits.stderr, /\n\s+at /)

  const silent = await hotpath(['load', '-d', '1', '--listen-timeout', '0.5', '--', process.execPath, '-e', 'setTimeout(() => {}, 30000)'])
  assert.equal(silent.code, 4)
  assert.match(silent.stderr, /did not start listening within 0\.5 s/)

  const crash = await hotpath(['load', '-c', '2', '-d', '10', '--', process.execPath, '-e', `
    require('node:http').createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1')
    setTimeout(() => { console.error('fatal: out of memory (pretend)'); process.exit(7) }, 700)
  `])
  assert.equal(crash.code, 4)
  assert.match(crash.stdout, /^hotpath load: the target exited with code 7 during the run/, 'said first')
  assert.match(crash.stderr, /\| fatal: out of memory \(pretend\)/)
  assert.match(crash.stdout, /requests in 0\.\d s/, 'what was measured before the crash is reported')
})

test('merge two results made at the same time; compare tells a slower server from a faster one', async () => {
  const fast = await httpServer((req, res) => ok(res))
  const slow = await httpServer((req, res) => setTimeout(() => ok(res), 5))
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-cli-'))
  const a = join(dir, 'a.json')
  const b = join(dir, 'b.json')
  const a2 = join(dir, 'a2.json')
  try {
    // two generators on one server at once: the parts merge adds up
    const [ra, ra2] = await Promise.all([
      hotpath(['load', '-c', '2', '-d', '4', '-o', a, fast.url]),
      hotpath(['load', '-c', '2', '-d', '4', '-o', a2, fast.url])
    ])
    assert.equal(ra.code, 0, ra.stderr)
    assert.equal(ra2.code, 0, ra2.stderr)
    const merged = await hotpath(['merge', '--json', a, a2])
    assert.equal(merged.code, 0, merged.stderr)
    assert.equal(merged.stderr, '', 'no warning: they ran together')
    const m = JSON.parse(merged.stdout)
    const A = JSON.parse(await readFile(a, 'utf8'))
    const A2 = JSON.parse(await readFile(a2, 'utf8'))
    assert.equal(m.requests.total, A.requests.total + A2.requests.total)
    assert.equal(m.latency.totalCount, A.latency.totalCount + A2.latency.totalCount)
    assert.equal(m.connections, 4)
    assert.equal(m.merged.together, true)
    // How they lay in time, from each run's own start and finish (two processes started at once on a busy machine
    // begin up to seconds apart: the overlap is what it was, not a fixed 3.5 s).
    const [sa, sa2] = [A.hotpath.shard, A2.hotpath.shard]
    const overlap = Math.min(sa.finish, sa2.finish) - Math.max(sa.start, sa2.start)
    assert.ok(overlap > 2000, `they ran together: ${overlap} ms`)
    assert.ok(Math.abs(m.merged.overlap - overlap / 1000) < 0.002, JSON.stringify(m.merged))
    assert.ok(Math.abs(m.merged.span - (Math.max(sa.finish, sa2.finish) - Math.min(sa.start, sa2.start)) / 1000) < 0.002, JSON.stringify(m.merged))

    // then the slow server alone, so neither run's seconds are disturbed by the other
    const rb = await hotpath(['load', '-c', '2', '-d', '4', '-o', b, slow.url])
    assert.equal(rb.code, 0, rb.stderr)
    const compared = await hotpath(['compare', '--json', a, b])
    assert.equal(compared.code, 0, compared.stderr)
    const out = JSON.parse(compared.stdout)
    assert.deepEqual(out.differences, [], 'the same load on another port')
    const rows = out.figures
    const p50 = rows.find((/** @type {{ figure: string }} */ r) => r.figure === 'Latency p50')
    assert.equal(p50.verdict, 'worse')
    assert.ok(p50.change > 1)
    const rps = rows.find((/** @type {{ figure: string }} */ r) => r.figure === 'Requests/s')
    assert.ok(rps.change < -0.5, `requests/s fell by ${rps.change}`)
    assert.notEqual(rps.verdict, 'better')

    const gate = await hotpath(['compare', '--max-regression', '10', a, b])
    assert.equal(gate.code, 1)
    assert.match(gate.stdout, /WORSE/)
    assert.match(gate.stderr, /regression beyond 10%/)
    const reverse = await hotpath(['compare', '--max-regression', '10', b, a])
    assert.equal(reverse.code, 0)
  } finally {
    await fast.close()
    await slow.close()
  }
})

test('--requests (NDJSON) and --body-file through the CLI', async () => {
  const server = await httpServer((req, res) => ok(res), { keepBodies: true })
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-cli-'))
  try {
    const requests = join(dir, 'requests.ndjson')
    await writeFile(requests, '{"path": "/a"}\n{"method": "POST", "path": "/b", "body": {"n": 1}}\n')
    const r = await hotpath(['load', '-c', '1', '-a', '10', '--requests', requests, server.url])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(server.seen.paths, { '/a': 5, '/b': 5 })
    const posted = server.seen.headers.findIndex(h => h['content-type'] === 'application/json')
    assert.equal(server.seen.bodies[posted], '{"n":1}')

    const body = join(dir, 'body.bin')
    await writeFile(body, Buffer.from([0, 1, 2, 255]))
    const b = await hotpath(['load', '-c', '1', '-a', '2', '-m', 'PUT', '--body-file', body, '-H', 'Content-Type: application/octet-stream', server.url])
    assert.equal(b.code, 0, b.stderr)
    assert.equal(server.seen.methods.PUT, 2)
    assert.equal(server.seen.headers.at(-1)?.['content-length'], '4')
  } finally {
    await server.close()
  }
})
