// The flame graph page in a real headless Chromium: it must load without errors or network, draw, and respond to
// search, clicks, toggles and programmatic zoom. Screenshots land in test/screenshots/ for a person to look at.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildHeapProfile, buildProfile, findCulprits } from 'hotpath'
import { renderFlameHtml } from '../src/report/flame/index.js'
import { flameData } from '../src/report/flame/data.js'
import { browserSkip, launchBrowser } from './helpers/browser.js'
import { recordCpuProfile, recordServer, TIER_UP_EARLY } from './fixtures/profiles/record.js'

const skip = browserSkip
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */
let browser
/** @type {string} */
let page
/** @type {string} the same profile, with V8's "not optimised" reason on the listener's node */
let deoptPage
/** @type {import('../src/profile/find-culprits.js').Culprit[]} */
let culprits
/** how many distinct functions named digest or update the profile has */
let digestOrUpdate = 0

before(async () => {
  if (skip) return
  const { profile } = await recordCpuProfile(fileURLToPath(new URL('./fixtures/profiles/listener-leak-server.js', import.meta.url)))
  const model = buildProfile(profile)
  culprits = findCulprits(model)
  const { frames, nodes } = flameData(model)
  digestOrUpdate = new Set(nodes.frame.filter(f => /^(digest|update)$/.test(frames.name[f]) || /^(digest|update)$/.test(frames.label[f]))).size
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-page-'))
  page = join(dir, 'flame.html')
  await writeFile(page, renderFlameHtml(model, { title: 'listener leak' }))
  const marked = structuredClone(profile)
  for (const n of marked.nodes) if (n.callFrame.functionName === 'recordEtag') n.deoptReason = 'Optimization is always disabled'
  deoptPage = join(dir, 'deopt.html')
  await writeFile(deoptPage, renderFlameHtml(buildProfile(marked)))
  browser = await launchBrowser()
})

after(async () => { await browser?.close() })

/** @typedef {{ boxes: number, highlighted: number, notOptimised: number, kinds: Record<string, number>, zoomed: string | null }} Stats */
/** @param {import('playwright-core').Page} p @returns {Promise<Stats>} */
const stats = (p) => p.evaluate(() => /** @type {any} */ (window).flame.stats())

test('the page loads with no console errors and no network requests, and draws frames', { skip }, async () => {
  const opened = await browser.open(page)
  const s = await stats(opened.page)
  assert.deepEqual(opened.errors, [])
  assert.deepEqual(opened.requests, [])
  assert.ok(s.boxes > 20, `${s.boxes} boxes drawn`)
  assert.ok(s.kinds.app > 0 && s.kinds.node > 0 && s.kinds.v8 > 0, JSON.stringify(s.kinds))
  // the canvas really has paint on it (not just boxes counted)
  const painted = await opened.page.evaluate(() => {
    const c = /** @type {HTMLCanvasElement} */ (document.querySelector('canvas'))
    const d = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d')).getImageData(0, 0, c.width, Math.min(c.height, 200)).data
    let n = 0
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++
    return n / (d.length / 4)
  })
  assert.ok(painted > 0.2, `painted ${painted}`)
  assert.match(await opened.page.textContent('.hp-culprits') ?? '', /recordEtag/)
  await opened.screenshot('flame-page')
  await opened.page.close()
})

test('searching highlights the matching frames and reports their share', { skip }, async () => {
  const { page: p, errors } = await browser.open(page)
  await p.fill('.hp-search', 'recordEtag')
  await p.press('.hp-search', 'Enter')
  const s = await stats(p)
  assert.ok(s.highlighted >= 1 && s.highlighted < s.boxes, JSON.stringify(s))
  assert.match(await p.textContent('.hp-search-info') ?? '', /^1 function · \d+(\.\d)?%$/)
  await p.fill('.hp-search', '/^(digest|update)$/')
  await p.press('.hp-search', 'Enter')
  // node:crypto has more than one 'update' (Hash, Hmac, …); which ones the sampler caught varies from run to run
  assert.ok(digestOrUpdate >= 1)
  assert.match(await p.textContent('.hp-search-info') ?? '', new RegExp(`^${digestOrUpdate} functions? · `))
  await p.keyboard.press('Escape')
  assert.equal((await stats(p)).highlighted, 0)
  assert.deepEqual(errors, [])
  await p.close()
})

test('clicking a frame zooms into it; clicking "all" zooms out', { skip }, async () => {
  const { page: p, errors, screenshot } = await browser.open(page)
  const at = await p.evaluate(() => /** @type {any} */ (window).flame.locate('recordEtag'))
  assert.ok(at)
  await p.mouse.click(at.x, at.y)
  assert.equal((await stats(p)).zoomed, 'recordEtag')
  assert.match(await p.textContent('.hp-crumbs') ?? '', /all.*recordEtag/)
  await screenshot('flame-zoomed')
  await p.click('.hp-crumb >> text=all')
  assert.equal((await stats(p)).zoomed, null)
  assert.deepEqual(errors, [])
  await p.close()
})

