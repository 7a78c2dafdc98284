// The probe samples a busy thread less often (src/probe/probe.js, BUSY_PACE): a thread that computes pays for every
// sample in throughput, and its samples all read alike. A thread with time to spare keeps the usual cadence, and the
// verdicts stay what they were. Real runs of the CLI on the examples.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath } from './helpers/cli.js'

/**
 * Runs the doctor for 4 s: the main thread's samples inside the load window, and the diagnosis.
 * @param {string} example
 */
async function samplesOf (example) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-pace-'))
  const save = join(dir, 'run')
  const json = join(dir, 'd.json')
  const r = await hotpath(['doctor', '-d', '4', '-c', '8', '--no-progress', '--save', save, '--json', json, '--', process.execPath, `examples/${example}/server.js`], { env: { PORT: '0' }, timeout: 90000 })
  assert.equal(r.code, 0, r.stderr)
  const files = await readdir(save)
  const events = (await readFile(join(save, /** @type {string} */ (files.find(f => /^events-\d+-0\.ndjson$/.test(f)))), 'utf8'))
    .trim().split('\n').map(line => JSON.parse(line))
  const start = events.find(e => e.type === 'load-start').time
  const stop = events.find(e => e.type === 'load-stop').time
  const samples = events.filter(e => e.type === 'sample' && e.time > start && e.time <= stop)
  return { samples, d: JSON.parse(await readFile(json, 'utf8')) }
}

test('a thread busy computing is sampled every 100 ms, and still reads event-loop with the same line to blame', async () => {
  const { samples, d } = await samplesOf('event-loop')
  const paced = samples.filter(s => s.pace === 10)
  assert.ok(paced.length > 0, 'some samples paced')
  for (const s of paced) assert.ok(s.interval >= 90, `a paced sample spans ${s.interval} ms`)
  // The first 100 ms or so, before the first reading of the thread's time, come at the usual cadence. A sample whose
  // tick came late is not marked (it weighs one, as it would at any pace) but spans as long.
  const long = samples.filter(s => s.interval >= 90)
  assert.ok(long.length >= samples.length * 0.6, `${long.length} of ${samples.length} samples span 90 ms or more`)
  // 4 s at 100 ms: tens of samples, not hundreds
  assert.ok(samples.length < 150, `${samples.length} samples in the window`)
  assert.equal(d.category, 'event-loop')
  assert.equal(d.culprits[0].file, 'examples/event-loop/server.js')
  assert.equal(d.culprits[0].function, 'hashPassword')
})

test('a thread that waits keeps the 10 ms cadence, and still reads io', async () => {
  const { samples, d } = await samplesOf('io')
  // The pace follows runnable time, CPU and queued for it: on a machine busy with other work a waiting thread can
  // queue enough for a reading or two to pace it. Most of its samples keep the cadence.
  const paced = samples.filter(s => s.pace !== undefined).length
  assert.ok(paced <= samples.length * 0.1, `${paced} of ${samples.length} samples paced`)
  assert.ok(samples.length >= 200, `${samples.length} samples in the window`)
  assert.equal(d.category, 'io')
})
