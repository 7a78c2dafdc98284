// monitor(): the production view of the event loop, memory and GC, at the user's interval.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { Monitor, monitor } from 'hotpath/runtime'
import { runModule } from './helpers/child.js'

test('an event per interval, and a snapshot with the latest measures and totals since start', async () => {
  const m = monitor({ interval: 50 })
  // the monitor's timer is unref'd: something else must keep this process up while the test waits for it
  const keepAlive = setInterval(() => {}, 1000)
  try {
    assert.ok(m instanceof Monitor)
    assert.equal(m.interval, 50)
    /** @type {import('../src/runtime/monitor.js').Sample[]} */
    const samples = []
    m.on('sample', (s) => samples.push(s))
    const [first] = await once(m, 'sample')
    assert.ok(first.interval >= 40 && first.interval < 1000, `interval ${first.interval}`)
    setTimeout(() => { const end = Date.now() + 60; while (Date.now() < end); }, 10)
    const junk = []
    for (let i = 0; i < 200000; i++) junk.push({ i })
    await sleep(300)
    assert.ok(samples.length >= 4, `${samples.length} samples`)
    const snap = m.snapshot()
    assert.equal(snap.time, samples.at(-1)?.time, 'the snapshot is the latest sample')
    assert.ok(snap.resources && typeof snap.resources === 'object')
    assert.ok(Object.keys(snap.heapSpaces).length > 0, 'the latest heap spaces, even when the last sample had none')
    assert.ok(snap.totals.samples >= samples.length)
    assert.ok(snap.totals.gc.byKind.scavenge.count > 0, 'garbage was collected')
    assert.ok(snap.totals.gc.count >= samples.reduce((a, s) => a + s.gc.count, 0), 'totals add up every sample')
    assert.ok(Math.max(...samples.map(s => s.delay.max)) >= 50, 'the 60 ms block shows')
    assert.ok(snap.totals.cpu.user > 0)
    assert.ok(junk.length > 0)
    // snapshots are copies: changing one changes nothing inside
    snap.totals.samples = -1
    assert.notEqual(m.snapshot().totals.samples, -1)
  } finally {
    m.stop()
    clearInterval(keepAlive)
  }
  assert.equal(m.running, false)
  const count = m.snapshot().totals.samples
  await sleep(120)
  assert.equal(m.snapshot().totals.samples, count, 'stopped means stopped')
})

test('snapshot() before the first interval ends still has measures', () => {
  const m = monitor({ interval: 60000 })
  try {
    const s = m.snapshot()
    assert.ok(s.memory.heapUsed > 0)
    assert.ok(Object.keys(s.heapSpaces).length > 0)
    assert.equal(s.totals.samples, 1)
  } finally {
    m.stop()
  }
})

test('a monitor does not keep the process alive, and a throwing listener does not crash it', async () => {
  const r = await runModule(`
    import { monitor } from 'hotpath/runtime'
    const m = monitor({ interval: 10 })
    let n = 0
    m.on('sample', () => { n++; throw new Error('listener bug') })
    setTimeout(() => console.log('samples', n), 100)
  `)
  assert.equal(r.timedOut, false)
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /samples [1-9]/)
  assert.match(r.stderr, /HotpathWarning: hotpath: a monitor 'sample' listener threw: Error: listener bug/)
})