test('toggles hide Node.js and V8 frames (their time goes to the caller) and colour by self time', { skip }, async () => {
  const { page: p, errors, screenshot } = await browser.open(page)
  const before = await stats(p)
  await p.uncheck('input[name=show-node]')
  await p.uncheck('input[name=show-v8]')
  const hidden = await stats(p)
  assert.equal(hidden.kinds.node, 0)
  assert.equal(hidden.kinds.v8, 0)
  assert.ok(hidden.kinds.app > 0)
  assert.ok(hidden.boxes < before.boxes)
  await p.selectOption('.hp-color', 'heat')
  await screenshot('flame-app-only-heat')
  await p.check('input[name=show-node]')
  assert.ok((await stats(p)).kinds.node > 0)
  assert.equal(await p.locator('input[name=split]').count(), 0, 'nothing to split: no toggle')
  assert.deepEqual(errors, [])
  await p.close()
})

test('split not-optimised: frames V8 would not optimise stand apart, with the reason', { skip }, async () => {
  const { page: p, errors } = await browser.open(deoptPage)
  assert.equal((await stats(p)).notOptimised, 0, 'merged by default')
  await p.check('input[name=split]')
  assert.ok((await stats(p)).notOptimised >= 1)
  const at = await p.evaluate(() => /** @type {any} */ (window).flame.locate('recordEtag'))
  await p.mouse.move(at.x, at.y)
  assert.match(await p.textContent('.hp-tip') ?? '', /not optimised: Optimization is always disabled/)
  assert.deepEqual(errors, [])
  await p.close()
})

test('a culprit zooms the graph from the list and from code (zoomToFunction)', { skip }, async () => {
  const { page: p, errors } = await browser.open(page)
  await p.click('.hp-culprit >> nth=0')
  assert.equal((await stats(p)).zoomed, culprits[0].function)
  await p.evaluate(() => /** @type {any} */ (window).flame.reset())
  const found = await p.evaluate((c) => /** @type {any} */ (window).flame.zoomToFunction(c), { function: 'digest', file: 'node:internal/crypto/hash' })
  assert.equal(found, true)
  const s = await stats(p)
  assert.equal(s.zoomed, 'digest')
  assert.ok(s.highlighted >= 1)
  assert.equal(await p.evaluate(() => /** @type {any} */ (window).flame.zoomToFunction('noSuchFunction')), false)
  // a row of the table zooms too
  await p.click('.hp-row >> nth=0')
  assert.notEqual((await stats(p)).zoomed, null)
  assert.deepEqual(errors, [])
  await p.close()
})

test('an anonymous function is shown by the name its source gives it, and found by either name', { skip }, async () => {
  const { page: p, errors } = await browser.open(page)
  assert.match(await p.textContent('.hp-table') ?? '', /createServer callback/)
  await p.fill('.hp-search', 'createServer callback')
  await p.press('.hp-search', 'Enter')
  assert.match(await p.textContent('.hp-search-info') ?? '', /^1 function · \d+(\.\d)?%$/)
  await p.keyboard.press('Escape')
  const at = await p.evaluate(() => /** @type {any} */ (window).flame.locate('createServer callback'))
  assert.ok(at)
  await p.mouse.move(at.x, at.y)
  assert.match(await p.textContent('.hp-tip') ?? '', /createServer callback[\s\S]*\(anonymous\) to V8; named from its source/)
  const script = fileURLToPath(new URL('./fixtures/profiles/listener-leak-server.js', import.meta.url))
  const line = readFileSync(script, 'utf8').split('\n').findIndex(l => l.includes('http.createServer(')) + 1
  const found = await p.evaluate((c) => /** @type {any} */ (window).flame.zoomToFunction(c), { function: '(anonymous)', file: script, line })
  assert.equal(found, true)
  assert.equal((await stats(p)).zoomed, '(anonymous)')
  assert.match(await p.textContent('.hp-crumbs') ?? '', /createServer callback/)
  assert.deepEqual(errors, [])
  await p.close()
})

test('a culprit V8 ran inlined zooms to the caller its bytes were charged to', { skip }, async () => {
  const script = fileURLToPath(new URL('./fixtures/profiles/inlined-leak-server.js', import.meta.url))
  const { files } = await recordServer(script, { duration: 3, nodeArgs: (dir) => [...TIER_UP_EARLY, `--heap-prof-dir=${dir}`, '--heap-prof', '--heap-prof-interval=32768'] })
  const heapFile = files.find(f => f.endsWith('.heapprofile'))
  assert.ok(heapFile)
  const model = buildHeapProfile(JSON.parse(await readFile(heapFile, 'utf8')))
  const file = join(await mkdtemp(join(tmpdir(), 'hotpath-flame-page-')), 'heap.html')
  await writeFile(file, renderFlameHtml(model, { title: 'inlined leak' }))
  const { page: p, errors } = await browser.open(file)
  assert.match(await p.textContent('.hp-culprit >> nth=0') ?? '', /trackVisit/)
  await p.click('.hp-culprit >> nth=0')
  assert.equal((await stats(p)).zoomed, '(anonymous)')
  assert.match(await p.textContent('.hp-crumbs') ?? '', /createServer callback/)
  assert.deepEqual(errors, [])
  await p.close()
})
