// hotpath heap through the CLI, on leaks written here (not the examples it was built on): each server is a temp file,
// loaded in three phases by the real probe; the first culprit's retainer path must name what holds the leak.
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { hotpath, BIN } from './helpers/cli.js'
import { assertSchema } from './helpers/schema.js'

/** @type {string[]} temp dirs, removed at the end: each run keeps three snapshots of ~8 MB */
const dirs = []
after(() => Promise.all(dirs.map(d => rm(d, { recursive: true, force: true }))))

/**
 * Writes the files of a server into a fresh temp dir.
 * @param {Record<string, string>} files path → text
 */
async function app (files) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-heap-'))
  dirs.push(dir)
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true })
    await writeFile(join(dir, name), text)
  }
  return dir
}

/**
 * Runs hotpath heap on `main` in `dir`.
 * @param {string} dir
 * @param {string} main
 * @param {string[]} [extra]
 */
async function heap (dir, main, extra = []) {
  const json = join(dir, 'heap-result.json')
  const r = await hotpath(['heap', '-a', '1500', '-c', '4', '--save', join(dir, 'run'), '--json', json, ...extra, '--', process.execPath, main], { cwd: dir, timeout: 120000 })
  let result = null
  try {
    result = JSON.parse(await readFile(json, 'utf8'))
  } catch {}
  if (result !== null) assertSchema('heap', result)
  return { ...r, result, first: r.stdout.split('\n')[0] }
}

/**
 * Names along the first culprit's retainer path.
 * @param {any} result
 */
function namesOf (result) {
  assert.ok(result.culprits.length > 0, `a culprit: ${result.verdict}`)
  return result.culprits[0].retainers.map((/** @type {any} */ r) => r.name)
}

test('a Map cache keyed per request (ES module): kept by the Map\'s variable, with its declaration line', async () => {
  const dir = await app({
    'server.mjs': "import { createServer } from 'node:http'\nimport { remember } from './memo.mjs'\n\n" +
      'createServer((req, res) => {\n  res.end(remember(req))\n}).listen(0, \'127.0.0.1\')\n',
    'memo.mjs': 'let served = 0\n// answers by request, in case the same one comes back\nconst answered = new Map()\n\n' +
      'export function remember (req) {\n  const key = [req.method, req.url, ++served].join(\' \')\n' +
      '  const answer = { key, at: new Date(), agent: String(req.headers[\'user-agent\']), body: JSON.stringify({ n: served }) }\n' +
      '  answered.set(key, answer)\n  return answer.body\n}\n'
  })
  const { code, result, first, stderr, stdout } = await heap(dir, 'server.mjs')
  assert.equal(code, 0, stderr)
  assert.match(first, /^hotpath heap: .*grow.*`answered` \(Map\) in memo\.mjs:3$/)
  assert.match(stdout, /\nReport: run\/heap\.html\n$/, 'the HTML page is written, its path said last')
  const page = await readFile(join(dir, 'run', 'heap.html'), 'utf8')
  assert.match(page, /<code>answered<\/code> \(Map\)/)
  const c = result.culprits[0]
  assert.equal(c.constructor, 'Object')
  assert.equal(c.holding, 'answered')
  assert.ok(c.count >= 1500 && c.count <= 1600, `one entry per request of the growth phase: ${c.count}`)
  assert.ok(c.bytesPerRequest > 0)
  assert.match(c.file, /memo\.mjs$/)
  assert.equal(c.line, 3)
  assert.deepEqual(namesOf(result).slice(0, 2), ['Map entry', 'answered'])
  assert.equal(result.command, 'heap')
  assert.equal(result.snapshots.length, 3)
  assert.deepEqual(result.load.phases.map((/** @type {any} */ p) => p.name), ['warm-up', 'growth', 'settle'])
  // The allocation flame graph of the same run: where what stayed alive was allocated.
  assert.match(stdout, /\nAllocation flame graph: run\/allocations\.html\n/)
  assert.ok(result.allocations?.bytes > 0, JSON.stringify(result.allocations))
  assert.ok(result.allocations.sites.some((/** @type {any} */ a) => /memo\.mjs$/.test(a.file) && a.function === 'remember'), JSON.stringify(result.allocations.sites))
  assert.match(await readFile(join(dir, 'run', 'allocations.html'), 'utf8'), /<html/)
  assert.match(page, /href="allocations\.html"/)
})

