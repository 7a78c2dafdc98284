// A run that did not measure what was asked says so first — in the first line, the JSON and the exit code — never
// "healthy" or "not enough data", however it ended: a load that failed (stopped by Ctrl-C or not), a target that
// crashed or whose workers died, a load command that failed, a port that speaks no HTTP; hotpath never leaves its
// target behind, never mixes two runs in one directory but lets a run that measured nothing be replaced, and loads the
// port that speaks HTTP. A run stopped by a signal still reports; a crash keeps what was collected; the probe flushes
// when its target is killed and never keeps it alive; bad invocations get one clear line.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath, interrupted, BIN, ROOT } from './helpers/cli.js'
import { assertSchema } from './helpers/schema.js'

/**
 * Writes a server script in a fresh directory and runs doctor on it.
 * @param {string} source CommonJS
 * @param {string[]} [extra] doctor flags
 */
async function doctorOn (source, extra = []) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-failures-'))
  const script = join(dir, 'server.cjs')
  await writeFile(script, source)
  const json = join(dir, 'd.json')
  const r = await hotpath(['doctor', '-d', '3', '--no-progress', '--save', join(dir, 'run'), '--json', json, ...extra, '--', process.execPath, script], { timeout: 90000 })
  let d = null
  try { d = JSON.parse(await readFile(json, 'utf8')) } catch {}
  if (d !== null) assertSchema('doctor', d)
  return { r, d, dir, script }
}

test('a load that gets 404 for every request is a failed load, not a healthy server: first line, JSON, exit 3', async () => {
  const { r, d } = await doctorOn(`
    require('node:http').createServer((req, res) => {
      if (req.url === '/api') return res.end('ok')
      res.statusCode = 404
      res.end('not found')
    }).listen(0, '127.0.0.1')
  `)
  assert.equal(r.code, 3, r.stderr)
  const said = /^hotpath doctor: load-failed \(the load failed\)\n\n {2}The run did not measure the server: ([\d,]+) of \1 responses were 404 Not Found\./.exec(r.stdout)
  assert.ok(said, r.stdout)
  assert.equal(d.category, 'load-failed')
  assert.equal(d.failure.category, 'load-failed')
  assert.match(d.failure.what, /404/)
  // The numbers of the sentence, as facts.
  const n = Number(said[1].replace(/,/g, ''))
  assert.deepEqual(d.failure.facts, { kind: 'load-failed', reason: 'non-2xx', requests: n + d.load.errors, responses: n, badResponses: n, errors: d.load.errors, timeouts: d.load.timeouts, timeoutSeconds: 10 })
  assert.equal(d.load.statusCodeStats['404'].count, n)
  assert.equal(d.measured.category, 'healthy', 'what the figures alone say is kept apart')
  assert.match(d.recommendations[0], /--path/)
})

test('a server slower than the timeout: load-failed first, and what it did meanwhile is still diagnosed', async () => {
  const { r, d } = await doctorOn(`
    require('node:http').createServer((req, res) => {
      setTimeout(() => res.end('late'), 1500)
    }).listen(0, '127.0.0.1')
  `, ['-c', '8', '-t', '0.5'])
  assert.equal(r.code, 3, r.stderr)
  assert.match(r.stdout, /^hotpath doctor: load-failed \(the load failed\)\n/)
  assert.equal(d.failure.facts.kind, 'load-failed')
  assert.ok(d.failure.facts.timeouts > 0 && d.failure.facts.timeouts * 2 > d.failure.facts.errors, JSON.stringify(d.failure.facts))
  assert.equal(d.failure.facts.timeoutSeconds, 0.5)
  // Not "load a 2xx path": the server answers, too slowly; and the figures' own advice follows.
  assert.match(d.recommendations[0], /no answer within 0\.5 s \(-t\): the server answers, too slowly/)
  // what the figures say is kept: a server that waits (the requests a timeout abandons leave few traces to blame)
  assert.equal(d.measured.category, 'io', JSON.stringify(d.measured))
})

