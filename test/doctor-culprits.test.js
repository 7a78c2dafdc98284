// hotpath doctor's culprits, through the CLI as a user runs it: each says which process and thread it was found in; a
// busy worker pool is blamed on its own code; and a leak in a framework's route handler is blamed on the handler, not
// on the framework that runs it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { browserSkip, launchBrowser } from './helpers/browser.js'
import { hotpath } from './helpers/cli.js'
import { exampleRun } from './helpers/example-runs.js'
import { lineOf } from './helpers/source-lines.js'

/**
 * doctor on an example (-d 5, a leak's snapshots given time: helpers/example-runs.js, shared with the files that read
 * the same run): its JSON diagnosis, terminal output and report.
 * @param {string} example
 */
async function doctor (example) {
  const r = await exampleRun(example)
  assert.equal(r.code, 0, `doctor exited ${r.code}\n${r.stderr}\n${r.out}`)
  return { d: r.d, out: r.out, html: r.html }
}

/**
 * Opens a report, clicks a culprit and returns what the flame graph zoomed to and what the culprit's line says
 * (null without Chromium).
 * @param {string} html
 * @param {number} i the culprit's index
 */
async function clickCulprit (html, i) {
  if (browserSkip) return null
  const browser = await launchBrowser()
  try {
    const { page, errors } = await browser.open(html)
    await page.click(`.hr-culprit[data-culprit="${i}"]`)
    const zoomed = await page.evaluate(() => /** @type {any} */ (window).hotpathReport.flame().stats().zoomed)
    const head = await page.textContent(`.hr-culprit[data-culprit="${i}"] .hr-c-head`) ?? ''
    const note = await page.textContent(`.hr-culprit[data-culprit="${i}"] .hr-c-note`) ?? ''
    assert.deepEqual(errors, [])
    return { zoomed, head, note }
  } finally {
    await browser.close()
  }
}

/**
 * @param {any} d
 * @param {string} signal
 */
const evidence = (d, signal) => d.evidence.find((/** @type {any} */ e) => e.signal === signal)

// The thread is busy from its first message, so its sampler fires seldom (its utilisation is read over time, not as a
// mean of samples), and it may not connect to hotpath before the load ends: its main thread closes its window and
// waits for its profile (src/probe/thread-windows.js).
test('a worker thread made after the load began is profiled too, and its code is blamed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-culprits-'))
  const json = join(dir, 'diagnosis.json')
  const r = await hotpath(['doctor', '-d', '3', '--no-progress', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, 'test/fixtures/servers/lazy-worker.js'], { timeout: 90000 })
  assert.equal(r.code, 0, r.stderr)
  const d = JSON.parse(await readFile(json, 'utf8'))
  const crunch = d.culprits.find((/** @type {any} */ c) => c.file === 'test/fixtures/servers/lazy-worker.js' && c.function === 'crunch')
  assert.ok(crunch, JSON.stringify(d.culprits))
  assert.equal(crunch.line, await lineOf('test/fixtures/servers/lazy-worker.js', 'x += Math.sqrt(i)'))
  assert.ok(crunch.threads.length === 1 && crunch.threads[0].threadId !== 0, JSON.stringify(crunch.threads))
})

// The worker never turns its event loop during the load, so hotpath does not know it when the load stops: its process's
// main thread waits for its profile before it says it has stopped, and hotpath stops the target only then.
test('a worker thread that cannot hear hotpath before the load ends still has its profile written, and its code is blamed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-culprits-'))
  const json = join(dir, 'diagnosis.json')
  const r = await hotpath(['doctor', '-d', '2', '--no-progress', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, 'test/fixtures/servers/blocked-worker.js'], { timeout: 90000 })
  assert.equal(r.code, 0, r.stderr)
  const d = JSON.parse(await readFile(json, 'utf8'))
  const crunch = d.culprits.find((/** @type {any} */ c) => c.file === 'test/fixtures/servers/blocked-worker.js' && c.function === 'crunch')
  assert.ok(crunch, JSON.stringify(d.culprits))
  assert.equal(crunch.line, await lineOf('test/fixtures/servers/blocked-worker.js', 'x += Math.sqrt(i)'))
  assert.ok(crunch.threads.length === 1 && crunch.threads[0].threadId !== 0, JSON.stringify(crunch.threads))
})

