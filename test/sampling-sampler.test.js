// The sampler that the doctor's probe and hotpath/runtime's monitor share: real loops blocked for known times, real
// garbage, a real worker thread and real child processes for what must not keep a process alive.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sampler } from 'hotpath/runtime'
import { runModule } from './helpers/child.js'

/** @param {number} ms */
function block (ms) {
  const end = Date.now() + ms
  while (Date.now() < end);
}

/**
 * Runs this thread for `ms` of CPU time, however long a busy machine takes to give it that.
 * @param {number} ms
 */
function spin (ms) {
  const start = process.cpuUsage()
  for (;;) {
    const used = process.cpuUsage(start)
    if (used.user + used.system >= ms * 1000) return
  }
}

/**
 * Samples for `ms` while `during` runs, and returns what the timer produced.
 * @param {import('../src/sampling/sampler.js').SamplerOptions} opts
 * @param {number} ms
 * @param {() => void} [during]
 */
async function sampleFor (opts, ms, during) {
  /** @type {import('../src/sampling/sampler.js').Sample[]} */
  const samples = []
  const sampler = new Sampler({ ...opts, onSample: (s) => samples.push(s) })
  sampler.start()
  if (during) setTimeout(during, 50)
  await sleep(ms)
  sampler.stop()
  return samples
}

test('a blocked loop shows as event-loop delay and utilisation in the interval that contains it', async () => {
  const samples = await sampleFor({ interval: 10, threadTime: true }, 400, () => block(80))
  assert.ok(samples.length >= 10, `${samples.length} samples`)
  const worst = samples.reduce((a, b) => (b.delay.max > a.delay.max ? b : a))
  assert.ok(worst.delay.max >= 70, `max delay ${worst.delay.max} ms for an 80 ms block`)
  assert.ok(worst.interval >= 70, `the interval with the block lasted ${worst.interval} ms`)
  assert.ok(worst.utilization > 0.5, `utilisation ${worst.utilization}`)
  if (process.platform === 'linux') {
    // the thread's own time: on a CPU, or waiting in the run queue for one
    const t = worst.thread
    assert.ok(t && t.cpu + t.wait >= 70 && t.cpu + t.wait <= worst.interval + 1, `thread time ${JSON.stringify(t)} of ${worst.interval} ms`)
  }
  const d = worst.delay
  assert.ok(d.min <= d.p50 && d.p50 <= d.p90 && d.p90 <= d.p99 && d.p99 <= d.max, JSON.stringify(d))
  // the quiet intervals are quiet
  const quiet = samples.filter(s => s !== worst && s.time < worst.time - 100)
  assert.ok(quiet.length > 0)
  for (const s of quiet) assert.ok(s.delay.p50 < 20, `quiet p50 ${s.delay.p50}`)
  for (const s of samples) {
    assert.ok(s.time > Date.now() - 10000 && s.time <= Date.now())
    assert.ok(s.utilization >= 0 && s.utilization <= 1)
    assert.ok(s.memory.rss > 0 && s.memory.heapUsed > 0 && s.memory.heapTotal >= s.memory.heapUsed)
    assert.equal(typeof s.memory.external, 'number')
    assert.equal(typeof s.memory.arrayBuffers, 'number')
  }
})

test('with the resolution at the interval (the probe\'s settings) the sampler\'s own timer is the tick: a block is one late sample', async () => {
  const samples = await sampleFor({ interval: 10, resolution: 10 }, 400, () => block(80))
  const late = samples.filter(s => s.delay.max >= 20)
  assert.equal(late.length, 1, JSON.stringify(samples.map(s => s.delay.max)))
  assert.ok(late[0].delay.max >= 65 && late[0].delay.max <= late[0].interval, `max delay ${late[0].delay.max} ms for an 80 ms block, in ${late[0].interval} ms`)
  const d = late[0].delay
  assert.ok(d.min === d.max && d.p99 === d.max && d.mean === d.max, 'one tick: every statistic is its lateness')
  const quiet = samples.filter(s => s !== late[0])
  assert.ok(quiet.length >= 10, `${quiet.length} quiet samples`)
  assert.ok(quiet.filter(s => s.delay.max < 5).length >= quiet.length * 0.8, JSON.stringify(quiet.map(s => s.delay.max)))
})