test('a target that throws on a request: target-failed, the error and its line first, exit 4', async () => {
  const { r, d } = await doctorOn(`
    let n = 0
    require('node:http').createServer((req, res) => {
      if (++n === 2000) { const order = undefined; order.total = 1 }
      res.end('ok')
    }).listen(0, '127.0.0.1')
  `)
  assert.equal(r.code, 4, r.stderr)
  assert.match(r.stdout, /^hotpath doctor: target-failed \(the target failed\)\n\n {2}The run did not measure the server: the target exited with code 1, [\d.]+ s into the load: TypeError: Cannot set properties of undefined \(setting 'total'\) \(at .*server\.cjs:4\)\./)
  // the excerpt keeps the error's line, which the stack trace would push out of the last few
  assert.match(r.stdout, /\| TypeError: Cannot set properties of undefined/)
  assert.equal(d.failure.error.at.line, 4)
  assert.equal(d.run.exit.crashed, true)
  assert.deepEqual(d.failure.facts, { kind: 'target-exited', code: 1, signal: null })
})

test('a target that stops listening as the load starts and dies a moment later: target-failed with its error, exit 4', async () => {
  // A dying process closes its sockets before it is gone (an out-of-memory abort writes its report first): the load
  // finds nothing listening, and the exit that follows is the news, not "cannot reach".
  const { r, d } = await doctorOn(`
    const server = require('node:http').createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1', () => {
      setTimeout(() => {
        server.close()
        setTimeout(() => { throw new Error('lost the database: ECONNRESET') }, 500)
      }, 100)
    })
  `)
  assert.equal(r.code, 4, r.stderr + r.stdout)
  assert.match(r.stdout, /^hotpath doctor: target-failed \(the target failed\)\n\n {2}The run did not measure the server: the target exited with code 1, [\d.]+ s into the load: Error: lost the database: ECONNRESET/)
  assert.doesNotMatch(r.stderr, /cannot reach/)
  assert.deepEqual(d.failure.facts, { kind: 'target-exited', code: 1, signal: null })
})

test('cluster workers that die mid-run: target-failed, how many and when, their profiles kept', async () => {
  const { r, d } = await doctorOn(`
    const cluster = require('node:cluster')
    const http = require('node:http')
    if (cluster.isPrimary) {
      for (let i = 0; i < 2; i++) cluster.fork()
      // the primary stays up: only the workers die
    } else {
      http.createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT ?? 0), '127.0.0.1')
      setTimeout(() => process.exit(3), 2500)
    }
  `, ['-d', '5'])
  assert.equal(r.code, 4, r.stdout + r.stderr)
  assert.match(r.stdout, /^hotpath doctor: target-failed \(the target failed\)\n\n {2}The run did not measure the server: 2 of 2 cluster workers died during the load(, and the target exited with code 0)?, [\d.]+ s into the load\./)
  assert.equal(d.failure.died.length, 2)
  for (const w of d.failure.died) assert.ok(w.at > 0.5 && w.at < 5, `died at ${w.at} s`)
  assert.deepEqual({ ...d.failure.facts, exit: null }, { kind: 'workers-died', died: 2, workers: 2, exit: null })
  assert.equal(d.failure.facts.exit === null, !d.run.exit.crashed, 'how the target exited, when it did')
})

test('an --on-port command that is not found, or exits 7: load-failed, exit 3', async () => {
  const server = "require('node:http').createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1')"
  const missing = await doctorOn(server, ['--on-port', 'hotpath-no-such-load-tool $PORT'])
  assert.equal(missing.r.code, 3, missing.r.stderr)
  assert.match(missing.r.stdout, /^hotpath doctor: load-failed .*\n\n {2}The run did not measure the server: the --on-port command was not found\./)
  assert.deepEqual(missing.d.failure.facts, { kind: 'on-port-failed', code: 127 })
  const seven = await doctorOn(server, ['--on-port', 'exit 7'])
  assert.equal(seven.r.code, 3, seven.r.stderr)
  assert.match(seven.r.stdout, /The run did not measure the server: the --on-port command exited with code 7\./)
  assert.match(seven.d.recommendations[0], /exit 7/)
  assert.deepEqual(seven.d.failure.facts, { kind: 'on-port-failed', code: 7 })
})

