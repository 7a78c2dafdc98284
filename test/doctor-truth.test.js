// The doctor never silently loses the app's code or a damaged file: a server run from another directory, with no
// package.json of its own, is still the app; a saved run whose profile or event log is corrupt says which file, what
// that costs, and does not pass its verdict off as whole.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { hotpath } from './helpers/cli.js'

const SERVER = `const http = require('node:http')
const pkg = require('tiny-pkg')

function burn (n) {
  let x = 0
  for (let i = 0; i < n; i++) x += Math.sqrt(i) * Math.sin(i) // the hot line
  return x
}

http.createServer((req, res) => {
  res.end(String(burn(2e5) + pkg.work(2e3)))
}).listen(0, '127.0.0.1')
`
const PACKAGE = `exports.work = (n) => { let s = 0; for (let i = 0; i < n; i++) s += Math.cos(i); return s }
`
const HOT_LINE = SERVER.split('\n').findIndex(l => l.includes('the hot line')) + 1

/**
 * A fresh directory with no package.json in it or in any directory above it: Node itself then knows of no package.
 * @param {string} prefix
 */
async function bareDir (prefix) {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  for (let d = dir; ; d = dirname(d)) {
    assert.ok(!existsSync(join(d, 'package.json')), `${d} holds a package.json: the test needs a tree without one`)
    if (dirname(d) === d) break
  }
  return dir
}

/**
 * The CPU-bound server in a directory of its own, with a package under its node_modules.
 * @returns {Promise<string>} the script
 */
async function writeServer () {
  const dir = await bareDir('hotpath-truth-app-')
  await mkdir(join(dir, 'node_modules', 'tiny-pkg'), { recursive: true })
  await writeFile(join(dir, 'node_modules', 'tiny-pkg', 'index.js'), PACKAGE)
  const script = join(dir, 'server.cjs')
  await writeFile(script, SERVER)
  return script
}

/** @type {Promise<{ script: string, run: string, elsewhere: string }> | null} */
let recorded = null

/**
 * One doctor run of the server, started from another directory with a preload and arguments after the script, as
 * `node --require x script.js args` is: every test below works on it or on copies of its saved run.
 */
function record () {
  recorded ??= (async () => {
    const script = await writeServer()
    const elsewhere = await bareDir('hotpath-truth-cwd-')
    await writeFile(join(elsewhere, 'preload.cjs'), 'globalThis.preloaded = true\n')
    const run = join(elsewhere, 'run')
    const r = await hotpath(['doctor', '-d', '3', '--no-progress', '--save', run, '--json', join(elsewhere, 'd.json'), '--',
      process.execPath, '--require', './preload.cjs', script, '--some-flag', 'value'], { cwd: elsewhere, timeout: 90000, alone: true })
    assert.equal(r.code, 0, `doctor exited ${r.code}\n${r.stderr}\n${r.stdout}`)
    return { script, run, elsewhere }
  })()
  return recorded
}

/**
 * Re-analyses a run directory.
 * @param {string} dir
 */
async function analyse (dir) {
  const json = join(dir, '..', `${dir.split('/').pop()}.json`)
  const r = await hotpath(['doctor', '--analyse', dir, '--json', json])
  let d = null
  try { d = JSON.parse(await readFile(json, 'utf8')) } catch {}
  return { r, d, lines: r.stdout.split('\n') }
}

/**
 * A copy of the recorded run to damage, and the baseline diagnosis of the untouched one.
 * @param {string} name
 */
async function copyRun (name) {
  const { run } = await record()
  const dir = join(await mkdtemp(join(tmpdir(), 'hotpath-truth-copy-')), name)
  await cp(run, dir, { recursive: true })
  await rm(join(dir, 'report.html'), { force: true })
  const files = await readdir(dir)
  const find = (/** @type {RegExp} */ re) => join(dir, /** @type {string} */ (files.find(f => re.test(f))))
  return { dir, cpu: find(/^cpu-\d+-0\.cpuprofile$/), events: find(/^events-\d+-0\.ndjson$/) }
}

/** @type {Promise<any> | null} */
let base = null
/** What the untouched run says when analysed again. */
function baseline () {
  base ??= (async () => {
    const { dir } = await copyRun('untouched')
    const { r, d } = await analyse(dir)
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(d.warnings, [])
    assert.ok(d.culprits.length > 0, 'the untouched run has culprits')
    return d
  })()
  return base
}

test('a server run from another directory with no package.json: its own code is the app, charged on its line', async () => {
  const { script, elsewhere } = await record()
  const d = JSON.parse(await readFile(join(elsewhere, 'd.json'), 'utf8'))
  const top = d.culprits.find((/** @type {any} */ c) => c.measure === 'cpu')
  assert.ok(top, `a CPU culprit: ${JSON.stringify(d.culprits)}`)
  assert.equal(top.file, script)
  assert.equal(top.kind, 'app')
  assert.equal(top.function, 'burn')
  assert.equal(top.line, HOT_LINE)
  for (const c of d.culprits) {
    if (c.file.includes('node_modules')) assert.equal(c.kind, 'dependency', `${c.file} is a package's`)
    if (c.file === script) assert.equal(c.kind, 'app', `${c.function} is the app's`)
  }
})

