// The analysis returns facts and the report words them: the rules are tested on the facts of runs written here
// (every sample known exactly), and the JSON is checked to carry, next to each sentence, the numbers it shows.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { diagnose } from '../src/analysis/diagnose.js'
import { readRun } from '../src/analysis/run-data.js'
import { formatMs } from '../src/report/format.js'
import { wordDiagnosis } from '../src/report/words/diagnosis.js'
import { hotpath } from './helpers/cli.js'

const PID = 4242
const PORT = 3999

/**
 * A two-second load window sampled every 10 ms, as the probe writes it.
 * @param {{ delayP99?: number, delayMax?: number, utilization?: number, cpuMs?: number | ((k: number) => number), finished?: number, seconds?: number, run?: object }} s
 *   per sample: event-loop delay (ms), utilisation, CPU (ms, or a function of the sample's index) and requests
 *   finished; the window's length; and more of the run record (how the target exited, the --on-port command)
 * @returns {Promise<string>} the run directory
 */
async function writeRun ({ delayP99 = 0, delayMax = delayP99, utilization = 0.3, cpuMs = 1, finished = 10, seconds = 2, run = {} } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-facts-'))
  const t0 = 1_800_000_000_000
  /** @type {object[]} */
  const events = [
    { type: 'hello', time: t0 - 50, pid: PID, ppid: 1, threadId: 0, argv: ['node', 'server.js'], execArgv: [], cwd: dir, node: process.version, heapLimit: 4e9, role: 'main', interval: 10 },
    { type: 'listening', time: t0 - 40, port: PORT, address: '127.0.0.1' },
    { type: 'load-start', time: t0 }
  ]
  const samples = seconds * 100
  const cpuAt = typeof cpuMs === 'function' ? cpuMs : () => cpuMs
  for (let k = 0; k <= samples; k++) {
    events.push({
      type: 'sample',
      time: t0 + 10 * k,
      interval: 10,
      delay: { min: 0, mean: delayP99 / 2, p50: delayP99 / 2, p90: delayP99, p99: delayP99, max: delayMax },
      utilization,
      cpu: { user: cpuAt(k) * 0.8, system: cpuAt(k) * 0.2 },
      memory: { rss: 60e6, heapUsed: 10e6, heapTotal: 20e6, external: 1e6, arrayBuffers: 1e5 },
      gc: { count: 0, duration: 0, byKind: {} },
      requests: [{ port: PORT, started: finished, finished, inflight: 1 }]
    })
  }
  events.push({ type: 'load-stop', time: t0 + seconds * 1000 })
  await writeFile(join(dir, `events-${PID}-0.ndjson`), events.map(e => JSON.stringify(e)).join('\n') + '\n')
  await writeFile(join(dir, 'run.json'), JSON.stringify({
    kind: 'hotpath-run',
    version: '0.1.0',
    command: ['node', 'server.js'],
    cwd: dir,
    startedAt: t0 - 100,
    listening: { pid: PID, port: PORT, host: '127.0.0.1', tls: false },
    url: `http://127.0.0.1:${PORT}/`,
    loadWindow: { start: t0, end: t0 + seconds * 1000 },
    ...run
  }))
  return dir
}

/**
 * @param {import('../src/analysis/diagnose.js').Diagnosis} d
 * @param {string} signal
 */
function row (d, signal) {
  const e = d.evidence.find(x => x.signal === signal)
  assert.ok(e, `evidence ${signal}`)
  return e
}