test('a target that opens another listener first: the port that speaks HTTP is loaded', async () => {
  const { r, d } = await doctorOn(`
    const net = require('node:net')
    net.createServer((s) => s.end('internal\\n')).listen(0, '127.0.0.1', () => {
      setTimeout(() => require('node:http').createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1'), 300)
    })
  `, ['-d', '2'])
  assert.equal(r.code, 0, r.stderr)
  assert.equal(d.category, 'healthy')
  assert.ok(d.load.requests.total > 500, `the HTTP server was loaded: ${d.load.requests.total}`)
})

test('Ctrl-C during a load that gets 404 for every request: load-failed first, exit 3, not healthy and not 130', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-failures-'))
  const script = join(dir, 'server.cjs')
  await writeFile(script, "require('node:http').createServer((req, res) => { res.statusCode = 404; res.end('not found') }).listen(0, '127.0.0.1')")
  const json = join(dir, 'd.json')
  for (const [signal, stopped] of /** @type {const} */ ([['SIGINT', 'Ctrl-C'], ['SIGTERM', 'SIGTERM']])) {
    const { code, stdout, stderr } = await interrupted(['doctor', '-d', '30', '--no-progress', '--save', join(dir, signal), '--json', json, '--', process.execPath, script], signal)
    assert.equal(code, 3, `${stopped}: ${stderr}`)
    const said = /^hotpath doctor: load-failed \(the load failed\)\n\n {2}The run did not measure the server: ([\d,]+) of \1 responses were 404 Not Found\./.exec(stdout)
    assert.ok(said, `${stopped}: ${stdout}`)
    assert.match(stdout, /Stopped early \(interrupted\)/)
    const d = JSON.parse(await readFile(json, 'utf8'))
    assert.equal(d.category, 'load-failed')
    assert.equal(d.run.aborted, true)
    assert.equal(d.failure.facts.badResponses, Number(said[1].replace(/,/g, '')))
  }
})

test('a target whose port speaks no HTTP: said at once with what it answered, exit 3, for doctor, flame, heap and load', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-failures-'))
  const script = join(dir, 'server.cjs')
  await writeFile(script, "require('node:net').createServer((s) => { s.on('error', () => {}); s.on('data', () => s.write('SSH-2.0-OpenSSH_9.6\\r\\n')) }).listen(0, '127.0.0.1')")
  for (const [command, out] of /** @type {[string, string[]][]} */ ([['doctor', ['--save', join(dir, 'run')]], ['flame', ['-o', join(dir, 'flame')]], ['heap', ['--save', join(dir, 'heap')]], ['load', []]])) {
    // A listen timeout far beyond the test's own: a run that waits for HTTP that never comes fails the test.
    const r = await hotpath([command, '-d', '2', ...(command === 'heap' ? [] : ['--no-progress']), '--listen-timeout', '120s', ...out, '--', process.execPath, script], { timeout: 30000 })
    assert.equal(r.code, 3, `${command}: ${r.stderr}`)
    assert.match(r.stderr, new RegExp(`^hotpath ${command}: the target listens on 127\\.0\\.0\\.1:\\d+, but speaks no HTTP there: it answered "SSH-2\\.0-OpenSSH_9\\.6"; --port chooses the port to load\\n`), command)
    assert.doesNotMatch(r.stderr, /within 120 s/)
  }
})

