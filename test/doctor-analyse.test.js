// Re-analysis of a recorded run (hotpath doctor --analyse) on a run directory written here, so that the timing of
// every sample and GC pause is known exactly.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath } from './helpers/cli.js'

const PID = 4242
const PORT = 3999

/**
 * A one-second load window sampled every 10 ms, as the probe writes it: each sample's time is Date.now() (whole
 * milliseconds) and its interval the exact time since the previous sample, so consecutive samples leave sub-millisecond
 * gaps between one's time and the next one's start. V8's trace puts a 5 ms scavenge's end in ten of those gaps.
 * The process uses 5 ms of CPU per sample; with `cpuEvery` > 1 it is read only on every cpuEvery-th sample, as the
 * probe reads it.
 * @param {string} dir
 * @param {{ cpuEvery?: number, end?: number, sample?: object }} [opts] end: ms into the run at which the load window
 *   closes; sample: fields every sample has instead
 */
async function writeRun (dir, { cpuEvery = 1, end = 1000, sample = {} } = {}) {
  const t0 = 1_800_000_000_000
  const monotonic = 5_000_000_000 // µs on the trace's clock at t0
  /** @type {object[]} */
  const events = [
    { type: 'hello', time: t0 - 50, pid: PID, ppid: 1, threadId: 0, argv: ['node', 'server.js'], execArgv: [], cwd: dir, node: process.version, heapLimit: 4e9, role: 'main', interval: 10 },
    { type: 'listening', time: t0 - 40, port: PORT, address: '127.0.0.1' },
    { type: 'load-start', time: t0, monotonic }
  ]
  const trueTime = (/** @type {number} */ k) => t0 + 10 * k + (k % 2 === 1 ? 0.1 : 0.9)
  /** @type {[number, number, number][]} */
  const pauses = []
  let unread = 0
  for (let k = 0; k <= 100; k++) {
    const time = Math.floor(trueTime(k))
    const interval = k === 0 ? 10 : Math.round((trueTime(k) - trueTime(k - 1)) * 1000) / 1000
    unread += interval
    events.push({
      type: 'sample',
      time,
      interval,
      delay: { min: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: 0 },
      utilization: 0.5,
      cpu: cpuEvery === 1
        ? { user: 4, system: 1 }
        : k % cpuEvery === cpuEvery - 1 || k === 100
          ? { user: 4 * unread / 10, system: unread / 10, span: unread }
          : { user: 0, system: 0, span: 0 },
      memory: { rss: 60e6, heapUsed: 10e6, heapTotal: 20e6, external: 1e6, arrayBuffers: 1e5 },
      gc: { count: 0, duration: 0, byKind: {} },
      requests: [{ port: PORT, started: 10, finished: 10, inflight: 1 }],
      ...sample
    })
    // after an even sample, the next starts 0.8 ms after this one's whole-millisecond time: a pause ends in between
    if (k % cpuEvery === cpuEvery - 1) unread = 0
    if (k % 2 === 0 && k >= 10 && k < 30) pauses.push([monotonic + (time + 0.5 - t0) * 1000 - 5000, 5000, 0])
  }
  events.push({ type: 'load-stop', time: t0 + 1000 })
  events.push({ type: 'gc-trace', tid: 1, events: pauses })
  await writeFile(join(dir, `events-${PID}-0.ndjson`), events.map(e => JSON.stringify(e)).join('\n') + '\n')
  await writeFile(join(dir, 'run.json'), JSON.stringify({
    kind: 'hotpath-run',
    version: '0.1.0',
    command: ['node', 'server.js'],
    cwd: dir,
    startedAt: t0 - 100,
    listening: { pid: PID, port: PORT, host: '127.0.0.1', tls: false },
    url: `http://127.0.0.1:${PORT}/`,
    loadWindow: { start: t0, end: t0 + end }
  }))
  return pauses.length
}

test('every traced GC pause is counted, also one that ends between two samples\' times', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-analyse-'))
  const pauses = await writeRun(dir)
  assert.equal(pauses, 10)
  const json = join(dir, 'd.json')
  const r = await hotpath(['doctor', '--analyse', dir, '--json', json])
  assert.equal(r.code, 0, r.stderr)
  const d = JSON.parse(await readFile(json, 'utf8'))
  // 10 pauses of 5 ms in a 1,000 ms window
  const thread = d.processes[0].threads[0]
  assert.ok(Math.abs(thread.gcShare - 0.05) < 1e-9, `GC share ${thread.gcShare}`)
  const gc = d.evidence.find((/** @type {any} */ e) => e.signal === 'gc-time')
  assert.ok(Math.abs(gc.value - 0.05) < 1e-4, `gc-time ${gc.value}`)
})

