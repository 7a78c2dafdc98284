// doctor tells memory held for a while from a leak, and a collector that works harder than the code from code that
// allocates as it computes: through the CLI, on servers written for it, the category, the culprit's line and the
// kind of the first recommendation.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { BIN, hotpath, ROOT } from './helpers/cli.js'
import { alone } from './helpers/machine.js'
import { assertSchema } from './helpers/schema.js'
import { lineOf } from './helpers/source-lines.js'

const server = (/** @type {string} */ name) => join(ROOT, 'test', 'fixtures', 'servers', name)

/**
 * doctor on a fixture server, its JSON diagnosis on stdout; the verdict is checked, so the machine is its alone.
 * @param {string} name
 * @param {{ args?: string[], node?: string[], code?: number, experiments?: boolean, env?: Record<string, string> }} [o]
 *   doctor's own flags, node's, the exit code expected, whether doctor may go on after its verdict (experiments, a
 *   larger heap limit), and the environment of both
 */
async function doctor (name, { args = [], node = [], code = 0, experiments = false, env } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-memory-verdicts-'))
  const runDir = join(dir, 'run')
  const run = await hotpath(['doctor', '-d', '3', ...args, '--no-progress', ...(experiments ? [] : ['--no-experiments']), '--save', runDir, '--json', '-', '--', process.execPath, ...node, server(name)], { timeout: 120_000, alone: true, env })
  assert.equal(run.code, code, `doctor exited ${run.code}\n${run.stderr}`)
  const d = JSON.parse(run.stdout)
  assertSchema('doctor', d)
  return { d, stderr: run.stderr, runDir }
}

/**
 * @param {any} d
 * @param {string} signal
 */
const evidence = (d, signal) => d.evidence.find((/** @type {any} */ e) => e.signal === signal)

test('a big parse kept two seconds per request is the parse\'s cost, not a leak nor GC: the heap it held is let go', async () => {
  const { d, stderr } = await doctor('held-parse.js')
  assert.equal(d.category, 'event-loop', d.summary)
  // The load left tens of MB alive, as a leak would; full collections after it found them let go.
  assert.match(stderr, /watching for \d+ s whether the server lets it go/)
  assert.equal(evidence(d, 'heap-growth').verdict, 'held for a while: let go within seconds of the load, not a leak')
  const cpu = d.culprits.filter((/** @type {any} */ c) => c.measure === 'cpu')
  assert.equal(cpu[0].file, 'test/fixtures/servers/held-parse.js', JSON.stringify(cpu[0]))
  assert.equal(cpu[0].line, await lineOf('test/fixtures/servers/held-parse.js', '// the parse'))
  assert.equal(d.facts.recommendations[0].kind, 'make-cheaper')
})

test('a teaching server\'s throw-away arrays are gc, its handler\'s allocations first, never a leak', async () => {
  // Node 24 gives a young generation four times Node 20's where memory allows, and this garbage then takes a smaller
  // share: the command sets 16 MB semi-spaces, as a server that sets its own would (the semi-space test does the same).
  const { d } = await doctor('throwaway-arrays.js', { node: ['--max-semi-space-size=16'] })
  assert.equal(d.category, 'gc', d.summary)
  assert.notEqual(evidence(d, 'heap-growth').verdict, 'leak')
  const allocations = d.culprits.filter((/** @type {any} */ c) => c.measure === 'allocations')
  assert.ok(allocations.length > 0, JSON.stringify(d.culprits))
  assert.equal(allocations[0].file, 'test/fixtures/servers/throwaway-arrays.js')
  // The heap sampler places what the optimiser inlined at a line of the handler that varies from run to run (its own,
  // the allocation's, the response's): the handler is what is asserted, and the CPU culprit is its loop.
  const first = await lineOf('test/fixtures/servers/throwaway-arrays.js', 'createServer(')
  const last = await lineOf('test/fixtures/servers/throwaway-arrays.js', 'res.end(')
  assert.ok(allocations[0].line >= first && allocations[0].line <= last, JSON.stringify(allocations[0]))
  const cpu = d.culprits.find((/** @type {any} */ c) => c.measure === 'cpu' && c.kind === 'app')
  const loop = await lineOf('test/fixtures/servers/throwaway-arrays.js', '// the allocation')
  assert.ok(cpu && cpu.line >= loop - 1 && cpu.line <= loop, JSON.stringify(cpu))
  assert.ok(d.facts.recommendations.some((/** @type {any} */ r) => /semi-space|allocate/.test(r.kind)), JSON.stringify(d.facts.recommendations.map((/** @type {any} */ r) => r.kind)))
})