test('a server that serves quickly at low CPU: healthy, with the figures its summary cites', async () => {
  const d = diagnose(readRun(await writeRun()))
  assert.equal(d.category, 'healthy')
  const f = d.measured.facts
  assert.equal(f.kind, 'healthy')
  if (f.kind !== 'healthy') return
  assert.ok(Math.abs(f.requestsPerSecond - 1000) < 20, `req/s ${f.requestsPerSecond}`)
  assert.ok(Math.abs(f.cpuPerRequestMs - 0.1) < 0.01, `CPU per request ${f.cpuPerRequestMs}`)
  assert.equal(f.busy, false)
  assert.equal(f.otherCores, null)
  assert.equal(row(d, 'event-loop-delay-p99').state, 'ok')
  assert.equal(row(d, 'event-loop-utilization').state, 'mostly-idle')
  assert.equal(row(d, 'cpu-per-request').state, 'ok')
  const rps = row(d, 'requests-per-second')
  assert.equal(rps.state, 'measured')
  assert.ok(rps.facts.finished >= 1990 && rps.facts.finished <= 2010, `finished ${rps.facts.finished}`)
  assert.ok(d.evidence.every(e => !e.decisive), 'nothing decided a healthy verdict')
  assert.deepEqual(d.recommendations.map(r => r.kind), ['compare-runs'])
  const words = wordDiagnosis(d)
  assert.match(words.summary, new RegExp(`${formatMs(f.cpuPerRequestMs)} of CPU each`))
})