test('CPU read on every tenth sample only is spread back over the samples it covers', async () => {
  /** @type {Record<string, any>} */
  const runs = {}
  for (const cpuEvery of [1, 10]) {
    const dir = await mkdtemp(join(tmpdir(), 'hotpath-analyse-'))
    // the window closes inside a span: its first samples count, though the read that covers them comes after
    await writeRun(dir, { cpuEvery, end: 955 })
    const json = join(dir, 'd.json')
    const r = await hotpath(['doctor', '--analyse', dir, '--json', json])
    assert.equal(r.code, 0, r.stderr)
    runs[cpuEvery] = JSON.parse(await readFile(json, 'utf8'))
  }
  const perRequest = (/** @type {any} */ d) => d.evidence.find((/** @type {any} */ e) => e.signal === 'cpu-per-request').value
  // 5 ms of CPU per 10 ms sample, 10 requests per sample
  assert.ok(Math.abs(perRequest(runs[1]) - 0.5) < 0.01, `every sample: ${perRequest(runs[1])} ms`)
  assert.ok(Math.abs(perRequest(runs[10]) - perRequest(runs[1])) < 0.005, `every tenth: ${perRequest(runs[10])} ms, every: ${perRequest(runs[1])} ms`)
  assert.equal(runs[10].category, runs[1].category)
})

test('a server waiting on an upstream, none of its requests traced, is io though V8\'s threads spend beside it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-analyse-'))
  // As a fetch() API measured: 200 requests a second, 6 in flight (30 ms each on the server), 0.54 cores for the
  // process of which its loop's thread ran 0.28; the rest is V8's compiler and GC threads, and the CPU profiler's.
  await writeRun(dir, {
    sample: {
      utilization: 0.3,
      cpu: { user: 4.4, system: 1 },
      thread: { cpu: 2.8, wait: 0.2, span: 10 },
      requests: [{ port: PORT, started: 2, finished: 2, inflight: 6 }]
    }
  })
  const json = join(dir, 'd.json')
  const r = await hotpath(['doctor', '--analyse', dir, '--json', json])
  assert.equal(r.code, 0, r.stderr)
  const d = JSON.parse(await readFile(json, 'utf8'))
  assert.equal(d.category, 'io', d.summary)
  assert.match(d.summary, /requests take 30\.0 ms on the server but only 2\.70 ms of CPU each/)
})

test('a thread\'s event-loop utilisation is over time: a busy worker that samples seldom reads busy', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-analyse-'))
  await writeRun(dir)
  // A worker busy from its first task: its sampler's timer waits for the loop, so one sample covers 290 ms of work,
  // then three short ones the few idle moments between tasks — 97% of its time busy, though most of its samples are idle.
  const t0 = 1_800_000_000_000
  /** @type {object[]} */
  const events = [
    { type: 'hello', time: t0 - 20, pid: PID, ppid: 1, threadId: 1, argv: ['node', 'server.js'], execArgv: [], cwd: dir, node: process.version, heapLimit: 4e9, role: 'worker-thread', interval: 10 },
    { type: 'load-start', time: t0 + 5, monotonic: 5_000_005_000 }
  ]
  let time = t0 + 5
  for (let k = 0; k < 12; k++) {
    const interval = k % 4 === 0 ? 290 : 3
    time += interval
    events.push({
      type: 'sample',
      time,
      interval,
      delay: { min: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: k % 4 === 0 ? 280 : 0 },
      utilization: k % 4 === 0 ? 1 : 0.1,
      cpu: { user: 0, system: 0 },
      memory: { rss: 60e6, heapUsed: 5e6, heapTotal: 10e6, external: 1e6, arrayBuffers: 1e5 },
      gc: { count: 0, duration: 0, byKind: {} },
      requests: []
    })
  }
  events.push({ type: 'load-stop', time: t0 + 1000 })
  await writeFile(join(dir, `events-${PID}-1.ndjson`), events.map(e => JSON.stringify(e)).join('\n') + '\n')
  const json = join(dir, 'd.json')
  const r = await hotpath(['doctor', '--analyse', dir, '--json', json])
  assert.equal(r.code, 0, r.stderr)
  const d = JSON.parse(await readFile(json, 'utf8'))
  const worker = d.processes[0].threads.find((/** @type {any} */ t) => t.threadId === 1)
  const busy = (3 * 290 + 9 * 3 * 0.1) / (3 * 290 + 9 * 3)
  assert.ok(Math.abs(worker.utilization - busy) < 1e-6, `worker ${worker.utilization}, busy ${busy}`)
  const pool = d.evidence.find((/** @type {any} */ e) => e.signal === 'worker-thread-utilization')
  assert.ok(pool && Math.abs(pool.value - busy) < 1e-3, JSON.stringify(pool))
  // the main thread's samples are all 10 ms long: over time or by sample, the same
  assert.ok(Math.abs(d.processes[0].threads.find((/** @type {any} */ t) => t.threadId === 0).utilization - 0.5) < 1e-6)
})