test('a saved run analysed again: a CPU profile cut short is named first, the verdict is kept and marked, exit 2', async () => {
  const d0 = await baseline()
  const { dir, cpu } = await copyRun('cut-profile')
  const text = await readFile(cpu, 'utf8')
  await writeFile(cpu, text.slice(0, Math.floor(text.length / 2)))
  const { r, d, lines } = await analyse(dir)
  assert.equal(r.code, 2, r.stdout + r.stderr)
  assert.equal(lines[0], `hotpath doctor: ${d0.category} (${lines[0].split('(')[1].split(')')[0]}) — unreliable: files of the run are damaged`)
  assert.ok(lines[1].includes(cpu) && /is corrupt \(cut short at byte [\d,]+\): no CPU culprits from it/.test(lines[1]), lines[1])
  assert.equal(d.category, d0.category, 'the verdict is not changed silently')
  assert.equal(d.warnings.length, 1)
  assert.equal(d.warnings[0].file, cpu)
  assert.equal(d.warnings[0].kind, 'cpu')
  assert.equal(d.warnings[0].affects, 'verdict')
  assert.equal(d.culprits.filter((/** @type {any} */ c) => c.measure === 'cpu').length, 0)
  assert.match(d.recommendations.join('\n'), /Record the run again/)
  const html = await readFile(join(dir, 'report.html'), 'utf8')
  const said = html.indexOf('Unreliable: files of the run are damaged')
  assert.ok(said !== -1 && said < html.indexOf('class="hr-badge"'), 'the report says it before its verdict')
  assert.ok(html.includes(cpu), 'the report names the file')
})

test('garbage inside a CPU profile is located to the byte; a profile that is JSON but not a profile, or missing, is named', async () => {
  const garbage = await copyRun('garbage-profile')
  const bytes = await readFile(garbage.cpu)
  const at = Math.floor(bytes.length / 3)
  bytes.write('\u0001#garbage#', at)
  await writeFile(garbage.cpu, bytes)
  const g = await analyse(garbage.dir)
  assert.equal(g.r.code, 2)
  assert.ok(g.lines[1].includes(`is corrupt (not JSON at byte ${at.toLocaleString('en-US')})`), g.lines[1])

  const other = await copyRun('not-a-profile')
  await writeFile(other.cpu, '{"nodes":[]}')
  const o = await analyse(other.dir)
  assert.equal(o.r.code, 2)
  assert.match(o.lines[1], /is corrupt \(not a CPU profile: "nodes" is empty\)/)

  const missing = await copyRun('missing-profile')
  await rm(missing.cpu)
  const m = await analyse(missing.dir)
  assert.equal(m.r.code, 2)
  assert.ok(m.lines[1].includes(`(${missing.cpu}) is missing: no CPU culprits from it`), m.lines[1])
})

test('a corrupt heap profile the verdict does not use is said, without alarm', async () => {
  const d0 = await baseline()
  assert.ok(!['gc', 'memory-leak'].includes(d0.category), `the recorded run blames CPU, not allocations: ${d0.category}`)
  // The allocation samples doctor takes after the load when GC took a good share of it, with a verdict that blames
  // CPU all the same (GC under the share that makes a gc verdict): run.json names them.
  const { dir } = await copyRun('heap')
  const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'))
  const name = `heap-allocations-${run.listening.pid}-0.heapprofile`
  run.allocations = { phases: [{ name: 'allocations', requests: 100, duration: 1, failed: null }], files: { heapAllocations: name }, pid: run.listening.pid, error: null }
  await writeFile(join(dir, 'run.json'), JSON.stringify(run))
  const heap = join(dir, name)
  await writeFile(heap, 'garbage, not a profile')
  const { r, d, lines } = await analyse(dir)
  assert.equal(r.code, 0, r.stdout)
  assert.match(lines[0], /^hotpath doctor: [\w-]+ \([^)]+\)$/)
  assert.ok(lines[1].includes(heap) && /is corrupt \(not JSON at byte 0\): none for this verdict/.test(lines[1]), lines[1])
  assert.equal(d.warnings[0].affects, 'nothing')
  assert.deepEqual(d.culprits, d0.culprits)
})

