// Issue #16, for load, merge and compare: a run that did not measure what was asked must say so on its first line and
// in its exit code — a server that speaks no HTTP, responses that are mostly errors, Ctrl-C, results that cannot be
// added up, runs loaded differently, files that are corrupt.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BIN, ROOT, hotpath } from './helpers/cli.js'
import { latencies, syntheticResult, writeSyntheticResult } from './helpers/results.js'
import { httpServer, rawServer } from './helpers/servers.js'

const dir = await mkdtemp(join(tmpdir(), 'hotpath-failures-'))
const ok = (/** @type {import('node:http').ServerResponse} */ res) => res.end('ok')

/** @param {string} text */
const firstLine = (text) => text.split('\n')[0]

/** One clear line on stderr and no stack trace. @param {string} stderr */
function assertOneLine (stderr) {
  assert.equal(stderr.trim().split('\n').length, 1, `one line, got:\n${stderr}`)
  assert.doesNotMatch(stderr, /\n\s+at /)
}

test('a server that answers garbage: said first, each failed request counted once, exit 3', async () => {
  const server = await rawServer((socket) => { socket.write('SSH-2.0-OpenSSH_9.6\r\n') })
  try {
    const text = await hotpath(['load', '-c', '4', '-d', '1', server.url])
    assert.equal(text.code, 3, text.stderr)
    assert.match(firstLine(text.stdout), new RegExp(`^hotpath load: the server at 127\\.0\\.0\\.1:${server.port} spoke no HTTP: [\\d,]+ responses were not HTTP \\(malformed status line ×[\\d,]+\\)$`))
    assert.doesNotMatch(text.stdout, /closed by server/, 'a malformed response is not also a close')

    const out = join(dir, 'garbage.json')
    const json = await hotpath(['load', '-c', '4', '-p', '4', '-d', '1', '--json', '-o', out, server.url])
    assert.equal(json.code, 3)
    const r = JSON.parse(json.stdout)
    assert.deepEqual(Object.keys(r.hotpath.errorKinds), ['malformed status line'])
    assert.equal(r.errors, r.hotpath.errorKinds['malformed status line'], 'each failure once')
    assert.equal(r.resets, 0, 'a malformed response is no reset')
    assert.equal(r.failed.reason, 'no-http')
    assert.equal(r.failed.bad, r.errors)
    assert.match(r.failed.detail, /spoke no HTTP/)
    assert.match(json.stderr, /^hotpath load: the server at .* spoke no HTTP/, 'said where a person sees it beside --json')
    assert.deepEqual(JSON.parse(await readFile(out, 'utf8')), r)
  } finally {
    await server.close()
  }
})

test('a server that accepts and never answers: said first, exit 3', async () => {
  const server = await rawServer(() => {})
  try {
    const r = await hotpath(['load', '-c', '3', '-d', '1', server.url])
    assert.equal(r.code, 3, r.stderr)
    assert.match(firstLine(r.stdout), /^hotpath load: the server at 127\.0\.0\.1:\d+ answered none of the 3 requests sent in 1\.\d s \(they were still waiting when the run ended; -t allows 10 s\)$/)
    const timedOut = await hotpath(['load', '-c', '2', '-d', '1', '-t', '0.2', '--json', server.url])
    assert.equal(timedOut.code, 3)
    const j = JSON.parse(timedOut.stdout)
    assert.equal(j.failed.reason, 'no-response')
    assert.match(j.failed.detail, /\(timeout ×\d+\)/)
  } finally {
    await server.close()
  }
})

test('nothing listening: one line, exit 3 (the load failed, not the command line)', async () => {
  const { code, stdout, stderr } = await hotpath(['load', '-d', '1', 'http://127.0.0.1:1/'])
  assert.equal(code, 3)
  assert.equal(stdout, '')
  assert.match(stderr, /^hotpath load: cannot reach 127\.0\.0\.1:1: ECONNREFUSED/)
  assertOneLine(stderr)
})