// CPU per request is net of the probe's own work: when nothing is left, the requests cost too little to tell — no
// bare "0" and no "0 ms" measured, either.
test('requests whose CPU does not exceed the probe\'s own: the summary says they cost too little to tell', async () => {
  assert.equal(formatMs(0), '0 ms', 'a duration has a unit, zero too')
  assert.equal(formatMs(0.0004), '0.400 µs')
  const d = diagnose(readRun(await writeRun({ cpuMs: 0 })))
  assert.equal(d.category, 'healthy')
  const f = d.measured.facts
  assert.equal(f.kind === 'healthy' && f.cpuPerRequestMs, 0)
  const { summary } = wordDiagnosis(d)
  assert.match(summary, /requests\/s at too little CPU each to tell apart from hotpath's own, event-loop delay p99/)
  assert.doesNotMatch(summary, /at 0( ms)? of CPU/)
})

test('single tasks that hold the loop for over a second: event-loop, long tasks, and advice about them', async () => {
  const d = diagnose(readRun(await writeRun({ delayP99: 250, delayMax: 1500 })))
  assert.equal(d.category, 'event-loop')
  const f = d.measured.facts
  assert.equal(f.kind, 'long-tasks')
  if (f.kind !== 'long-tasks') return
  assert.ok(f.delayMaxMs >= 1500 && f.delayP99Ms >= 100, `max ${f.delayMaxMs}, p99 ${f.delayP99Ms}`)
  assert.ok(f.cpuPerRequestMs < 2)
  const p99 = row(d, 'event-loop-delay-p99')
  assert.equal(p99.state, 'blocked')
  assert.equal(p99.threshold, 100)
  assert.equal(p99.decisive, true)
  assert.equal(row(d, 'event-loop-delay-max').state, 'blocked-over-a-second')
  assert.equal(d.evidence[0].decisive, true, 'decisive rows come first')
  assert.deepEqual(d.recommendations.map(r => r.kind), ['move-cpu-work', 'profile', 'long-task'])
  const long = d.recommendations.find(r => r.kind === 'long-task')
  assert.equal(long?.kind === 'long-task' && long.delayMaxMs, f.delayMaxMs)
  const profile = d.recommendations.find(r => r.kind === 'profile')
  assert.equal(profile?.kind === 'profile' && profile.command, 'node server.js')
  const words = wordDiagnosis(d)
  assert.match(words.summary, new RegExp(`up to ${formatMs(f.delayMaxMs)} \\(p99 ${formatMs(f.delayP99Ms)}\\)`))
  assert.match(words.recommendations[2], new RegExp(`held the loop for ${formatMs(f.delayMaxMs)}`))
})

test('a request that costs 5 ms of CPU on a busy loop: event-loop, cpu-per-request', async () => {
  const d = diagnose(readRun(await writeRun({ delayP99: 20, utilization: 0.95, cpuMs: 9.5, finished: 2 })))
  assert.equal(d.category, 'event-loop')
  const f = d.measured.facts
  assert.equal(f.kind, 'cpu-per-request')
  if (f.kind !== 'cpu-per-request') return
  assert.ok(Math.abs(f.cpuPerRequestMs - 4.75) < 0.1, `CPU per request ${f.cpuPerRequestMs}`)
  const cpu = row(d, 'cpu-per-request')
  assert.equal(cpu.state, 'high')
  assert.equal(cpu.decisive, true)
  assert.equal(row(d, 'event-loop-utilization').state, 'busy')
})

test('no request finished and the loop never blocked: not enough data', async () => {
  const d = diagnose(readRun(await writeRun({ finished: 0 })))
  assert.equal(d.category, 'insufficient-data')
  assert.equal(d.measured.facts.kind, 'no-requests')
  assert.deepEqual(d.culprits, [])
  assert.deepEqual(d.recommendations.map(r => r.kind), ['load-longer'])
})

test('the JSON of doctor keeps its sentences and carries the facts they are made from', async () => {
  const dir = await writeRun({ delayP99: 250, delayMax: 1500 })
  const r = await hotpath(['doctor', '--analyse', dir, '--json', '-', '--report', join(dir, 'r.html')])
  assert.equal(r.code, 0, r.stderr)
  const d = JSON.parse(r.stdout)
  assert.equal(d.category, 'event-loop')
  assert.equal(typeof d.summary, 'string')
  assert.equal(d.measured.summary, d.summary)
  assert.equal(d.measured.facts.kind, 'long-tasks')
  assert.deepEqual(d.facts.summary, d.measured.facts)
  assert.equal(d.recommendations.length, d.facts.recommendations.length)
  assert.ok(d.recommendations.every((/** @type {unknown} */ t) => typeof t === 'string'))
  for (const e of d.evidence) {
    for (const k of ['signal', 'label', 'verdict', 'state']) assert.equal(typeof e[k], 'string', `${e.signal}.${k}`)
    assert.equal(typeof e.value, 'number')
    assert.equal(typeof e.facts, 'object')
  }
  const rps = d.evidence.find((/** @type {any} */ e) => e.signal === 'requests-per-second')
  assert.equal(rps.verdict, `${rps.facts.finished.toLocaleString('en-US')} in ${rps.facts.seconds.toFixed(1)} s`)
})

test('each request costing more than the last at the same load is said with the verdict, in the evidence and first in the advice', async () => {
  // 6 s at 10 requests a sample, the CPU per request climbing from 0.05 ms to 0.2 ms
  const d = diagnose(readRun(await writeRun({ seconds: 6, cpuMs: (k) => 0.5 + 1.5 * k / 600 })))
  const g = d.measured.facts.growingCost
  assert.ok(g, 'a growing cost')
  assert.ok(g.lastMs > 2 * g.firstMs, `from ${g.firstMs} to ${g.lastMs} ms`)
  assert.ok(g.requests > 3000 && g.requests < 6000, `over ${g.requests} requests`)
  const trend = row(d, 'cost-per-request-trend')
  assert.equal(trend.state, 'rising')
  assert.equal(d.recommendations[0].kind, 'growing-state')
  const words = wordDiagnosis(d)
  assert.match(words.summary, /Each request costs more than the last: CPU per request rose from/)
  assert.match(words.recommendations[0], /hotpath heap -- node server\.js/)
})

test('a growing cost is blamed on what grows: the holder heap snapshots found gaining an object per request', async () => {
  const dir = await writeRun({ seconds: 6, cpuMs: (k) => 0.5 + 1.5 * k / 600 })
  // What doctor's phases after the load wrote: 3,000 requests, 3,000 `Object`s more in `history`, and the runtime's
  // own settling (a handful of code objects) that does not count.
  const holder = { name: 'history', kind: 'variable', holder: 'scope around (module)', file: join(dir, 'server.js'), line: 4 }
  await writeFile(join(dir, 'retainers.json'), JSON.stringify({
    requests: 3000,
    culprits: [
      { constructor: 'Object', count: 3000, bytes: 96000, bytesPerRequest: 32, holding: 'history', holder: 'Array', function: '(module)', file: join(dir, 'server.js'), line: 4, retainers: [{ name: '[2999]', kind: 'element', holder: 'Array', file: null, line: null }, holder] },
      { constructor: '(code)', count: 40, bytes: 9000, bytesPerRequest: 3, holding: 'cache', holder: 'Map', function: '(module)', file: join(dir, 'other.js'), line: 9, retainers: [] }
    ],
    survivors: { count: 3040, bytes: 105000 },
    minCount: 150,
    error: null
  }))
  const { costRoseDuringLoad } = await import('../src/analysis/cost-check.js')
  assert.equal(costRoseDuringLoad(dir, { pid: PID, port: PORT, start: 1_800_000_000_000, end: 1_800_000_006_000 }), true, 'seen while the run is in progress')
  const d = diagnose(readRun(dir))
  const g = d.measured.facts.growingCost
  assert.deepEqual(g?.grows && { holding: g.grows.holding, holder: g.grows.holder, file: g.grows.file, line: g.grows.line, perRequest: g.grows.perRequest }, { holding: 'history', holder: 'Array', file: 'server.js', line: 4, perRequest: 1 })
  assert.ok(d.culprits.slice(0, 2).some(c => c.measure === 'retained' && c.file === 'server.js' && c.line === 4), 'the holder is among the first culprits')
  const words = wordDiagnosis(d)
  assert.match(words.summary, /Each request costs more than the last because `history` \(Array, server\.js:4\) grows by one `Object` per request/)
  assert.match(words.recommendations[0], /`history` \(Array, server\.js:4\) grows with every request: bound it/)
})

test('a steady cost per request is not seen rising while the run is in progress either', async () => {
  const dir = await writeRun({ seconds: 6 })
  const { costRoseDuringLoad } = await import('../src/analysis/cost-check.js')
  assert.equal(costRoseDuringLoad(dir, { pid: PID, port: PORT, start: 1_800_000_000_000, end: 1_800_000_006_000 }), false)
  assert.equal(costRoseDuringLoad(join(dir, 'missing'), { pid: PID, port: PORT, start: 0, end: 1 }), false)
})

test('a steady cost per request, and one that falls as code warms up, are not a growing one', async () => {
  const steady = diagnose(readRun(await writeRun({ seconds: 6 })))
  assert.equal(steady.measured.facts.growingCost, null)
  assert.equal(row(steady, 'cost-per-request-trend').state, 'steady')
  const warming = diagnose(readRun(await writeRun({ seconds: 6, cpuMs: (k) => 2 - 1.5 * k / 600 })))
  assert.equal(warming.measured.facts.growingCost, null)
  assert.ok(!warming.recommendations.some(r => r.kind === 'growing-state'))
})

test('a failed run\'s first sentence comes with its facts: the exit code of the target, or of the --on-port command', async () => {
  const crashed = diagnose(readRun(await writeRun({ run: { exit: { code: 1, signal: null, crashed: true } } })))
  assert.equal(crashed.category, 'target-failed')
  assert.deepEqual(crashed.failure?.facts, { kind: 'target-exited', code: 1, signal: null })
  assert.match(wordDiagnosis(crashed).summary, /^The run did not measure the server: the target exited with code 1, 2 s into the load\./)
  const killed = diagnose(readRun(await writeRun({ run: { exit: { code: null, signal: 'SIGKILL', crashed: true } } })))
  assert.deepEqual(killed.failure?.facts, { kind: 'target-exited', code: null, signal: 'SIGKILL' })
  const onPort = diagnose(readRun(await writeRun({ run: { onPort: { command: 'exit 7', code: 7 } } })))
  assert.equal(onPort.category, 'load-failed')
  assert.deepEqual(onPort.failure?.facts, { kind: 'on-port-failed', code: 7 })
  assert.match(wordDiagnosis(onPort).summary, /the --on-port command exited with code 7\./)
})
