// Work a server need not do on its request path, as doctor names it through the CLI: a logger that builds an Error per
// line to print its caller, the same app compiled at runtime by @babel/register (whose source-map-support formats
// every stack), require() inside a function called per row, a synchronous pbkdf2 per request, and a polyfilled
// Promise. Each is a real server (test/fixtures/servers/avoidable), loaded briefly; what is checked is the verdict,
// the app's line and the kind of advice — not the figures, which the machine moves.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath } from './helpers/cli.js'
import { assertSchema } from './helpers/schema.js'
import { lineOf } from './helpers/source-lines.js'

const DIR = 'test/fixtures/servers/avoidable'

/**
 * Runs doctor on a server for 3 s and returns its JSON diagnosis and what it printed.
 * @param {string} server relative to the repository
 */
async function doctor (server) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-avoidable-'))
  const json = join(dir, 'diagnosis.json')
  const r = await hotpath(['doctor', '-d', '3', '--no-progress', '--no-experiments', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, server], { env: { PORT: '0' }, timeout: 90000 })
  assert.equal(r.code, 0, `doctor exited ${r.code}\n${r.stderr}\n${r.stdout}`)
  const d = JSON.parse(await readFile(json, 'utf8'))
  assertSchema('doctor', d)
  return { d, out: r.stdout }
}

/**
 * The advice of a kind, as facts.
 * @param {any} d
 * @param {string} kind
 * @returns {any[]}
 */
const advice = (d, kind) => d.facts.recommendations.filter((/** @type {any} */ a) => a.kind === kind)

test('a logger that builds an Error per line to print its caller reads event-loop, blamed on the line that builds it', async () => {
  const { d, out } = await doctor(`${DIR}/stack-logger.js`)
  const line = await lineOf(`${DIR}/logger.js`, 'new Error().stack')
  assert.equal(d.category, 'event-loop', out)
  const first = d.culprits[0]
  assert.deepEqual([first.file, first.line, first.function], [`${DIR}/logger.js`, line, 'callerOf'], out)
  assert.equal(first.facts.kind, 'avoidable')
  const [stop] = advice(d, 'stop-stack-traces')
  assert.ok(stop, out)
  assert.equal(stop.cost.kind, 'stack-trace')
  assert.equal(stop.cost.wholeFunction, true, 'callerOf is there to read the stack')
  assert.ok(stop.cost.share >= 0.2, `the stack takes a large share of the CPU: ${stop.cost.share}`)
  assert.equal(d.facts.recommendations[0].kind, 'stop-stack-traces', 'its remedy comes first')
  assert.match(d.recommendations[0], /Stop building an Error per call in callerOf .*logger\.js:\d+.*~\d(\.\d)?× the requests\/s/)
  const row = d.evidence.find((/** @type {any} */ e) => e.signal === 'avoidable-cost')
  assert.equal(row?.state, 'avoidable')
  assert.ok(row.decisive)
})