test('responses that are mostly 404 or 500: the load failed, said first in text and JSON, exit 3', async () => {
  const missing = await httpServer((req, res) => { res.statusCode = 404; res.end('nope') })
  try {
    const text = await hotpath(['load', '-c', '2', '-d', '1', missing.url])
    assert.equal(text.code, 3, text.stderr)
    assert.match(firstLine(text.stdout), /^hotpath load: the load failed: ([\d,]+) of \1 responses were 404 Not Found$/)
    const json = await hotpath(['load', '-c', '2', '-a', '300', '--json', missing.url])
    assert.equal(json.code, 3)
    const r = JSON.parse(json.stdout)
    assert.deepEqual(r.failed, { reason: 'non-2xx', detail: 'the load failed: 300 of 300 responses were 404 Not Found', bad: 300, total: 300 })
    assert.equal(r.non2xx, 300, 'autocannon\'s fields as they were')
    assert.equal(r['4xx'], 300)
    assert.equal(json.stderr, 'hotpath load: the load failed: 300 of 300 responses were 404 Not Found\n')
  } finally {
    await missing.close()
  }
  // one in three 500: a load that measured a server with errors; two in three: a failed load
  for (const fails of [1, 2]) {
    const failed = fails === 2
    const flaky = await httpServer((req, res, n) => { res.statusCode = n % 3 < fails ? 500 : 200; res.end('x') })
    try {
      const r = await hotpath(['load', '-c', '1', '-a', '300', '--json', flaky.url])
      const j = JSON.parse(r.stdout)
      assert.equal(j['5xx'], fails * 100)
      assert.equal(r.code, failed ? 3 : 0, r.stderr)
      if (failed) assert.match(j.failed.detail, /^the load failed: 200 of 300 responses were 500 Internal Server Error$/)
      else assert.equal(j.failed, null)
    } finally {
      await flaky.close()
    }
  }
})

test('304 answers a conditional request: not a failure', async () => {
  const server = await httpServer((req, res) => { res.statusCode = 304; res.end() })
  try {
    const r = await hotpath(['load', '-c', '1', '-a', '50', '-H', 'If-None-Match: "v1"', '--json', server.url])
    assert.equal(r.code, 0, r.stderr)
    assert.equal(JSON.parse(r.stdout).failed, null)
  } finally {
    await server.close()
  }
})

/**
 * Starts the CLI and sends it `signal` once the server has seen `after` requests.
 * @param {string[]} args
 * @param {{ seen: { requests: number } }} server
 * @param {NodeJS.Signals} signal
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string, elapsed: number }>}
 */
function interrupt (args, server, signal, after = 50) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c })
    child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c })
    const poll = setInterval(() => {
      if (server.seen.requests >= after) {
        clearInterval(poll)
        child.kill(signal)
      }
    }, 20)
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`did not stop:\n${stderr}`)) }, 20000)
    child.on('close', (code) => {
      clearInterval(poll)
      clearTimeout(timer)
      resolve({ code, stdout, stderr, elapsed: (Date.now() - started) / 1000 })
    })
  })
}

test('Ctrl-C: exit 130, the partial result still written and marked, the text says so first', async () => {
  const server = await httpServer((req, res) => ok(res))
  try {
    const out = join(dir, 'interrupted.json')
    const r = await interrupt(['load', '-c', '2', '-d', '30', '-o', out, server.url], server, 'SIGINT')
    assert.equal(r.code, 130, r.stderr)
    assert.ok(r.elapsed < 15, `stopped at once, not after the 30 s asked (${r.elapsed} s)`)
    assert.match(firstLine(r.stdout), /^hotpath load: interrupted after \d+\.\d s: the figures cover the run until then$/)
    assert.match(r.stdout, /requests in \d+\.\d s/)
    const saved = JSON.parse(await readFile(out, 'utf8'))
    assert.equal(saved.interrupted, true)
    assert.equal(saved.failed, null)
    assert.ok(saved.requests.total > 0 && saved.duration < 15)

    const json = await interrupt(['load', '-c', '2', '-d', '30', '--json', server.url], server, 'SIGINT', server.seen.requests + 50)
    assert.equal(json.code, 130)
    assert.equal(JSON.parse(json.stdout).interrupted, true)
    assert.match(json.stderr, /^hotpath load: interrupted after /)
  } finally {
    await server.close()
  }
})