test('a listener closure added per request to a long-lived emitter: kept by the emitter\'s variable', async () => {
  const dir = await app({
    'server.js': "'use strict'\nconst http = require('http')\nconst { EventEmitter } = require('events')\n\n" +
      'const config = new EventEmitter()\nconfig.setMaxListeners(0)\n\n' +
      'http.createServer((req, res) => {\n  const started = Date.now()\n' +
      '  config.on(\'reload\', function onReload () { return started + req.url.length })\n' +
      '  res.end(\'ok\')\n}).listen(0, \'127.0.0.1\')\n'
  })
  const { code, result, stderr } = await heap(dir, 'server.js')
  assert.equal(code, 0, stderr)
  const c = result.culprits[0]
  assert.equal(c.constructor, 'Function')
  assert.equal(c.function, 'onReload', 'a leaked closure is placed where it is defined')
  assert.equal(c.line, 10)
  const names = namesOf(result)
  assert.ok(names.includes('reload'), names.join(' ← '))
  assert.ok(names.includes('config'), `the path names the emitter's variable: ${names.join(' ← ')}`)
})

test('snapshots taken while running code holds the leak (a handle, the stack, JSON.stringify): the path is still the program\'s', async () => {
  // An inspector command can stop JavaScript mid-call, so a snapshot can catch what the code running then touched.
  // Here each snapshot is written from inside JSON.stringify of the listener map; the run is re-analysed as saved.
  const dir = await app({
    'snap.js': "'use strict'\nconst { writeHeapSnapshot } = require('v8')\nconst { EventEmitter } = require('events')\n" +
      "const { join } = require('path')\n\nconst config = new EventEmitter()\nconfig.setMaxListeners(0)\n" +
      "process.on('SIGUSR2', () => config.emit('reload'))\n\n" +
      'function serve (n) {\n  for (let i = 0; i < n; i++) {\n' +
      "    config.on('reload', function onReload () { return i })\n  }\n}\n\n" +
      'for (const name of [\'heap-1.heapsnapshot\', \'heap-2.heapsnapshot\', \'heap-3.heapsnapshot\']) {\n  serve(1500)\n' +
      "  JSON.stringify(config._events, (key, value) => {\n    if (key === 'reload') writeHeapSnapshot(join(process.argv[2], name))\n" +
      "    return key === '' ? value : undefined\n  })\n}\n"
  })
  const run = join(dir, 'run')
  await mkdir(run)
  const wrote = spawn(process.execPath, ['snap.js', run], { cwd: dir, stdio: 'inherit' })
  assert.equal(await new Promise(resolve => wrote.on('exit', resolve)), 0)
  const phases = ['warm-up', 'growth', 'settle'].map(name => ({ name, requests: 1500, duration: 1, failed: null }))
  const snapshots = await Promise.all([1, 2, 3].map(async i => ({ name: `heap-${i}.heapsnapshot`, bytes: (await stat(join(run, `heap-${i}.heapsnapshot`))).size })))
  await writeFile(join(run, 'heap.json'), JSON.stringify({ command: 'heap', snapshots, load: { phases } }))

  const { code, stdout, stderr } = await hotpath(['heap', '--analyse', run, '--json', '-'], { cwd: dir })
  assert.equal(code, 0, stderr)
  const names = namesOf(JSON.parse(stdout))
  assert.deepEqual(names.slice(0, 4), ['[1500]', 'reload', '_events', 'config'], names.join(' ← '))
})

test('an array of promises that never settle: kept by the array\'s variable', async () => {
  const dir = await app({
    'server.js': "const http = require('http')\n\nconst waiting = []\n\n" +
      'function later (id) {\n  return new Promise((resolve) => { if (id < 0) resolve(id) })\n}\n\n' +
      'http.createServer(async (req, res) => {\n  waiting.push(later(waiting.length))\n  res.end(String(waiting.length))\n}).listen(0, \'127.0.0.1\')\n'
  })
  const { code, result, stderr } = await heap(dir, 'server.js')
  assert.equal(code, 0, stderr)
  const c = result.culprits[0]
  assert.equal(c.constructor, 'Promise')
  assert.equal(c.holding, 'waiting')
  assert.equal(c.line, 3)
  assert.ok(namesOf(result).includes('waiting'))
})