test('a run that failed before its load says so when analysed or compared, and its directory can be recorded into again', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-failures-'))
  const run = join(dir, 'run')
  const script = join(dir, 'server.cjs')
  await writeFile(script, "require('node:net').createServer((s) => s.destroy()).listen(0, '127.0.0.1')")
  const failed = await hotpath(['doctor', '-d', '2', '--no-progress', '--save', run, '--', process.execPath, script], { timeout: 30000 })
  assert.equal(failed.code, 3, failed.stderr)
  const line = /^hotpath doctor: (the target listens on .*)\n/.exec(failed.stderr)?.[1]
  assert.ok(line, failed.stderr)
  assert.match(line, /it (closed|reset) the connection without answering/)
  const analysed = await hotpath(['doctor', '--analyse', run])
  assert.equal(analysed.code, 3, analysed.stderr)
  assert.equal(analysed.stderr.split('\n')[0], `hotpath doctor: '${run}' holds a run that failed before its load: ${line}`)
  const compared = await hotpath(['compare', run, run])
  assert.equal(compared.code, 3)
  assert.equal(compared.stderr.split('\n')[0], `hotpath compare: '${run}' holds a run that failed before its load: ${line}`)

  await writeFile(script, "require('node:http').createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1')")
  const again = await hotpath(['doctor', '-d', '1', '--no-progress', '--save', run, '--', process.execPath, script], { timeout: 60000 })
  assert.equal(again.code, 0, again.stderr)
  assert.match(again.stderr, /^Recording into '.*run', which held a run that failed before its load \(the target listens on .*\): its files are replaced\n/)
  assert.match(again.stdout, /^hotpath doctor: healthy/)
  assert.equal((await readdir(run)).filter(f => f.startsWith('events-')).length, 1, 'the failed run\'s event log is gone')
})

test('a run directory that holds an earlier run is refused, in one line', async () => {
  const { dir } = await doctorOn("require('node:http').createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1')", ['-d', '1'])
  const again = await hotpath(['doctor', '-d', '1', '--no-progress', '--save', join(dir, 'run'), '--', process.execPath, join(dir, 'server.cjs')])
  assert.equal(again.code, 2)
  assert.match(again.stderr, /^hotpath doctor: '.*run' holds an earlier run: record this one elsewhere \(--save <new dir>\), or remove it first\n$/)
})

test('hotpath killed with SIGKILL does not leave its target running', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-failures-'))
  const child = spawn(process.execPath, [BIN, 'doctor', '-d', '30', '--no-progress', '--save', join(dir, 'run'), '--', process.execPath, 'examples/hello/server.js'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  const pid = await new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (c) => {
      stderr += c
      const m = /\(pid (\d+)\); loading it/.exec(stderr)
      if (m) resolve(Number(m[1]))
    })
    child.once('exit', () => reject(new Error(`doctor ended early: ${stderr}`)))
  })
  child.kill('SIGKILL')
  const deadline = Date.now() + 8000
  let alive = true
  while (alive && Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, 100))
    try { process.kill(pid, 0) } catch { alive = false }
  }
  if (alive) process.kill(pid, 'SIGKILL')
  assert.equal(alive, false, `the target (pid ${pid}) outlived hotpath`)

  // What it left — the target's event log, no run.json — is an unfinished run: said so, and recorded into again.
  const analysed = await hotpath(['doctor', '--analyse', join(dir, 'run')])
  assert.equal(analysed.code, 2)
  assert.match(analysed.stderr, new RegExp(`^hotpath doctor: '.*run' holds an unfinished run: the event log of pid ${pid}, but no run\\.json \\(hotpath was stopped before it finished recording\\): nothing to analyse — record the run again \\(it may record into '.*run'\\)\\n$`))
  const again = await hotpath(['doctor', '-d', '1', '--no-progress', '--save', join(dir, 'run'), '--', process.execPath, 'examples/hello/server.js'], { env: { PORT: '0' }, timeout: 60000 })
  assert.equal(again.code, 0, again.stderr)
  assert.match(again.stderr, new RegExp(`^Recording into '.*run', which held an unfinished run \\(the event log of pid ${pid}, no run\\.json\\): its files are replaced`))
})