test('intervals are contiguous: the samples\' CPU adds up to what the process used, also read every n-th sample, and the thread\'s time with it', async () => {
  for (const cpuEvery of [1, 5]) {
    /** @type {import('../src/sampling/sampler.js').Sample[]} */
    const samples = []
    const sampler = new Sampler({ interval: 10, cpuEvery, threadTime: true, onSample: (s) => samples.push(s) })
    // Read just before start(), which takes the sampler's own first reading: building the sampler (its first run
    // compiles code, opens /proc) is not in any sample's span, and once cost more than the 3 ms allowed below.
    const before = process.cpuUsage()
    sampler.start()
    setTimeout(() => spin(50), 20)
    await sleep(150)
    samples.push(sampler.sample()) // reads whatever the cadence: it closes the last span
    const used = process.cpuUsage(before)
    sampler.stop()
    const total = samples.reduce((a, s) => a + s.cpu.user + s.cpu.system, 0)
    const expected = (used.user + used.system) / 1000
    assert.ok(total > 0)
    // all but the moments between the cpuUsage() calls around start and after the last sample
    assert.ok(total <= expected + 0.5 && total >= expected - 3, `every ${cpuEvery}: samples ${total} ms, process ${expected} ms`)
    const wall = samples.reduce((a, s) => a + s.interval, 0)
    assert.ok(wall >= 140 && wall <= 400, `intervals add up to the time sampled: ${wall} ms`)
    if (process.platform === 'linux') {
      // read with the CPU, over the same span: the 50 ms of CPU spun ran on this thread
      for (const [i, s] of samples.entries()) {
        const read = cpuEvery === 1 || s.cpu.span !== 0
        assert.equal(s.thread !== undefined, read, `sample ${i}: thread ${JSON.stringify(s.thread)}, cpu ${JSON.stringify(s.cpu)}`)
        if (s.thread !== undefined) assert.ok(Math.abs(s.thread.span - (s.cpu.span ?? s.interval)) < 0.05, `sample ${i}: thread span ${s.thread.span}`)
      }
      const thread = samples.reduce((a, s) => a + (s.thread?.cpu ?? 0), 0)
      assert.ok(thread >= 45 && thread <= total + 0.5, `every ${cpuEvery}: the thread ran ${thread} ms, the process ${total} ms`)
    }
    if (cpuEvery === 1) {
      assert.ok(samples.every(s => s.cpu.span === undefined))
      continue
    }
    // a read covers the samples since the one before it: zeros and span 0 between
    let unread = 0
    for (const [i, s] of samples.entries()) {
      unread += s.interval
      const read = (i + 1) % cpuEvery === 0 || i === samples.length - 1
      if (!read) {
        assert.deepEqual(s.cpu, { user: 0, system: 0, span: 0 }, `sample ${i}`)
        continue
      }
      assert.ok(Math.abs(/** @type {number} */ (s.cpu.span) - unread) < 0.05, `sample ${i}: span ${s.cpu.span} ms, intervals ${unread} ms`)
      unread = 0
    }
  }
})

