// hotpath compare on saved doctor runs: the terminal keeps its load table and adds the doctor's figures; --report
// writes both runs side by side in one page, checked in headless Chromium; plain load results still compare.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath, BIN } from './helpers/cli.js'
import { browserSkip, launchBrowser } from './helpers/browser.js'
import { exampleRun } from './helpers/example-runs.js'

const skip = browserSkip
const work = await mkdtemp(join(tmpdir(), 'hotpath-compare-'))
// The examples' doctor runs doctor.test.js checks the verdicts of (helpers/example-runs.js): a run directory, and its JSON.
let slow = ''
let fast = ''
let fastJson = ''
const onPort = join(work, 'on-port')
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */
let browser

before(async () => {
  const [leak, hello] = [await exampleRun('listener-leak'), await exampleRun('hello')]
  for (const r of [leak, hello]) assert.equal(r.code, 0, r.stderr)
  slow = leak.save
  fast = hello.save
  fastJson = hello.json
  const r = await hotpath(['doctor', '--save', onPort, '--on-port', `"${process.execPath}" "${BIN}" load -c 2 -d 1 --no-progress -o ${join(work, 'plain.json')} http://127.0.0.1:$PORT/`, '--', process.execPath, 'examples/hello/server.js'], { env: { PORT: '0' } })
  assert.equal(r.code, 0, r.stderr)
  if (!skip) browser = await launchBrowser({ width: 1280, height: 1000 })
})

after(async () => { await browser?.close() })

test('two doctor run directories: the load table as before, then the doctor\'s figures; JSON has both', async () => {
  const r = await hotpath(['compare', slow, fast])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /│ Requests\/s +│/)
  assert.match(r.stdout, /│ Latency p99 +│/)
  assert.match(r.stdout, new RegExp(`before: ${slow} \\(\\d`))
  assert.match(r.stdout, /Diagnosis[\s\S]*│ category +│ +event-loop +│ +healthy +│/)
  assert.match(r.stdout, /│ CPU per request +│ .* ms +│ .*s +│ +−\d+\.\d% +│/)

  const json = await hotpath(['compare', '--json', slow, fastJson])
  assert.equal(json.code, 0, json.stderr)
  const out = JSON.parse(json.stdout)
  assert.ok(out.figures.some((/** @type {any} */ f) => f.figure === 'Requests/s' && f.b > f.a), 'the healthy server serves more')
  const category = out.doctor.find((/** @type {any} */ f) => f.figure === 'category')
  assert.deepEqual([category.before, category.after], ['event-loop', 'healthy'])
  const cpu = out.doctor.find((/** @type {any} */ f) => f.figure === 'CPU per request')
  assert.ok(cpu.before > cpu.after && cpu.change < 0, JSON.stringify(cpu))
})

test('--report: both runs side by side in one page, every chart in pairs with data', { skip }, async () => {
  const html = join(work, 'compare.html')
  const r = await hotpath(['compare', '--report', html, slow, fastJson])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /Report: .*compare\.html\n$/)
  const { page, errors, requests, screenshot } = await browser.open(html)
  assert.deepEqual(errors, [])
  assert.deepEqual(requests, [])
  assert.deepEqual(await page.$$eval('.hr-runs .hr-badge', els => els.map(e => e.textContent)), ['Event loop blocked', 'Healthy'])
  assert.match(await page.textContent('#figures') ?? '', /CPU per request/)
  const charts = /** @type {{ id: string, run: number, series: { points: number }[] }[]} */ (await page.evaluate(() => /** @type {any} */ (window).hotpathReport.charts()))
  for (const id of ['delay', 'elu', 'cpu', 'memory', 'gc', 'requests', 'latency']) {
    const pair = charts.filter(c => c.id === id)
    assert.deepEqual(pair.map(c => c.run), [0, 1], `${id} for both runs`)
    for (const c of pair) assert.ok(c.series.some(s => s.points >= 2), `${id} run ${c.run} has data`)
  }
  // Side by side on one scale: the same y range for both charts of a pair.
  const scales = await page.evaluate(() => {
    const report = /** @type {any} */ (window).hotpathReport
    /** @type {Record<string, number[]>} */
    const out = {}
    report.charts().forEach((/** @type {any} */ c, /** @type {number} */ i) => { (out[c.id] = out[c.id] || []).push(report.plot(i).scales.y.max) })
    return out
  })
  for (const [id, max] of Object.entries(scales)) assert.equal(max[0], max[1], `${id}: ${max}`)
  await screenshot('report-compare')
  await page.close()
})

test('a plain load result against a doctor run without a load: what both have is compared, the rest is said', { skip }, async () => {
  const html = join(work, 'mixed.html')
  const r = await hotpath(['compare', '--report', html, join(work, 'plain.json'), onPort])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /No load figures to compare: .*on-port has no load result/)
  const gate = await hotpath(['compare', '--max-regression', '5', join(work, 'plain.json'), onPort])
  assert.equal(gate.code, 2)
  assert.match(gate.stderr, /--max-regression needs a load result in both runs/)
  const { page, errors } = await browser.open(html)
  assert.deepEqual(errors, [])
  const charts = /** @type {{ id: string, run: number, series: { points: number }[] }[]} */ (await page.evaluate(() => /** @type {any} */ (window).hotpathReport.charts()))
  assert.ok(charts.some(c => c.id === 'latency' && c.run === 0 && c.series.some(s => s.points >= 1)), 'the load result\'s latency')
  assert.ok(charts.some(c => c.id === 'delay' && c.run === 1), 'the doctor run\'s event loop')
  assert.ok(await page.isVisible('.hr-chart-missing >> nth=0'), 'what one run lacks is said')
  await page.close()
})

test('load results compare as before, and anything else is refused in one line', async () => {
  const plain = join(work, 'plain.json')
  const r = await hotpath(['compare', plain, plain])
  assert.equal(r.code, 0, r.stderr)
  assert.doesNotMatch(r.stdout, /Diagnosis/)
  assert.match(r.stdout, /within noise/)
  const notRun = await hotpath(['compare', work, plain])
  assert.equal(notRun.code, 2)
  assert.match(notRun.stderr, /no hotpath run in/)
  const open = await hotpath(['compare', '--open', plain, plain])
  assert.equal(open.code, 2)
  assert.match(open.stderr, /--open needs --report/)
  assert.ok(JSON.parse(await readFile(plain, 'utf8')).hotpath, 'the fixture is a load result')
})