test('a server that opens a metrics port before its API: doctor, flame and load say they loaded the first port only, and name the other', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-doctor-'))
  await writeFile(join(dir, 'server.js'), "const http = require('http')\nconst { writeFileSync } = require('fs')\n" +
    "const metrics = http.createServer((req, res) => res.end('up 1\\n'))\n" +
    "metrics.listen(0, '127.0.0.1', () => {\n" +
    "  const api = http.createServer((req, res) => res.end('{}')).listen(Number(process.env.API_PORT), '127.0.0.1', () => {\n" +
    '    writeFileSync(process.env.PORTS_FILE, JSON.stringify([metrics.address().port, api.address().port]))\n  })\n})\n' +
    // A TCP service of its own protocol is not an HTTP port to offer.
    "require('net').createServer(() => {}).listen(0, '127.0.0.1')\n")
  const ports = join(dir, 'ports.json')
  const json = join(dir, 'd.json')
  const r = await hotpath(['doctor', '-d', '2', '--no-profile', '--no-experiments', '--no-progress', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, 'server.js'], { cwd: dir, env: { PORTS_FILE: ports, API_PORT: '0' }, timeout: 60000 })
  assert.equal(r.code, 0, r.stderr)
  const [metrics, api] = JSON.parse(await readFile(ports, 'utf8'))
  // (the verdict of a trivial server is what a busy machine makes it; the note is what is tested)
  assert.match(r.stdout.split('\n')[0], new RegExp(`^hotpath doctor: [\\w-]+ \\([\\w ]+\\) — port ${metrics} only; it also served HTTP on ${api}$`))
  const d = JSON.parse(await readFile(json, 'utf8'))
  assert.deepEqual(d.measured.facts.otherPorts, [api])
  assert.match(d.summary, new RegExp(`also served HTTP on port ${api}, which was not loaded \\(--port ${api} loads it\\)`))

  const chosen = await hotpath(['doctor', '-d', '2', '--no-profile', '--no-experiments', '--no-progress', '--port', String(api), '--save', join(dir, 'run2'), '--json', '-', '--', process.execPath, 'server.js'], { cwd: dir, env: { PORTS_FILE: ports, API_PORT: String(api) }, timeout: 60000 })
  assert.equal(chosen.code, 0, chosen.stderr)
  const [metrics2] = JSON.parse(await readFile(ports, 'utf8'))
  assert.equal(JSON.parse(chosen.stdout).run.url, `http://127.0.0.1:${api}/`)
  assert.deepEqual(JSON.parse(chosen.stdout).measured.facts.otherPorts, [metrics2])

  const flame = await hotpath(['flame', '-d', '1', '--no-progress', '-o', join(dir, 'flame'), '--', process.execPath, 'server.js'], { cwd: dir, env: { PORTS_FILE: ports, API_PORT: '0' }, timeout: 60000 })
  assert.equal(flame.code, 0, flame.stderr)
  const [metrics3, api3] = JSON.parse(await readFile(ports, 'utf8'))
  assert.ok(flame.stderr.includes(`hotpath flame: the load went to port ${metrics3} only: the target also served HTTP on port ${api3}, which was not loaded (--port ${api3} loads it).`), flame.stderr)

  const load = await hotpath(['load', '-d', '1', '--no-progress', '--', process.execPath, 'server.js'], { cwd: dir, env: { PORTS_FILE: ports, API_PORT: '0' }, timeout: 60000 })
  assert.equal(load.code, 0, load.stderr)
  const [metrics4, api4] = JSON.parse(await readFile(ports, 'utf8'))
  assert.ok(load.stderr.includes(`hotpath load: the load went to http://127.0.0.1:${metrics4}/ only: the target also served HTTP on port ${api4}, which was not loaded (--port ${api4} loads it).`), load.stderr)
})