test('a heap near the old-generation limit NODE_OPTIONS sets reads against it, not V8\'s limit with the young generation\'s room', async () => {
  // V8's heap_size_limit adds the young generation's reservation to the flag's limit (48 MB more by default on Node 20,
  // 192 MB on Node 24): against it a session store at its 48 MB limit read 50% on Node 20, 20% on Node 24, and the
  // advice to raise the limit was lost. The fixture's 1 MB semi-spaces keep its collections full ones on every line
  // (Node 22's default young generation turns them into scavenges): the reservation is then 3 MB, and the figure the
  // advice gives is the flag's.
  const { d } = await doctor('heap-limit.js', { args: ['--no-retainers'], env: { NODE_OPTIONS: '--max-old-space-size=64 --max-semi-space-size=1' } })
  assert.equal(d.category, 'gc', d.summary)
  const near = d.facts.recommendations.find((/** @type {any} */ r) => r.kind === 'heap-near-limit')
  assert.ok(near, JSON.stringify(d.facts.recommendations))
  assert.equal(near.heapLimit, 64 * 1048576)
  assert.ok(near.heapUsed > 0.7 * near.heapLimit && near.heapUsed <= near.heapLimit, `${near.heapUsed} of ${near.heapLimit}`)
  assert.match(d.recommendations.join('\n'), /The heap reached [\d.]+ MB of a 67\.1 MB limit: raise it with node --max-old-space-size=<MB>/)
})

test('a heap limit too low for the requests in flight: the crash names V8\'s limit as the ceiling and the flag to raise', async () => {
  const { d } = await doctor('heap-per-request.js', { args: ['-c', '30', '-d', '5'], node: ['--max-old-space-size=128'], code: 4 })
  assert.equal(d.category, 'target-failed', d.summary)
  const f = d.failure.facts
  assert.equal(f.kind, 'heap-exhausted', JSON.stringify(f))
  assert.match(d.summary, /ran out of heap/)
  // V8's limit adds the young generation to the flag's old one (48 MB on Node 20, 192 MB on Node 24).
  assert.ok(f.heapLimit >= 128 * 1048576 && f.heapLimit < 512 * 1048576, `limit ${f.heapLimit}`)
  assert.equal(f.inFlight, 30)
  assert.ok(f.budgetPerRequest > 1048576 && f.budgetPerRequest < f.heapLimit / 20, `${f.budgetPerRequest} B a request`)
  // No container limit here is below the machine's memory by that much: the flag's limit is what it met.
  assert.equal(f.ceiling, 'heap-limit')
  assert.equal(d.facts.recommendations[0].kind, 'heap-exhausted')
  assert.match(d.recommendations[0], /--max-old-space-size=256\b/)
  assert.match(d.recommendations[0], /hotpath doctor -c 30 -- \S+ --max-old-space-size=256 \S+heap-per-request\.js\./)
})

