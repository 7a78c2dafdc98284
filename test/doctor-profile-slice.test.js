// The doctor's CPU profile of a long load covers the load's middle third (at least 3 s), not all of it: while V8's
// profiler is on, the server pays for it on every request (src/run/profile-interval.js). The culprits must stay what a
// profile of the whole window names, and --profile-all must still profile all of it. Real runs of the CLI.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath } from './helpers/cli.js'

/**
 * Runs the doctor on the event-loop example for 6 s: its profile's span in seconds from the probe's load-start, and
 * the diagnosis.
 * @param {string[]} extra
 */
async function profiledRun (extra) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-slice-'))
  const save = join(dir, 'run')
  const json = join(dir, 'd.json')
  const r = await hotpath(['doctor', '-d', '6', '-c', '8', '--no-progress', '--save', save, '--json', json, ...extra, '--', process.execPath, 'examples/event-loop/server.js'], { env: { PORT: '0' }, timeout: 90000, alone: true })
  assert.equal(r.code, 0, r.stderr)
  const files = await readdir(save)
  const events = (await readFile(join(save, /** @type {string} */ (files.find(f => /^events-\d+-0\.ndjson$/.test(f)))), 'utf8'))
    .trim().split('\n').map(line => JSON.parse(line))
  const start = events.find(e => e.type === 'load-start')
  const stop = events.find(e => e.type === 'load-stop')
  const profiles = events.find(e => e.type === 'profiles')
  assert.ok(profiles?.cpu, 'a CPU profile was written')
  const profile = JSON.parse(await readFile(join(save, profiles.cpu), 'utf8'))
  const run = JSON.parse(await readFile(join(save, 'run.json'), 'utf8'))
  return {
    from: (profile.startTime - start.monotonic) / 1e6,
    to: (profile.endTime - start.monotonic) / 1e6,
    window: (stop.time - start.time) / 1000,
    samples: profile.samples.length,
    slice: run.probe.profileSlice,
    d: JSON.parse(await readFile(json, 'utf8'))
  }
}

test('a 6 s load is CPU-profiled from 1.5 s to 4.5 s only, and blames the same line as a profile of all of it', async () => {
  const sliced = await profiledRun([])
  assert.deepEqual(sliced.slice, { from: 1.5, seconds: 3 })
  const span = JSON.stringify({ from: sliced.from, to: sliced.to, window: sliced.window })
  // Timers run late on a busy loop (this server blocks it for milliseconds at a time): a quarter of a second is allowed.
  assert.ok(Math.abs(sliced.from - 1.5) < 0.25, span)
  assert.ok(Math.abs(sliced.to - 4.5) < 0.25, span)
  assert.ok(sliced.to < sliced.window - 1, span)
  // about 1,000 samples over the 3 s profiled
  assert.ok(sliced.samples > 500 && sliced.samples < 1500, `${sliced.samples} samples`)

  const whole = await profiledRun(['--profile-all'])
  assert.equal(whole.slice, null)
  assert.ok(whole.from < 0.25 && whole.to > whole.window - 0.5, JSON.stringify({ from: whole.from, to: whole.to, window: whole.window }))

  assert.equal(sliced.d.category, 'event-loop')
  assert.equal(whole.d.category, 'event-loop')
  const top = (/** @type {any} */ d) => `${d.culprits[0].file}:${d.culprits[0].line}`
  assert.equal(top(sliced.d), top(whole.d))
})