test('@babel/register with source-map-support: the stack formatter is charged to the package that installed it, and precompiling is advised', async () => {
  const { d, out } = await doctor(`${DIR}/babel/server.js`)
  const line = await lineOf(`${DIR}/babel/logger.js`, 'new Error().stack')
  // The formatter's garbage can take GC past its threshold (Node 24's scavenges): the verdict is then gc, with the
  // same culprit among its CPU ones and the same advice.
  assert.ok(['event-loop', 'gc'].includes(d.category), out)
  const where = d.culprits.find((/** @type {any} */ c) => c.facts?.kind === 'avoidable')
  assert.ok(where, out)
  assert.deepEqual([where.file, where.line, where.function], [`${DIR}/babel/logger.js`, line, 'where'], 'the line of the source, not of the compiled code')
  if (d.category === 'event-loop') assert.equal(d.culprits[0], where)
  const [precompile] = advice(d, 'precompile')
  assert.ok(precompile, out)
  assert.equal(precompile.installed.hook, 'Error.prepareStackTrace')
  assert.equal(precompile.installed.package, 'source-map-support')
  assert.equal(precompile.installed.installer, '@babel/register')
  assert.deepEqual(precompile.installed.loadedAt, { file: `${DIR}/babel/server.js`, line: await lineOf(`${DIR}/babel/server.js`, "require('@babel/register')") })
  assert.ok(precompile.installed.share >= 0.05, `the formatter takes a share of the CPU: ${precompile.installed.share}`)
  const kinds = d.facts.recommendations.map((/** @type {any} */ a) => a.kind)
  assert.ok(kinds.indexOf('precompile') < kinds.indexOf('stop-stack-traces'), kinds.join(', '))
  assert.match(d.recommendations[kinds.indexOf('precompile')], /^Precompile instead of registering at runtime: .*source-map-support's Error\.prepareStackTrace, installed by @babel\/register/)
})

test('require() in a function called per row: hoisting it is advised at its line, with its share', async () => {
  const { d, out } = await doctor(`${DIR}/require-in-handler.js`)
  const line = await lineOf(`${DIR}/require-in-handler.js`, "require('./views/escape.js')")
  assert.equal(d.category, 'healthy', out)
  const hoist = advice(d, 'hoist-require')
  const at = hoist.find(a => a.cost.site?.line === line)
  assert.ok(at, out)
  assert.equal(at.cost.site.function, 'renderRow')
  assert.ok(at.cost.share > 0 && at.cost.share < 1)
  assert.match(d.recommendations[d.facts.recommendations.indexOf(at)], /^Hoist the require\(\) at renderRow .*require-in-handler\.js:\d+.* takes \d+% of the CPU/)
})

test('a synchronous pbkdf2 per request reads event-loop below 2 ms a request; its async form and overload protection are advised', async () => {
  const { d, out } = await doctor(`${DIR}/sync-crypto.js`)
  const line = await lineOf(`${DIR}/sync-crypto.js`, "const key = crypto.pbkdf2Sync('secret'")
  assert.equal(d.category, 'event-loop', out)
  assert.equal(d.culprits[0].line, line, out)
  const [use] = advice(d, 'use-async-api')
  assert.ok(use, out)
  assert.equal(use.cost.runtime, 'pbkdf2Sync')
  assert.equal(use.cost.site.line, line)
  assert.match(d.recommendations[0], /^Use crypto\.pbkdf2\(\) instead of the synchronous call/)
  const [overload] = advice(d, 'overload-protection')
  assert.ok(overload, out)
  assert.equal(overload.connections, 10)
  assert.match(d.recommendations[d.facts.recommendations.indexOf(overload)], /overloadProtection\(\{ maxEventLoopDelay: 200 \}\).*guard\.http\(handler\)/)
})

test('a Promise replaced by a userland one: the package, where the app loads it, and its share of the CPU', async () => {
  const { d, out } = await doctor(`${DIR}/polyfill.js`)
  const row = d.evidence.find((/** @type {any} */ e) => e.signal === 'polyfill')
  assert.ok(row, out)
  assert.equal(row.facts.package, 'tiny-promise')
  assert.ok(row.facts.replaced.includes('Promise') && row.facts.replaced.includes('Promise.prototype.then'), row.facts.replaced.join(', '))
  assert.deepEqual(row.facts.loadedAt, { file: `${DIR}/polyfill.js`, line: await lineOf(`${DIR}/polyfill.js`, "require('tiny-promise')") })
  const [remove] = advice(d, 'remove-polyfill')
  assert.ok(remove, out)
  assert.equal(remove.polyfill.package, 'tiny-promise')
  assert.ok(remove.polyfill.share >= 0.05, `its code takes CPU: ${remove.polyfill.share}`)
})

test('a plain hello server: nothing of its runtime is avoidable work, and nothing it runs is a replacement', async () => {
  const { d, out } = await doctor('examples/hello/server.js')
  assert.equal(d.category, 'healthy', out)
  assert.deepEqual(d.evidence.filter((/** @type {any} */ e) => e.signal === 'avoidable-cost' || e.signal === 'polyfill'), [])
  const kinds = new Set(d.facts.recommendations.map((/** @type {any} */ a) => a.kind))
  for (const kind of ['stop-stack-traces', 'use-async-api', 'read-files-once', 'hoist-require', 'precompile', 'remove-polyfill']) assert.ok(!kinds.has(kind), kind)
  assert.equal(d.measured.facts.avoidable, null)
})