test('after a heap crash doctor loads the limit it proposes: the requests in flight fit in twice the limit, and it says so', async () => {
  const { d, stderr, runDir } = await doctor('heap-held-per-request.js', { args: ['-c', '30'], node: ['--max-old-space-size=96'], code: 4, experiments: true })
  const f = d.failure.facts
  assert.equal(f.kind, 'heap-exhausted', JSON.stringify(f))
  assert.equal(f.raiseTo, 192)
  assert.match(stderr, /Loading it again with --max-old-space-size=192, the limit the advice proposes, under the same load: up to 3 s/)
  const r = d.heapRetry
  assert.equal(r.outcome, 'survived', JSON.stringify(r))
  assert.equal(r.flag, '--max-old-space-size=192')
  // What the 30 requests held did not fit under the first limit's old generation, and did under the larger one.
  assert.ok(r.heapLimit >= 192 * 1048576 && r.heapLimit > f.heapLimit, `limit ${r.heapLimit}`)
  assert.ok(r.peakHeap > 96 * 1048576 && r.peakHeap < r.heapLimit, `peak ${r.peakHeap} of ${r.heapLimit}`)
  assert.ok(r.requests > 0 && r.requestsPerSecond > 0, JSON.stringify(r))
  assert.equal(d.facts.recommendations[0].kind, 'heap-exhausted')
  assert.equal(d.facts.recommendations[0].retry.outcome, 'survived')
  assert.match(d.recommendations[0], /^Measured: with --max-old-space-size=192 the load ran without a crash \(\d+ req\/s\), peak heap [\d.]+ MB of its [\d.]+ MB limit\./)
  // --analyse reports it again, in the terminal and in the HTML report.
  const report = join(runDir, 'again.html')
  const again = await hotpath(['doctor', '--analyse', runDir, '--report', report])
  assert.equal(again.code, 4, again.stderr)
  assert.match(again.stdout, /A larger heap limit, tried[^\n]*\n {2}With --max-old-space-size=192 the load ran [\d.]+ s without a crash/)
  const html = await readFile(report, 'utf8')
  assert.match(html, /id="heap-retry"[\s\S]*survived the load/)
})

test('Ctrl-C while doctor loads the larger heap limit: it is skipped, the target stopped, and the exit code is the crash\'s', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-memory-verdicts-'))
  const json = join(dir, 'diagnosis.json')
  let stdout = ''
  let stderr = ''
  const code = await alone(() => new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'doctor', '-d', '3', '-c', '30', '--no-progress', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, '--max-old-space-size=96', server('heap-held-per-request.js')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe']
    })
    child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c })
    child.stderr.setEncoding('utf8').on('data', (c) => {
      stderr += c
      if (/Loading it again with/.test(c)) setTimeout(() => child.kill('SIGINT'), 1500)
    })
    child.on('close', resolve)
  }), 'doctor, Ctrl-C during the larger heap limit\'s load')
  assert.match(stderr, /Loading it again with --max-old-space-size=192/)
  assert.equal(code, 4, stderr)
  // The verdict first, then the update that says the retry was skipped.
  assert.match(stdout, /^hotpath doctor: target-failed /)
  // (a crash may cut the heap samples after the window short, and the line then says its culprits are incomplete)
  assert.match(stdout, /\nhotpath doctor: target-failed \(the target failed\)[^\n]* — after loading it again with --max-old-space-size=192\n/)
  const d = JSON.parse(await readFile(json, 'utf8'))
  assertSchema('doctor', d)
  assert.equal(d.heapRetry.outcome, 'interrupted', JSON.stringify(d.heapRetry))
  assert.match(d.recommendations[0], /Loading it with --max-old-space-size=192 was skipped \(interrupted\)\./)
})

test('after a heap crash, a heap that grows with the load crashes again at twice the limit: a larger one only postpones it', async () => {
  const { d } = await doctor('heap-kept-forever.js', { args: ['-c', '30'], node: ['--max-old-space-size=32'], code: 4, experiments: true })
  assert.equal(d.failure.facts.kind, 'heap-exhausted', JSON.stringify(d.failure.facts))
  const r = d.heapRetry
  assert.equal(r.outcome, 'crashed', JSON.stringify(r))
  assert.equal(r.flag, '--max-old-space-size=64')
  assert.ok(r.peakHeap > 48 * 1048576, `peak ${r.peakHeap}`)
  assert.ok(r.seconds > 0 && r.seconds < 3.5 && r.exit !== null, JSON.stringify(r))
  assert.match(d.recommendations[0], /^Measured: with --max-old-space-size=64 it crashed again at [\d.]+ MB after [\d.]+ s of load \(the first run: [\d.]+ s\): the heap grows with the load — a leak, or more requests held at once than any limit holds — and a larger limit only postpones the crash\./)
})