test('a registry inside a dependency under node_modules: the path names its property and variable, in the dependency', async () => {
  const dir = await app({
    'node_modules/tiny-metrics/package.json': JSON.stringify({ name: 'tiny-metrics', main: 'index.js' }),
    'node_modules/tiny-metrics/index.js': "'use strict'\nclass Registry {\n  constructor () {\n    this.byLabel = new Map()\n  }\n" +
      '  observe (label, value) {\n    this.byLabel.set(label, { label, value, at: Date.now() })\n  }\n}\n' +
      'const registry = new Registry()\nexports.observe = (label, value) => registry.observe(label, value)\n',
    'app.js': "const http = require('http')\nconst metrics = require('tiny-metrics')\nlet id = 0\n" +
      'http.createServer((req, res) => {\n  metrics.observe(\'request \' + (++id) + \' \' + req.url, process.hrtime.bigint())\n  res.end()\n}).listen(0, \'127.0.0.1\')\n'
  })
  const { code, result, stderr } = await heap(dir, 'app.js')
  assert.equal(code, 0, stderr)
  const c = result.culprits[0]
  assert.equal(c.holding, 'byLabel')
  assert.match(c.file, /node_modules\/tiny-metrics\/index\.js$/)
  assert.equal(c.line, 4, 'the property is placed where the dependency sets it')
  const names = namesOf(result)
  assert.ok(names.includes('byLabel') && names.includes('registry'), names.join(' ← '))
  const registry = result.culprits[0].retainers.find((/** @type {any} */ r) => r.name === 'registry')
  assert.match(registry.file, /node_modules\/tiny-metrics\/index\.js$/)
  assert.equal(registry.line, 10)
})

test('one leaked object per request spread over many small arrays, attached to a server started with plain node: kept by the object that holds the arrays', { timeout: 120000 }, async () => {
  const dir = await app({
    'server.mjs': "import http from 'node:http'\n\nclass Limiter {\n  constructor () { this.hits = {} }\n" +
      "  record (client) { (this.hits[client] ??= []).push({ at: Date.now(), note: 'n' + Math.random() }) }\n}\n" +
      'const limiter = new Limiter()\nlet n = 0\n\n' +
      "const server = http.createServer((req, res) => {\n  limiter.record('client-' + (++n % 700))\n  res.end('ok')\n})\n" +
      "server.listen(0, '127.0.0.1', () => console.log('port', server.address().port))\n"
  })
  const child = spawn(process.execPath, ['server.mjs'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const port = await new Promise((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (c) => { const m = /port (\d+)/.exec(c); if (m) resolve(Number(m[1])) })
      child.once('exit', () => reject(new Error('the server exited')))
    })
    const json = join(dir, 'attached.json')
    const r = await hotpath(['heap', '-a', '1500', '-c', '4', '--save', join(dir, 'attached'), '--json', json, '--attach', String(child.pid)], { cwd: dir, timeout: 120000 })
    assert.equal(r.code, 0, r.stderr)
    const result = JSON.parse(await readFile(json, 'utf8'))
    // 1,500 objects over 700 arrays: two or three a holder, and one group of them all under `hits`
    const c = result.culprits[0]
    assert.equal(c.holding, 'hits', r.stdout)
    assert.ok(c.count >= 1400, `one object per request: ${c.count}`)
    assert.equal(c.line, 4, 'where the constructor sets this.hits')
    assert.match(r.stdout.split('\n')[0], /kept by `hits`/)
    // the server serves on, the probe gone
    assert.equal(child.exitCode, null, 'still running')
    const res = await fetch(`http://127.0.0.1:${port}/`)
    assert.equal(res.status, 200)
  } finally {
    child.kill('SIGKILL')
  }
})

test('a server that allocates a lot but keeps nothing: nothing grows', async () => {
  const dir = await app({
    'server.js': "const http = require('http')\nconst recent = []\n" +
      'http.createServer((req, res) => {\n  const rows = []\n  for (let i = 0; i < 500; i++) rows.push({ i, name: \'row \' + i, tags: [i, i * 2] })\n' +
      '  recent.push(rows[0])\n  if (recent.length > 50) recent.shift()\n' +
      '  res.end(JSON.stringify(rows).slice(0, 100))\n}).listen(0, \'127.0.0.1\')\n'
  })
  const { code, result, first, stderr } = await heap(dir, 'server.js')
  assert.equal(code, 0, stderr)
  assert.match(first, /^hotpath heap: nothing grows with load/)
  assert.deepEqual(result.culprits, [])
  assert.ok(result.survivors.count >= 0)
})