test('Ctrl-C during a load that gets 404 for every request: the failure first, exit 3, however it ended', async () => {
  const server = await httpServer((req, res) => { res.statusCode = 404; res.end('not found') })
  try {
    const out = join(dir, 'interrupted-404.json')
    const r = await interrupt(['load', '-c', '2', '-d', '30', '-o', out, server.url], server, 'SIGINT')
    assert.equal(r.code, 3, r.stderr)
    assert.match(firstLine(r.stdout), /^hotpath load: the load failed: ([\d,]+) of \1 responses were 404 Not Found$/)
    assert.match(r.stdout.split('\n')[1], /^hotpath load: interrupted after \d+\.\d s/)
    const saved = JSON.parse(await readFile(out, 'utf8'))
    assert.equal(saved.interrupted, true)
    assert.equal(saved.failed.reason, 'non-2xx')
  } finally {
    await server.close()
  }
})

test('SIGTERM: exit 143, the partial result marked', async () => {
  const server = await httpServer((req, res) => ok(res))
  try {
    const r = await interrupt(['load', '-c', '2', '-d', '30', '--json', server.url], server, 'SIGTERM')
    assert.equal(JSON.parse(r.stdout).interrupted, true)
    assert.equal(r.code, 143)
  } finally {
    await server.close()
  }
})

test('a target that crashes mid-run: exit 4, said first, its last words on stderr', async () => {
  const crash = await hotpath(['load', '-c', '2', '-d', '10', '--', process.execPath, '-e', `
    require('node:http').createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1')
    setTimeout(() => { console.error('fatal: out of memory (pretend)'); process.exit(7) }, 700)
  `])
  assert.equal(crash.code, 4)
  assert.match(firstLine(crash.stdout), /^hotpath load: the target exited with code 7 during the run, after 0\.\d s; the figures cover the run until then$/)
  assert.match(crash.stderr, /\| fatal: out of memory \(pretend\)/)
})