test('a saturated server\'s work fired and not awaited: named from a short load traced after the window', async () => {
  // A closed loop saturates it: its window traces no request (the hooks would cost its throughput), and the entries it
  // leaves pending hold megabytes when the load stops.
  const { d, stderr, runDir } = await doctor('unawaited-audit.js')
  assert.notEqual(d.category, 'insufficient-data', d.summary)
  assert.match(stderr, /with its requests untraced \(a busy server is not\): loading once more with them traced/)
  const run = JSON.parse(await readFile(join(runDir, 'run.json'), 'utf8'))
  assert.equal(run.tracing.error, null)
  assert.ok(run.tracing.traced >= 4 && run.tracing.requests >= run.tracing.traced && run.tracing.end > run.tracing.start, JSON.stringify(run.tracing))
  assert.ok(run.tracing.start >= run.loadWindow.end, 'after the window')
  const i = d.facts.recommendations.findIndex((/** @type {any} */ r) => r.kind === 'await-or-bound')
  assert.ok(i >= 0, JSON.stringify(d.facts.recommendations.map((/** @type {any} */ r) => r.kind)))
  const w = d.facts.recommendations[i].work
  const file = 'test/fixtures/servers/unawaited-audit.js'
  assert.equal(w.after, true)
  assert.deepEqual([w.site.file, w.site.function, w.site.line], [file, 'recordAudit', await lineOf(file, '// the audit write')])
  assert.equal(w.fired.line, await lineOf(file, '// not awaited'))
  assert.ok(w.requestShare >= 0.5 && w.meanAgeMs >= 50, JSON.stringify(w))
  assert.match(d.recommendations[i], /^Work fired and not awaited: .* starts recordAudit and does not await it — \d+% of the requests traced in a load after the window/)
})

test('a promise fired on the request path and not awaited is named where it starts, with how many and how long', async () => {
  // An open-loop load the server keeps up with, on a busy machine too: its loop idles, and the wait tracer follows the
  // requests (a saturated loop is not traced: its requests do not wait).
  const { d } = await doctor('fire-and-forget.js', { args: ['-R', '50'] })
  assert.notEqual(d.category, 'insufficient-data', d.summary)
  const i = d.facts.recommendations.findIndex((/** @type {any} */ r) => r.kind === 'await-or-bound')
  assert.ok(i >= 0, JSON.stringify(d.facts.recommendations.map((/** @type {any} */ r) => r.kind)))
  const w = d.facts.recommendations[i].work
  const file = 'test/fixtures/servers/fire-and-forget.js'
  assert.equal(w.site.file, file)
  assert.equal(w.site.function, 'uploadDebugCopy')
  assert.equal(w.site.line, await lineOf(file, '// the slow upload'))
  assert.equal(w.fired.line, await lineOf(file, '// fired and forgotten'))
  assert.ok(w.requestShare >= 0.5 && w.perRequest >= 0.5 && w.perRequest <= 1.5, `${w.perRequest} a request, ${w.requestShare} of them`)
  assert.ok(w.meanAgeMs > 0 && w.maxAgeMs >= w.meanAgeMs, JSON.stringify(w))
  assert.match(d.recommendations[i], /^Work fired and not awaited: .* starts uploadDebugCopy and does not await it .* await it, or bound it/)
})

test('what an awaited fetch leaves pending is fetch\'s own: no work fired and not awaited', async () => {
  const { d } = await doctor('awaited-fetch.js', { args: ['-R', '50'] })
  assert.notEqual(d.category, 'insufficient-data', d.summary)
  const traced = d.evidence.find((/** @type {any} */ e) => e.signal === 'waits-traced')
  assert.ok(traced, `its requests were traced: ${d.evidence.map((/** @type {any} */ e) => e.signal).join(', ')}`)
  const kinds = d.facts.recommendations.map((/** @type {any} */ r) => r.kind)
  assert.ok(!kinds.includes('await-or-bound'), JSON.stringify(d.recommendations))
})