test('pace stretches the cadence: a sample every pace-th interval, the CPU read as often in time, a block still one late sample, and pace 1 puts it back', async () => {
  /** @type {import('../src/sampling/sampler.js').Sample[]} */
  const samples = []
  const sampler = new Sampler({ interval: 10, resolution: 10, cpuEvery: 10, onSample: (s) => samples.push(s) })
  sampler.start()
  sampler.pace = 10
  assert.equal(sampler.pace, 10)
  await sleep(550)
  const paced = samples.slice()
  assert.ok(paced.length >= 3 && paced.length <= 6, `${paced.length} samples in 550 ms at 100 ms`)
  for (const s of paced) {
    assert.ok(s.interval >= 90, `a paced sample spans ${s.interval} ms`)
    // read every 100 ms before, so on every sample now: each spans what its interval does
    assert.ok(s.cpu.span !== undefined && Math.abs(s.cpu.span - s.interval) < 0.05, `cpu ${JSON.stringify(s.cpu)} over ${s.interval} ms`)
  }
  // lateness is measured against the stretched period: quiet ticks are on time
  assert.ok(paced.filter(s => s.delay.max < 5).length >= paced.length - 1, JSON.stringify(paced.map(s => s.delay.max)))
  // a block longer than the period is one late tick, as late as the block outlasted the tick's due time
  setTimeout(() => block(250), 0)
  await sleep(450)
  const late = samples.slice(paced.length).filter(s => s.delay.max >= 50)
  assert.equal(late.length, 1, JSON.stringify(samples.slice(paced.length).map(s => s.delay.max)))
  assert.ok(late[0].delay.max >= 140 && late[0].delay.max <= 260, `max delay ${late[0].delay.max} ms for a 250 ms block`)
  sampler.pace = 1
  const at = samples.length
  await sleep(300)
  sampler.stop()
  const back = samples.slice(at)
  assert.ok(back.length >= 12, `${back.length} samples in 300 ms at 10 ms again`)
  // and the CPU every tenth sample again, spans adding up
  assert.ok(back.some(s => s.cpu.span === 0), 'samples between the reads')
})

test('exactDelay: false bounds the percentiles of on-time ticks by max, and still sees a blocked interval', async () => {
  const samples = await sampleFor({ interval: 10, exactDelay: false }, 400, () => block(80))
  const worst = samples.reduce((a, b) => (b.delay.max > a.delay.max ? b : a))
  assert.ok(worst.delay.max >= 70, `max delay ${worst.delay.max} ms for an 80 ms block`)
  const onTime = samples.filter(s => s.delay.max < 1 && s.delay.max > 0)
  assert.ok(onTime.length > 0)
  for (const s of onTime) {
    const d = s.delay
    assert.ok(d.p50 === d.max && d.p90 === d.max && d.p99 === d.max && d.min <= d.mean && d.mean <= d.max, JSON.stringify(d))
  }
})

test('costlier measures come at the slow interval: active resources by type and heap spaces', async () => {
  const samples = await sampleFor({ interval: 10, slowInterval: 100 }, 450)
  const slow = samples.filter(s => s.resources !== undefined)
  assert.ok(samples[0].resources !== undefined, 'the first sample has them')
  assert.ok(slow.length >= 3 && slow.length < samples.length / 2, `${slow.length} of ${samples.length}`)
  for (const s of slow) {
    assert.ok(s.heapSpaces !== undefined)
    assert.ok((s.heapSpaces.old_space ?? 0) > 0, JSON.stringify(s.heapSpaces))
    assert.ok((s.heapSpaces.new_space ?? 0) >= 0)
  }
  // sleep() from timers/promises holds a ref'd Timeout while the test waits
  assert.ok(slow.some(s => (s.resources?.Timeout ?? 0) >= 1), JSON.stringify(slow[0].resources))
  for (const s of samples) {
    if (s.resources === undefined) assert.equal(s.heapSpaces, undefined)
  }
})

test('garbage shows as GCs by kind, counted once', async () => {
  let keep = 0
  const samples = await sampleFor({ interval: 10 }, 500, () => {
    for (let i = 0; i < 300; i++) {
      const junk = []
      for (let j = 0; j < 2000; j++) junk.push({ i, j, s: 'x'.repeat(j % 7) })
      keep += junk.length
    }
  })
  assert.ok(keep > 0)
  let count = 0
  let duration = 0
  let scavenges = 0
  for (const s of samples) {
    const kinds = Object.values(s.gc.byKind)
    assert.deepEqual(Object.keys(s.gc.byKind).sort(), ['incremental', 'mark-compact', 'scavenge', 'weak-callbacks'])
    assert.equal(kinds.reduce((a, k) => a + k.count, 0), s.gc.count)
    count += s.gc.count
    duration += s.gc.duration
    scavenges += s.gc.byKind.scavenge.count
  }
  assert.ok(scavenges > 0, `${scavenges} scavenges`)
  assert.ok(count >= scavenges && duration > 0, `${count} GCs, ${duration} ms`)
})