// A worker that never returns to its event loop cannot write its profile: its CPU is in the process's figures and in no
// culprit, so the run says so and does not exit 0.
test('a worker thread that never returns to its event loop: the run says its profile was not written, and exits 2', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-culprits-'))
  const json = join(dir, 'diagnosis.json')
  const r = await hotpath(['doctor', '-d', '2', '--no-progress', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, 'test/fixtures/servers/endless-worker.js'], { timeout: 90000 })
  assert.equal(r.code, 2, r.stderr)
  const d = JSON.parse(await readFile(json, 'utf8'))
  const w = d.warnings.find((/** @type {any} */ w) => w.kind === 'cpu' && w.threadId !== 0)
  assert.ok(w, JSON.stringify(d.warnings))
  assert.equal(w.notWritten, true)
  assert.equal(w.affects, 'culprits')
  assert.match(w.message, /was not written: the thread did not return to its event loop within 5 s of the load's end: no CPU culprits from it/)
  assert.match(r.stdout, /^hotpath doctor: .* — culprits incomplete: a thread's profile was not written$/m)
  assert.match(r.stdout, /! The CPU profile of pid \d+ thread \d+ .*was not written/)
})

test('worker threads: the busy pool is blamed on the worker\'s own code, with its threads; the main thread\'s culprits stay', async () => {
  const { d, out, html } = await doctor('worker-threads')
  assert.equal(d.category, 'healthy')
  // The premise: the pool is saturated (the load keeps more requests waiting than there are threads).
  const pool = evidence(d, 'worker-thread-utilization')
  assert.ok(pool && pool.value >= 0.7, JSON.stringify(pool))
  const main = d.processes.find((/** @type {any} */ p) => p.serving)
  const hashing = d.culprits.find((/** @type {any} */ c) => c.file === 'examples/worker-threads/worker.js')
  assert.ok(hashing, JSON.stringify(d.culprits))
  assert.equal(hashing.measure, 'cpu')
  assert.equal(hashing.kind, 'app')
  assert.equal(hashing.line, await lineOf('examples/worker-threads/worker.js', "createHash('sha256')"))
  assert.ok(hashing.threads.length >= 1)
  for (const t of hashing.threads) {
    assert.equal(t.pid, main.pid)
    assert.notEqual(t.threadId, 0, 'found in the pool\'s threads, not the main thread')
  }
  // The healthy verdict is about the pool: its hottest code first, and the advice names it.
  assert.equal(d.culprits[0], hashing)
  assert.ok(d.recommendations.some((/** @type {string} */ r) => r.startsWith('The worker threads are') && r.includes(`examples/worker-threads/worker.js:${hashing.line}`)), d.recommendations.join('\n'))
  // The main thread's own culprits are still there, with their thread.
  const served = d.culprits.filter((/** @type {any} */ c) => c.file === 'examples/worker-threads/server.js')
  assert.ok(served.length > 0, JSON.stringify(d.culprits))
  for (const c of served) assert.deepEqual(c.threads, [{ pid: main.pid, threadId: 0 }])
  // Every culprit says where it was found, and a run of several threads shows it.
  for (const c of d.culprits) assert.ok(Array.isArray(c.threads) && c.threads.length > 0, JSON.stringify(c))
  assert.match(out, new RegExp(`1\\. on\\('message'\\) callback {2}examples/worker-threads/worker\\.js:${hashing.line} {2}\\(\\d+% of CPU, app, in worker threads? [\\d, and]+ of pid ${main.pid}\\)`))
  assert.match(out, new RegExp(`examples/worker-threads/server\\.js:\\d+ {2}\\(\\d+% of CPU, app, in main thread of pid ${main.pid}\\)`))
  // The report says it too, and a click finds the worker's code in the flame graph of every thread.
  const clicked = await clickCulprit(html, 0)
  if (clicked) {
    assert.match(clicked.head, new RegExp(`in worker threads? [\\d, and]+ of pid ${main.pid}`))
    assert.equal(clicked.zoomed, '(anonymous)', JSON.stringify(clicked))
  }
})

test('a leak in a Fastify route handler is blamed on the handler, at the line that keeps the visit, not on Fastify', async (t) => {
  const { d, out, html } = await doctor('fastify-leak')
  assert.equal(d.category, 'memory-leak')
  // What keeps the visits, from heap snapshots after the load: the module's Map, where it is declared.
  const [kept, top] = d.culprits
  assert.equal(kept.measure, 'retained', JSON.stringify(kept))
  assert.equal(kept.label, 'visits (Map)')
  assert.equal(kept.line, await lineOf('examples/fastify-leak/server.js', 'const visits'))
  assert.equal(top.measure, 'allocations')
  assert.equal(top.file, 'examples/fastify-leak/server.js')
  assert.equal(top.kind, 'app')
  assert.equal(top.label, "get('/') callback")
  // the line that keeps the visit (or builds the id it is kept under): both are the handler's
  const lines = [await lineOf('examples/fastify-leak/server.js', 'visits.set('), await lineOf('examples/fastify-leak/server.js', 'const id =')]
  assert.ok(lines.includes(top.line), `line ${top.line} (${lines})`)
  const main = d.processes.find((/** @type {any} */ p) => p.serving)
  assert.deepEqual(top.threads, [{ pid: main.pid, threadId: 0 }])
  // Fastify allocates a little of its own each request (0.5% of the samples on one Node 24 run, 5.7% on one Node 20
  // run: a few hundred samples move a small share by a point or two). The handler's calls of builtins that V8 ran
  // inlined into Fastify's function are given back to the handler; the object literals it builds there cannot be (the
  // heap profiler keeps no inlined frame, and they are no call): in some runs Fastify's frame kept 32%
  // beside the handler's 54%. Then the handler must still come first, ahead of it.
  const fastify = d.culprits.filter((/** @type {any} */ c) => c.measure === 'allocations' && /fastify\/lib\/handle-request\.js/.test(c.file) && c.share >= 0.1)
  if (fastify.length > 0) t.diagnostic(`Fastify's frame kept ${fastify.map((/** @type {any} */ c) => c.share.toFixed(2))} of the allocations`)
  assert.ok(top.share > 0.5 || (fastify.length > 0 && fastify.every((/** @type {any} */ c) => c.share < top.share)), `share ${top.share}; ${JSON.stringify(d.culprits)}`)
  assert.ok(fastify.every((/** @type {any} */ c) => c.share < top.share), JSON.stringify(d.culprits))
  assert.match(d.recommendations[0], /visits \(Map\) \(examples\/fastify-leak\/server\.js:\d+\)/)
  // one thread in the run: no thread to name
  assert.match(out, /1\. visits \(Map\) {2}examples\/fastify-leak\/server\.js:\d+ {2}\(100% of what the load left alive, app\)/)
  assert.match(out, /2\. get\('\/'\) callback {2}examples\/fastify-leak\/server\.js:\d+ {2}\(\d+% of what stays alive, app\)|2\. get\('\/'\) callback {2}examples\/fastify-leak\/server\.js:\d+ {2}\(\d+% of allocations, app\)/)
  // V8 ran the handler inlined into Fastify's function: a click zooms there, where its bytes are drawn, and says so.
  const clicked = await clickCulprit(html, 1)
  if (clicked) {
    assert.doesNotMatch(clicked.head, / in (main|worker) thread/, 'one thread: nothing to tell apart')
    if (clicked.zoomed !== '(anonymous)') assert.match(clicked.note, /get\('\/'\) callback ran inlined into \S+/)
  }
})