test('merge refuses a doctor result, one result twice, and loads of different requests: one line naming the file, exit 2', async () => {
  const a = await writeSyntheticResult(join(dir, 'm-a.json'), { seconds: [latencies(100, 1), latencies(100, 1)] })
  const b = await writeSyntheticResult(join(dir, 'm-b.json'), { seconds: [latencies(100, 2), latencies(100, 2)], start: Date.UTC(2026, 0, 1, 10) + 300 })
  const copy = join(dir, 'm-a-copy.json')
  await copyFile(a, copy)
  const other = await writeSyntheticResult(join(dir, 'm-other.json'), { seconds: [latencies(100, 1)], url: 'http://127.0.0.1:3000/other' })
  const doctor = join(dir, 'doctor.json')
  await writeFile(doctor, JSON.stringify({ tool: 'hotpath', version: '0.1.0', category: 'healthy', evidence: [], load: syntheticResult({ seconds: [latencies(100, 1)] }) }))

  const cases = [
    [[a, doctor], new RegExp(`'${doctor}' is a hotpath doctor result, not a load result`)],
    [[a, a], new RegExp(`'${a}' is the same result as '${a}' \\(same start and latency histogram\\): merging it would count its requests twice`)],
    [[a, b, copy], new RegExp(`'${copy}' is the same result as '${a}'`)],
    [[a, other], new RegExp(`'${other}' loaded GET http://127\\.0\\.0\\.1:3000/other, '${a}' GET http://127\\.0\\.0\\.1:3000/: merge adds up parts of one load`)]
  ]
  for (const [files, error] of /** @type {[string[], RegExp][]} */ (cases)) {
    const r = await hotpath(['merge', ...files])
    assert.equal(r.code, 2, `${files.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, error)
    assertOneLine(r.stderr)
    assert.equal(r.stdout, '')
  }

  const together = await hotpath(['merge', '--json', a, b])
  assert.equal(together.code, 0, together.stderr)
  assert.equal(together.stderr, '')
  const m = JSON.parse(together.stdout)
  assert.deepEqual(m.merged, { overlap: 1.7, span: 2.3, together: true })
  assert.equal(m.requests.total, 400)
})

test('merge of results that did not run together: merged, with a warning first and merged.together false', async () => {
  const early = await writeSyntheticResult(join(dir, 'early.json'), { seconds: [latencies(100, 1), latencies(100, 1)] })
  const late = await writeSyntheticResult(join(dir, 'late.json'), { seconds: [latencies(100, 1), latencies(100, 1)], start: Date.UTC(2026, 0, 1, 10, 5) })
  const text = await hotpath(['merge', early, late])
  assert.equal(text.code, 0, text.stderr)
  const [first, second] = text.stdout.split('\n')
  assert.equal(first, 'hotpath merge: warning: the merged results did not run at the same time (0.0 s in common over 302.0 s): counts and percentiles add up, but requests/s and the duration describe no single load')
  assert.equal(second, `  ${early} 10:00:00–10:00:02, ${late} 10:05:00–10:05:02 UTC`)

  const json = await hotpath(['merge', '--json', early, late])
  assert.equal(json.code, 0)
  assert.deepEqual(JSON.parse(json.stdout).merged, { overlap: 0, span: 302, together: false })
  assert.match(json.stderr, /^hotpath merge: warning: the merged results did not run at the same time/)
})

test('merge and compare of a file with a corrupt histogram: one line naming the file and what is wrong, exit 2', async () => {
  const good = await writeSyntheticResult(join(dir, 'good.json'), { seconds: [latencies(100, 1), latencies(100, 1)] })
  const result = JSON.parse(await readFile(good, 'utf8'))
  const h = result.hotpath.shard.histogram
  result.hotpath.shard.histogram = h.slice(0, 40) + (h[40] === 'A' ? 'B' : 'A') + h.slice(41)
  const mangled = join(dir, 'mangled.json')
  await writeFile(mangled, JSON.stringify(result))
  const swapped = JSON.parse(await readFile(good, 'utf8'))
  swapped.hotpath.shard.series[1].histogram = syntheticResult({ seconds: [latencies(7, 1)] }).hotpath.shard.histogram
  const miscounted = join(dir, 'miscounted.json')
  await writeFile(miscounted, JSON.stringify(swapped))
  const late = JSON.parse(await readFile(good, 'utf8'))
  late.hotpath.shard.latenessHistogram = 'HISTFAAAAC'
  const lateness = join(dir, 'lateness.json')
  await writeFile(lateness, JSON.stringify(late))
  const doctor = join(dir, 'doctor-mangled.json')
  await writeFile(doctor, JSON.stringify({ tool: 'hotpath', category: 'healthy', evidence: [], load: result }))

  for (const command of ['merge', 'compare']) {
    const m = await hotpath([command, good, mangled])
    assert.equal(m.code, 2, m.stderr)
    assert.match(m.stderr.trimEnd(), new RegExp(`^hotpath ${command}: '${mangled}' is not a valid hotpath load result: hotpath\\.shard\\.histogram is not a valid HDR histogram \\(.+\\)$`))
    assertOneLine(m.stderr)
    const c = await hotpath([command, miscounted, good])
    assert.equal(c.code, 2)
    assert.match(c.stderr, new RegExp(`'${miscounted}' is not a valid hotpath load result: hotpath\\.shard\\.series\\[1\\]\\.histogram holds 7 latencies where the counts say 100`))
    assertOneLine(c.stderr)
    const l = await hotpath([command, good, lateness])
    assert.equal(l.code, 2)
    assert.match(l.stderr, /hotpath\.shard\.latenessHistogram is not a valid HDR histogram/)
    assertOneLine(l.stderr)
  }
  const d = await hotpath(['compare', good, doctor])
  assert.equal(d.code, 2)
  assert.match(d.stderr, new RegExp(`'${doctor}' holds an invalid load result: load\\.hotpath\\.shard\\.histogram is not a valid HDR histogram`))
  assertOneLine(d.stderr)
})

test('compare: a change many times the spread of the steady run\'s seconds is no noise, however unsteady the other', async () => {
  const fast = (/** @type {number} */ i) => latencies(1000, 0.5 + (i % 3) * 0.01)
  const steady = await writeSyntheticResult(join(dir, 'steady.json'), { seconds: [0, 1, 2, 3, 4].map(fast) })
  // every other second 2% of requests wait 100 ms, the others 0.5%: the run's p99 is 100 ms; its seconds' p99s flip
  // between 100 ms and 2 ms, a variance that leaves the t-test at p ≈ 0.06
  const flip = (/** @type {number} */ i) => i % 2 === 0 ? latencies(1000, 0.5, 20, 100) : [...latencies(985, 0.5), ...latencies(10, 2), ...latencies(5, 100)]
  const flipping = await writeSyntheticResult(join(dir, 'flipping.json'), { seconds: [0, 1, 2, 3, 4].map(flip), start: Date.UTC(2026, 0, 1, 11) })
  const r = await hotpath(['compare', steady, flipping])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /│ Latency p99 +│ +550 µs │ +100 ms │ \+18087\.5% │ WORSE \([\d,]+× the spread\) │/)
  assert.match(r.stdout, /│ Latency p50 +│ .* │ +within noise │/, 'what did not change still did not')
  const gate = await hotpath(['compare', '--max-regression', '10', steady, flipping])
  assert.equal(gate.code, 1)
  assert.match(gate.stderr, /regression beyond 10%: Latency p99 18087\.5%/)
  const json = JSON.parse((await hotpath(['compare', '--json', steady, flipping])).stdout)
  const p99 = json.figures.find((/** @type {{ figure: string }} */ f) => f.figure === 'Latency p99')
  assert.equal(p99.verdict, 'worse')
  assert.ok(p99.p > 0.05 && p99.times > 1000, JSON.stringify(p99))

  // one bad second among steady ones: some seconds of both runs alike, so the t-test still judges
  const oneBad = (/** @type {number} */ i) => i === 2 ? latencies(1000, 0.5, 30, 100) : fast(i)
  const bad = await writeSyntheticResult(join(dir, 'one-bad.json'), { seconds: [0, 1, 2, 3, 4].map(oneBad), start: Date.UTC(2026, 0, 1, 12) })
  const mixed = await hotpath(['compare', steady, bad])
  assert.match(mixed.stdout, /│ Latency p99\.9 +│ +550 µs │ +100 ms │ .* │ +within noise │/)
})

test('compare says first when the runs were loaded differently, and exits 3 when either load failed', async () => {
  const server = await httpServer((req, res) => ok(res))
  const missing = await httpServer((req, res) => { res.statusCode = 404; res.end() })
  try {
    const a = join(dir, 'c2.json')
    const b = join(dir, 'c4.json')
    const f = join(dir, 'c404.json')
    assert.equal((await hotpath(['load', '-c', '2', '-d', '1', '-o', a, server.url])).code, 0)
    assert.equal((await hotpath(['load', '-c', '4', '-p', '2', '-d', '1', '-m', 'POST', '-b', 'x', '-o', b, `${server.url}api`])).code, 0)
    assert.equal((await hotpath(['load', '-c', '2', '-d', '1', '-o', f, missing.url])).code, 3)

    const r = await hotpath(['compare', a, b])
    assert.equal(r.code, 0, r.stderr)
    assert.equal(firstLine(r.stdout), 'hotpath compare: warning: the runs were loaded differently (connections 2 → 4, pipelining 1 → 2, method GET → POST, ' +
      'url http://127.0.0.1/ → http://127.0.0.1/api, the requests\' headers or body): their figures differ for that too')
    const json = JSON.parse((await hotpath(['compare', '--json', a, b])).stdout)
    assert.deepEqual(json.differences.map((/** @type {{ setting: string }} */ d) => d.setting), ['connections', 'pipelining', 'method', 'url', 'requests'])
    assert.deepEqual(json.differences[0], { setting: 'connections', before: 2, after: 4 })
    assert.equal(json.warnings.length, 1)

    const same = await hotpath(['compare', a, f])
    assert.equal(same.code, 3, 'a comparison with a failed load passes no gate')
    assert.match(firstLine(same.stdout), new RegExp(`^hotpath compare: ${f}: the load failed: ([\\d,]+) of \\1 responses were 404 Not Found$`))
    assert.doesNotMatch(same.stdout, /loaded differently/, 'the port is no setting: servers started by hotpath get a new one each run')
  } finally {
    await server.close()
    await missing.close()
  }
})