test('heap phases after the window that stopped short are said, with why, not passed off as never asked for', async () => {
  const d0 = await baseline()
  const { dir } = await copyRun('phases-failed')
  const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'))
  run.allocations = { kinds: ['allocations'], phases: [], files: {}, pid: run.listening.pid, error: `no probe answers in pid ${run.listening.pid}` }
  run.retainers = { phases: [], snapshots: [], keptBytes: 8e6, reason: 'kept', error: 'the heap snapshot timed out' }
  await writeFile(join(dir, 'run.json'), JSON.stringify(run))
  const { r, d, lines } = await analyse(dir)
  assert.equal(r.code, 0, r.stdout)
  const said = lines.slice(1, 3).join('\n')
  assert.match(said, new RegExp(`The heap allocation samples of pid ${run.listening.pid} were not taken: the phase after the load window stopped short \\(no probe answers in pid \\d+\\): none for this verdict`))
  assert.match(said, /The heap snapshots of what keeps memory alive of pid \d+ were not taken: .*\(the heap snapshot timed out\)/)
  assert.deepEqual(d.warnings.map((/** @type {any} */ w) => [w.kind, w.notTaken, w.affects]), [['heapAllocations', true, 'nothing'], ['retainers', true, 'nothing']])
  assert.equal(d.category, d0.category)
})

test('an event log with a garbage line in the middle is corrupt; a last line cut short (a killed target) is not', async () => {
  const d0 = await baseline()
  const middle = await copyRun('events-middle')
  const lines = (await readFile(middle.events, 'utf8')).split('\n')
  const n = Math.floor(lines.length / 2)
  lines[n] = lines[n].slice(0, Math.floor(lines[n].length / 2))
  await writeFile(middle.events, lines.join('\n'))
  const m = await analyse(middle.dir)
  assert.equal(m.r.code, 2, m.r.stdout)
  assert.match(m.lines[0], / — unreliable: files of the run are damaged$/)
  assert.ok(m.lines[1].includes(middle.events) && m.lines[1].includes(`(line ${n + 1}, at byte`), m.lines[1])
  assert.equal(m.d.warnings[0].kind, 'events')
  assert.equal(m.d.category, d0.category)

  // The line that names the profiles lost: they are still found by the probe's names for them, culprits kept.
  const named = await copyRun('events-profiles-line')
  const log = (await readFile(named.events, 'utf8')).split('\n')
  const p = log.findIndex(l => l.includes('"type":"profiles"'))
  assert.ok(p > 0 && p < log.length - 2, 'the profiles line is inside the log')
  log[p] = '#' + log[p]
  await writeFile(named.events, log.join('\n'))
  const l = await analyse(named.dir)
  assert.equal(l.r.code, 2)
  assert.ok(l.lines[1].includes(`(line ${p + 1}, at byte`), l.lines[1])
  assert.deepEqual(l.d.culprits, d0.culprits)

  const cut = await copyRun('events-cut')
  const text = await readFile(cut.events, 'utf8')
  await writeFile(cut.events, text + '{"type":"sample","time":17')
  const c = await analyse(cut.dir)
  assert.equal(c.r.code, 0, c.r.stdout)
  assert.deepEqual(c.d.warnings, [])
  assert.equal(c.d.category, d0.category)
  assert.deepEqual(c.d.culprits, d0.culprits)
})

test('a saved run whose event log was deleted, or whose run.json is corrupt: the file named first, exit 2, in --analyse and compare', async () => {
  await baseline()
  const { dir, events } = await copyRun('events-deleted')
  await rm(events)
  const { r, d, lines } = await analyse(dir)
  assert.equal(r.code, 2, r.stdout + r.stderr)
  assert.equal(lines[0], 'hotpath doctor: insufficient-data (not enough data) — unreliable: files of the run are damaged')
  assert.ok(lines[1].includes(`(${events}) is missing: nothing of this thread is in the analysis`), lines[1])
  assert.doesNotMatch(r.stdout, /run the load longer|Load the server for longer/, 'a lost log is not a load too short')
  assert.match(d.summary, /because the event log that held them is missing/)
  assert.deepEqual(d.warnings.map((/** @type {any} */ w) => [w.kind, w.problem, w.affects]), [['events', 'missing', 'verdict']])
  const { dir: whole } = await copyRun('compared-with')
  const compared = await hotpath(['compare', whole, dir])
  assert.equal(compared.code, 2, compared.stdout + compared.stderr)
  assert.ok(compared.stdout.split('\n')[0].startsWith(`hotpath compare: ${dir} is unreliable, files of the run are damaged: The event log of pid `), compared.stdout)
  assert.ok(compared.stdout.split('\n')[0].includes(`(${events}) is missing`))

  const corrupt = await copyRun('run-json-corrupt')
  await writeFile(join(corrupt.dir, 'run.json'), '{"kind":"hotpath-run","loadWin')
  for (const [command, args] of /** @type {[string, string[]][]} */ ([['doctor', ['--analyse', corrupt.dir]], ['compare', [whole, corrupt.dir]]])) {
    const c = await hotpath([command, ...args])
    assert.equal(c.code, 2, command)
    assert.equal(c.stderr, `hotpath ${command}: '${join(corrupt.dir, 'run.json')}' is not valid JSON\n`)
  }
})

test('a directory that is not a run: one line, exit 2', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-truth-empty-'))
  const r = await hotpath(['doctor', '--analyse', dir])
  assert.equal(r.code, 2)
  assert.match(r.stderr, /^hotpath doctor: no hotpath run in '.*' \(run\.json is missing\)\n$/)
})