test('sample() closes the interval on demand and works before start and after stop', async () => {
  const sampler = new Sampler({ interval: 1000 })
  const before = sampler.sample()
  assert.deepEqual(before.delay, { min: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: 0 })
  assert.equal(before.gc.count, 0)
  sampler.start()
  assert.equal(sampler.running, true)
  await sleep(30)
  // (the delay histogram reads a block less the part of its resolution, 10 ms, that had passed when it began: 40 ms
  // read 29.8 once)
  block(50)
  await sleep(15)
  const s = sampler.sample()
  assert.ok(s.interval >= 90 && s.interval < 1000, `interval ${s.interval}`)
  assert.ok(s.delay.max >= 30, `max ${s.delay.max}`)
  assert.ok(s.resources !== undefined, 'the first sample after start has the slow measures')
  const next = sampler.sample()
  assert.ok(next.interval < s.interval, 'the next interval starts when the previous closed')
  assert.equal(next.resources, undefined)
  sampler.stop()
  assert.equal(sampler.running, false)
  assert.equal(sampler.sample().gc.count, 0)
  sampler.stop() // twice is harmless
})

test('each worker thread samples its own loop and heap', async () => {
  const worker = new Worker(`
    const { parentPort } = require('node:worker_threads')
    import('hotpath/runtime').then(({ Sampler }) => {
      const samples = []
      const sampler = new Sampler({ interval: 10, onSample: (s) => samples.push(s) })
      sampler.start()
      const keep = []
      setTimeout(() => {
        for (let i = 0; i < 64; i++) keep.push(new Array(128 * 1024).fill(i))
        const end = Date.now() + 120; while (Date.now() < end);
      }, 60)
      setTimeout(() => {
        sampler.stop()
        parentPort.postMessage({ maxDelay: Math.max(...samples.map(s => s.delay.max)), heapUsed: Math.max(...samples.map(s => s.memory.heapUsed)), kept: keep.length })
      }, 400)
    })
  `, { eval: true })
  /** @type {import('../src/sampling/sampler.js').Sample[]} */
  const main = []
  const sampler = new Sampler({ interval: 10, onSample: (s) => main.push(s) })
  sampler.start()
  const [result] = await once(worker, 'message')
  sampler.stop()
  await worker.terminate()
  assert.ok(result.maxDelay >= 100, `the worker saw its own 120 ms block: ${result.maxDelay}`)
  assert.ok(result.heapUsed > 64 * 1024 * 1024, `the worker's heap holds its 64 MB: ${result.heapUsed}`)
  const mainMax = Math.max(...main.map(s => s.delay.max))
  assert.ok(mainMax < result.maxDelay, `the main loop was not blocked: ${mainMax}`)
  assert.ok(Math.max(...main.map(s => s.memory.heapUsed)) < result.heapUsed, 'the main heap is not the worker\'s')
})

test('a running sampler does not keep the process alive, and a throwing onSample does not crash it', async () => {
  const r = await runModule(`
    import { Sampler } from 'hotpath/runtime'
    let n = 0
    new Sampler({ interval: 5, onSample: () => { n++; throw new Error('boom from onSample') } }).start()
    new Sampler({ interval: -3 }).start()
    setTimeout(() => console.log('samples', n), 100)
  `)
  assert.equal(r.timedOut, false, 'the process exited on its own')
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /samples ([1-9]\d*)/)
  assert.match(r.stderr, /HotpathWarning.*Sampler onSample threw: Error: boom from onSample/)
  assert.equal(r.stderr.match(/boom from onSample/g)?.length, 1, 'warned once, not once per sample')
  assert.match(r.stderr, /Sampler interval must be a positive number, got -3; using 10/)
})