test('--analyse redoes a saved run; a target that dies mid-run exits 4 and says so first, with its snapshots kept', async () => {
  const dir = await app({
    'server.js': "const http = require('http')\nconst kept = []\nlet n = 0\n" +
      "http.createServer((req, res) => {\n  kept.push({ n })\n  if (++n === 2000) throw new Error('out of luck')\n  res.end()\n}).listen(0, '127.0.0.1')\n"
  })
  const { code, first, result } = await heap(dir, 'server.js')
  assert.equal(code, 4)
  assert.match(first, /^hotpath heap: the target exited with code 1 during the growth phase/)
  assert.equal(result.failure.category, 'target-failed')
  assert.ok(result.failure.stderr.some((/** @type {string} */ l) => l.includes('out of luck')))
  const files = await readdir(join(dir, 'run'))
  assert.ok(files.includes('heap-1.heapsnapshot'), files.join(', '))

  const again = await hotpath(['heap', '--analyse', join(dir, 'run')], { cwd: dir })
  assert.equal(again.code, 4)
  assert.equal(again.stdout.split('\n')[0], first)
})

test('a server whose metrics port opens before its API: the first line says which port was loaded, and names the other', async () => {
  const dir = await app({
    'server.js': "const http = require('http')\nconst kept = []\n" +
      "http.createServer((req, res) => res.end('up 1\\n')).listen(0, '127.0.0.1', () => {\n" +
      "  http.createServer((req, res) => { kept.push({ at: Date.now() }); res.end() }).listen(0, '127.0.0.1')\n})\n"
  })
  const { code, first, result, stderr } = await heap(dir, 'server.js')
  assert.equal(code, 0, stderr)
  const loaded = new URL(result.url).port
  assert.equal(result.otherPorts.length, 1)
  const [api] = result.otherPorts
  assert.match(first, new RegExp(`^hotpath heap: nothing grows with load .* — port ${loaded} only; it also served HTTP on ${api} \\(--port ${api} loads it\\)$`))
  assert.equal(result.verdict, first)
  // Analysed again from what was saved, it says the same.
  const again = await hotpath(['heap', '--analyse', join(dir, 'run')], { cwd: dir })
  assert.equal(again.stdout.split('\n')[0], first)
})

test('a load that fails (every response a 404): exit 3, said first, nothing analysed', async () => {
  const dir = await app({ 'server.js': "require('http').createServer((req, res) => { res.statusCode = 404; res.end() }).listen(0, '127.0.0.1')\n" })
  const { code, first, result } = await heap(dir, 'server.js')
  assert.equal(code, 3)
  assert.match(first, /^hotpath heap: the warm-up phase's load failed: .*404/)
  assert.equal(result.failure.category, 'load-failed')
  assert.equal(result.snapshots.length, 0)
})

test('Ctrl-C during a phase: exit 130, the first line says the run was interrupted, the target is stopped', async () => {
  const dir = await app({ 'server.js': "require('http').createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1')\n" })
  const child = spawn(process.execPath, [BIN, 'heap', '-d', '60s', '-c', '2', '--save', join(dir, 'run'), '--json', join(dir, 'out.json'), '--', process.execPath, 'server.js'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c })
  child.stderr.setEncoding('utf8').on('data', (c) => {
    stderr += c
    if (stderr.includes('Phase 1/3, warm-up: loading')) child.kill('SIGINT')
  })
  const code = await new Promise((resolve) => child.on('close', resolve))
  assert.equal(code, 130, stderr)
  assert.match(stdout.split('\n')[0], /^hotpath heap: interrupted during the warm-up phase; 0 of 3 snapshots taken/)
  const result = JSON.parse(await readFile(join(dir, 'out.json'), 'utf8'))
  assert.equal(result.interrupted, true)
  assert.deepEqual(result.culprits, [])
  assert.ok(result.pid > 0)
  assert.throws(() => process.kill(result.pid, 0), { code: 'ESRCH' }, 'the target does not outlive the run')
})

test('bad invocations: one line, exit 2', async () => {
  const none = await hotpath(['heap'], { refused: true })
  assert.equal(none.code, 2)
  assert.equal(none.stderr.trim().split('\n').length, 1)
  assert.match(none.stderr, /needs the server command/)
  const notRun = await hotpath(['heap', '--analyse', tmpdir()])
  assert.equal(notRun.code, 2)
  assert.match(notRun.stderr, /is not a hotpath heap run/)
  const help = await hotpath(['heap', '--help'])
  assert.equal(help.code, 0)
  for (const flag of ['--amount', '--duration', '--json', '--save', '--analyse', '--snapshot-timeout', '--fail-on-leak']) assert.ok(help.stdout.includes(flag), flag)
})
