// npm test: every test file through node:test, in two passes. Most files run two at a time — a doctor run spends much
// of its time waiting for its load's seconds, its target to start, its phases — and the few that time the load
// generator against a server, or a sampler's cadence, run after them one at a time, with the machine to themselves.
// Files named on the command line run alone, in order (node test/run.js test/doctor.test.js).
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { run } from 'node:test'
import { spec as Spec, tap } from 'node:test/reporters'
import { fileURLToPath } from 'node:url'
import { sessionDirOf } from './helpers/machine.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * Files whose assertions are about time itself: latency against a known delay, a pacer's schedule, a cadence, a
 * profiler's samples at their interval, the stalls a monitor sees (a busy machine makes more). (Runs of hotpath in
 * the other files share the machine, or take it alone for a verdict that is checked: helpers/machine.js.)
 */
const ALONE = new Set([
  'test/flame.test.js',
  'test/profile.test.js',
  'test/load.test.js',
  'test/load-precision.test.js',
  'test/load-segment.test.js',
  'test/doctor-pace.test.js',
  'test/runtime-metrics.test.js',
  'test/runtime-metrics-otel.test.js',
  'test/runtime-profiling-stall.test.js',
  'test/runtime-protection.test.js',
  'test/sampling-sampler.test.js'
])

/**
 * Files whose runs of hotpath are long and share the machine (experiments restart the target for half a minute):
 * started first, beside the files whose runs all share it too. A run that needs the machine alone waits for the runs
 * under way to end, and waited 225 s of a 912 s suite, much of it for these.
 */
const FIRST = ['test/doctor-experiments.test.js']

const named = process.argv.slice(2)
const all = [...list('test'), ...list('test/internals')]
const passes = named.length > 0
  ? [{ files: named.map(f => resolve(f)), concurrency: 1 }]
  : [{ files: firstPassOrder(all.filter(f => !ALONE.has(f))), concurrency: 2 }, { files: all.filter(f => ALONE.has(f)), concurrency: 1 }]

let failed = false
const began = Date.now()
for (const pass of passes) {
  const stream = run({ files: pass.files.map(f => resolve(ROOT, f)), concurrency: pass.concurrency })
  stream.on('test:fail', () => { failed = true })
  const out = stream.compose(process.stdout.isTTY ? new Spec() : tap)
  out.pipe(process.stdout, { end: false })
  await new Promise((resolve, reject) => out.on('end', resolve).on('error', reject))
}
process.exitCode = failed ? 1 : 0
timeReport(Date.now() - began)

/**
 * Where the suite's time went, from the log its files' runs of hotpath kept (helpers/machine.js): the runs that had
 * the machine alone, what the others waited for them, and the slowest files. Then the session's folder goes.
 * @param {number} ms
 */
function timeReport (ms) {
  const dir = sessionDirOf(process.pid)
  /** @type {{ file: string, kind: string, what?: string, waited: number, held: number }[]} */
  const rows = []
  try {
    for (const line of readFileSync(join(dir, 'times.ndjson'), 'utf8').split('\n')) if (line) rows.push(JSON.parse(line))
  } catch {}
  if (process.env.HOTPATH_TEST_TIMES) writeFileSync(process.env.HOTPATH_TEST_TIMES, rows.map(r => JSON.stringify(r)).join('\n') + '\n')
  rmSync(dir, { recursive: true, force: true })
  if (rows.length === 0) return
  const s = (/** @type {number} */ v) => `${Math.round(v / 1000)} s`
  const sum = (/** @type {typeof rows} */ list, /** @type {'waited' | 'held'} */ k) => list.reduce((a, r) => a + r[k], 0)
  const alone = rows.filter(r => r.kind === 'alone')
  const shared = rows.filter(r => r.kind === 'shared')
  const files = rows.filter(r => r.kind === 'file').sort((a, b) => b.held - a.held)
  const lines = [
    `time: ${s(ms)} in all; ${alone.length} runs had the machine alone for ${s(sum(alone, 'held'))} and waited ${s(sum(alone, 'waited'))} for it, ${shared.length} shared runs took ${s(sum(shared, 'held'))} and waited ${s(sum(shared, 'waited'))}`,
    `slowest files: ${files.slice(0, 8).map(f => `${f.file} ${s(f.held)}`).join(', ')}`,
    `slowest runs alone: ${[...alone].sort((a, b) => b.held - a.held).slice(0, 8).map(r => `${r.file.replace(/^test\//, '')} (${r.what}) ${s(r.held)}`).join('; ')}`
  ]
  for (const line of lines) process.stdout.write(`# ${line}\n`)
}

/**
 * The first pass's files in the order node:test starts them: FIRST, then the files none of whose runs takes the machine
 * alone (helpers/cli.js's `alone`, helpers/machine.js's, or an example's run), then the rest.
 * @param {string[]} files
 */
function firstPassOrder (files) {
  const takesAlone = (/** @type {string} */ f) => /alone: true|\balone\(|exampleRun\(/.test(readFileSync(join(ROOT, f), 'utf8'))
  const first = files.filter(f => FIRST.includes(f))
  const rest = files.filter(f => !FIRST.includes(f))
  return [...first, ...rest.filter(f => !takesAlone(f)), ...rest.filter(takesAlone)]
}

/**
 * The test files of a folder, relative to the repository, in name order.
 * @param {string} dir
 */
function list (dir) {
  return readdirSync(join(ROOT, dir)).filter(f => f.endsWith('.test.js')).sort().map(f => relative(ROOT, join(ROOT, dir, f)))
}