test('bad invocations: one clear line, non-zero exit, no stack trace', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-doctor-'))
  const cases = [
    { args: ['doctor'], code: 2, error: /doctor needs the server command after --/ },
    { args: ['doctor', '--', 'hotpath-no-such-command'], code: 2, error: /command not found: hotpath-no-such-command/ },
    { args: ['doctor', '--listen-timeout', '1', '--', process.execPath, '-e', 'setTimeout(() => {}, 20000)'], code: 4, error: /did not start listening within 1 s/ },
    { args: ['doctor', '--', process.execPath, '-e', 'console.error("cannot read config.yml"); process.exit(4)'], code: 4, error: /exited with code 4 before listening[\s\S]*\| cannot read config\.yml/ },
    { args: ['doctor', '--analyse', join(dir, 'nothing-here')], code: 2, error: /no hotpath run in/ },
    { args: ['doctor', '--analyse', dir, '--', 'node', 'x.js'], code: 2, error: /either --analyse <dir> or -- <command>/ },
    { args: ['doctor', '-c', 'many', '--', 'node', 'x.js'], code: 2, error: /--connections must be a positive integer/ },
    { args: ['doctor', 'server.js'], code: 2, error: /put the server command after --/ }
  ]
  for (const [i, c] of cases.entries()) {
    const r = await hotpath([...c.args.slice(0, 1), '--save', join(dir, `run-${i}`), ...c.args.slice(1)], { refused: c.code === 2 })
    assert.equal(r.code, c.code, `${c.args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, c.error)
    assert.doesNotMatch(r.stderr, /\n\s+at /)
  }
})

test('a target that crashes mid-run is reported with what was collected', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-doctor-'))
  const json = join(dir, 'd.json')
  const r = await hotpath(['doctor', '-d', '10', '--no-progress', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, 'test/fixtures/servers/dies-mid-load.js'])
  assert.equal(r.code, 4, 'the target failed')
  assert.match(r.stdout, /^hotpath doctor: target-failed \(the target failed\)\n\n {2}The run did not measure the server: the target exited with code 9, [\d.]+ s into the load/)
  assert.match(r.stdout, /\| fatal: lost the database/)
  const d = JSON.parse(await readFile(json, 'utf8'))
  assert.equal(d.run.exit.crashed, true)
  assert.equal(d.run.exit.code, 9)
  assert.ok(d.processes.length >= 1 && d.processes[0].samples > 10, 'samples up to the crash are kept')
})

for (const [signal, exit] of /** @type {const} */ ([['SIGINT', 130], ['SIGTERM', 143]])) {
  test(`${signal} stops the target and still reports (exit ${exit}); nothing is left behind in the target's directory`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hotpath-doctor-'))
    const before = await readdir(ROOT)
    const { code, stdout, stderr } = await interrupted(['doctor', '-d', '30', '--no-progress', '--save', join(dir, 'run'), '--', process.execPath, 'examples/hello/server.js'], signal, { PORT: '0' })
    assert.equal(code, exit, stderr)
    assert.match(stdout, /Stopped early \(interrupted\)/)
    assert.match(stdout, /^hotpath doctor: /)
    const pid = Number(/pid (\d+)\)/.exec(stderr)?.[1])
    assert.ok(pid > 0)
    assert.throws(() => process.kill(pid, 0), 'the target was stopped')
    assert.deepEqual(await readdir(ROOT), before, 'no trace files in the working directory')
  })
}

test('the probe flushes when the target is killed by a signal, and never keeps it alive', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-doctor-'))
  // killed from outside (here: by itself) with SIGTERM, no handler of its own: it must still die of the signal
  const killed = join(dir, 'killed.mjs')
  await writeFile(killed, `
    import http from 'node:http'
    http.createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1')
    setTimeout(() => process.kill(process.pid, 'SIGTERM'), 1500)
  `)
  const json = join(dir, 'd.json')
  const r = await hotpath(['doctor', '-d', '10', '--no-progress', '--save', join(dir, 'run1'), '--json', json, '--', process.execPath, killed])
  assert.equal(r.code, 4, r.stderr)
  const d = JSON.parse(await readFile(json, 'utf8'))
  assert.equal(d.run.exit.signal, 'SIGTERM', 'the target died of the signal, as it would have without hotpath')
  assert.ok(d.processes[0].samples > 10, 'its samples up to the signal were flushed')

  // a server that closes itself once done: its process must end on its own, probe or not
  const done = join(dir, 'done.mjs')
  await writeFile(done, `
    import http from 'node:http'
    const server = http.createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1')
    setTimeout(() => { server.closeAllConnections(); server.close() }, 1500)
  `)
  const r2 = await hotpath(['doctor', '-d', '10', '--no-progress', '--save', join(dir, 'run2'), '--json', json, '--', process.execPath, done])
  assert.equal(r2.code, 4, r2.stderr)
  const d2 = JSON.parse(await readFile(json, 'utf8'))
  assert.equal(d2.run.exit.code, 0, 'exited by itself: nothing of the probe held it')
  assert.ok(d2.run.window.end - d2.run.window.start < 8000, 'the run ended when the target did')
})
