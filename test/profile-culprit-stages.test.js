// Each stage of culprit finding on its own (src/profile/culprits/): profiles shaped as V8 writes them, over fixture
// programs whose source the stages read, and one recorded from a real program run to its end. findCulprits is these
// stages in a row; what each stage hands the next is checked here, the whole through the public API elsewhere.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { buildHeapProfile, buildProfile, findCulprits } from 'hotpath'
import { chargeOwners, nearestOwners, threadsOf } from '../src/profile/culprits/charge.js'
import { culpritContext } from '../src/profile/culprits/context.js'
import { appCallees, dispatchRedirect } from '../src/profile/culprits/dispatch.js'
import { enclosingCaller, foldCallbacks } from '../src/profile/culprits/fold-callbacks.js'
import { helperCalls, shareWithHelpers } from '../src/profile/culprits/helpers.js'
import { hottestLine, rankCulprits } from '../src/profile/culprits/rank.js'
import { resolveOwners } from '../src/profile/culprits/resolve.js'
import { emptyResolved } from '../src/profile/culprits/resolved.js'
import { recordProgram } from './fixtures/profiles/record.js'

const fixture = (/** @type {string} */ p) => fileURLToPath(new URL(`./fixtures/profiles/${p}`, import.meta.url))
const SERVER = fixture('render-server.js')
const RENDER = fixture('node_modules/slow-render/index.js')
const REPORT = fixture('report.js')
const DISPATCH_APP = fixture('dispatch/app')
const DISPATCH_SERVER = fixture('dispatch/app/server.js')
const ROUTER = fixture('dispatch/lib/router.js')
const PAD = fixture('dispatch/lib/pad.js')

/**
 * The 1-based line of a file that contains `text`.
 * @param {string} file
 * @param {string} text
 */
function lineOf (file, text) {
  const i = readFileSync(file, 'utf8').split('\n').findIndex(l => l.includes(text))
  assert.notEqual(i, -1, `${text} in ${file}`)
  return i + 1
}

/** @typedef {{ functionName: string, url: string, scriptId: string, lineNumber: number, columnNumber: number }} Frame */
/** @typedef {{ frame: Frame, self?: number, children?: Tree[] }} Tree */

/**
 * A function as V8 places it: 0-based line, the column of its parameter list, found as the end of `before`.
 * @param {string} name
 * @param {string} file
 * @param {string} before
 * @returns {Frame}
 */
function fn (name, file, before) {
  const lines = readFileSync(file, 'utf8').split('\n')
  const line = lines.findIndex(l => l.includes(before))
  assert.notEqual(line, -1, `${before} in ${file}`)
  return { functionName: name, url: pathToFileURL(file).href, scriptId: '1', lineNumber: line, columnNumber: lines[line].indexOf(before) + before.length }
}
/** The engine's own entries and builtins: no script. @param {string} name @returns {Frame} */
const builtin = (name) => ({ functionName: name, url: '', scriptId: '0', lineNumber: -1, columnNumber: -1 })

/**
 * A CPU profile of a tree: one sample per unit of `self`, 1 ms apart.
 * @param {Tree} tree
 */
function cpuProfile (tree) {
  /** @type {any[]} */
  const nodes = []
  /** @type {number[]} */
  const samples = []
  /** @param {Tree} t @returns {number} */
  const add = (t) => {
    const id = nodes.length + 1
    const n = { id, callFrame: t.frame, hitCount: t.self ?? 0, children: /** @type {number[]} */ ([]) }
    nodes.push(n)
    for (let i = 0; i < (t.self ?? 0); i++) samples.push(id)
    for (const c of t.children ?? []) n.children.push(add(c))
    return id
  }
  add(tree)
  // the last sample lasts until endTime, like the others until the next
  return { nodes, startTime: 0, endTime: (samples.length + 1) * 1000, samples, timeDeltas: samples.map(() => 1000) }
}

/**
 * A sampling heap profile of a tree: bytes per node.
 * @param {Tree} tree
 */
function heapProfile (tree) {
  let id = 0
  /** @param {Tree} t @returns {any} */
  const node = (t) => ({ callFrame: t.frame, selfSize: t.self ?? 0, id: ++id, children: (t.children ?? []).map(node) })
  return { head: node(tree), samples: [] }
}

const ROOT = builtin('(root)')
const HANDLER = fn('', SERVER, 'http.createServer(')
const PRODUCT_PAGE = fn('productPage', SERVER, 'function productPage ')
const RENDER_FN = fn('render', RENDER, 'function render ')
const ESCAPE = fn('escape', RENDER, 'function escape ')
const PARSER = { functionName: 'parserOnIncoming', url: 'node:_http_server', scriptId: '2', lineNumber: 1000, columnNumber: 26 }

/**
 * The render server's stacks: the app's page calls a package that escapes; Node.js parses on its own; the collector
 * runs on no one's behalf. Values in ms.
 */
function renderModel () {
  return buildProfile(cpuProfile({
    frame: ROOT,
    children: [
      {
        frame: PARSER,
        self: 4,
        children: [{ frame: HANDLER, children: [{ frame: PRODUCT_PAGE, self: 1, children: [{ frame: RENDER_FN, self: 2, children: [{ frame: ESCAPE, self: 3 }] }] }] }]
      },
      { frame: builtin('(garbage collector)'), self: 5 }
    ]
  }))
}

/** @param {import('../src/profile/model.js').ProfileModel} model @param {string} name */
const frameNamed = (model, name) => {
  const frame = model.frames.find(f => f.name === name)
  assert.ok(frame, name)
  return frame.id
}

/** @param {import('../src/profile/model.js').ProfileModel} model */
function charged (model) {
  const { near, via } = nearestOwners(model)
  return { near, via, owners: chargeOwners(model, near, via, threadsOf(model), null) }
}

test('charge: a package\'s time goes to the app function that called it; Node.js keeps its own; the collector is nobody\'s', () => {
  const model = renderModel()
  const { owners } = charged(model)
  const page = owners.get(frameNamed(model, 'productPage'))
  assert.ok(page)
  assert.equal(page.charged, 6, 'its own 1 ms, render\'s 2 and escape\'s 3')
  assert.equal(page.own, 1)
  assert.deepEqual([...page.calls], [[frameNamed(model, 'render'), 5]], 'through render, the function it called')
  assert.equal(owners.get(frameNamed(model, 'parserOnIncoming'))?.charged, 4)
  assert.ok(!owners.has(frameNamed(model, 'render')) && !owners.has(frameNamed(model, 'escape')))
  assert.ok(!owners.has(frameNamed(model, '(garbage collector)')))
  assert.equal([...owners.values()].reduce((s, o) => s + o.charged, 0), model.total - 5)
})

test('charge: without an app frame, the nearest package frame takes the time; in a model of several, by thread', () => {
  const alone = cpuProfile({ frame: ROOT, children: [{ frame: PARSER, children: [{ frame: RENDER_FN, self: 2, children: [{ frame: ESCAPE, self: 3 }] }] }] })
  const other = cpuProfile({ frame: ROOT, children: [{ frame: PRODUCT_PAGE, self: 7 }] })
  const model = buildProfile([{ profile: alone, label: 'pid 1' }, { profile: other, label: 'pid 2' }])
  const { owners } = charged(model)
  assert.equal(owners.get(frameNamed(model, 'escape'))?.charged, 3, 'escape is a package frame itself')
  assert.equal(owners.get(frameNamed(model, 'render'))?.charged, 2)
  const page = owners.get(frameNamed(model, 'productPage'))
  assert.deepEqual([...(page?.threads ?? [])], [[1, 7]], 'all of it from the second profile')
})

test('resolve: each call gets the line of the owner\'s source that makes it, and that line counts toward the hottest', () => {
  const model = renderModel()
  const { owners } = charged(model)
  const ctx = culpritContext(model, [])
  const resolved = resolveOwners(owners, ctx, 0)
  const page = resolved.get(frameNamed(model, 'productPage'))
  assert.ok(page)
  const line = lineOf(SERVER, 'render(template, product)')
  assert.deepEqual([...page.calls], [[frameNamed(model, 'render'), { value: 5, callLine: line }]])
  assert.equal(page.lines.get(line), 5)
  assert.equal(hottestLine(page, 0), line)
  assert.equal(page.charged, 6)
  // below the floor, an owner is not read at all
  assert.ok(!resolveOwners(owners, ctx, 5).has(frameNamed(model, 'parserOnIncoming')))
})

test('fold: a callback written inside the function that runs it is folded into it; one written elsewhere is not', () => {
  const report = fn('buildReport', REPORT, 'function buildReport ')
  const callback = fn('', REPORT, 'rows.map(')
  const model = buildProfile(cpuProfile({
    frame: ROOT,
    children: [{ frame: report, self: 1, children: [{ frame: builtin('map'), children: [{ frame: callback, self: 5 }] }] }, { frame: HANDLER, self: 2 }]
  }))
  const { near, owners } = charged(model)
  const ctx = culpritContext(model, [])
  const callbackId = /** @type {number} */ (model.frames.find(f => f.name === '(anonymous)' && f.file === REPORT)?.id)
  const handlerId = /** @type {number} */ (model.frames.find(f => f.name === '(anonymous)' && f.file === SERVER)?.id)
  assert.equal(enclosingCaller(model, callbackId, near[0], ctx.fnOf), frameNamed(model, 'buildReport'))
  assert.equal(enclosingCaller(model, handlerId, near[0], ctx.fnOf), -1, 'run by Node.js: nothing encloses it')
  const resolved = resolveOwners(owners, ctx, 0)
  assert.equal(resolved.get(callbackId)?.charged, 5)
  foldCallbacks(resolved, ctx, near[0])
  assert.ok(!resolved.has(callbackId))
  assert.equal(resolved.get(frameNamed(model, 'buildReport'))?.charged, 6)
  assert.equal(resolved.get(handlerId)?.charged, 2)
})

test('rank: most charged first, down to the smallest share asked for, each at its hottest line with its callers', () => {
  const model = renderModel()
  const { near, via, owners } = charged(model)
  const ctx = culpritContext(model, [])
  const resolved = resolveOwners(owners, ctx, 0)
  const culprits = rankCulprits(resolved, ctx, near[0], via[0], { limit: 10, minShare: 0, callLimit: 5 })
  // shares of everything sampled, the collector's 5 ms included
  assert.deepEqual(culprits.map(c => [c.function, c.share]), [['productPage', 6 / 15], ['parserOnIncoming', 4 / 15]])
  const [page] = culprits
  assert.equal(page.line, lineOf(SERVER, 'render(template, product)'))
  assert.equal(page.functionLine, lineOf(SERVER, 'function productPage'))
  assert.deepEqual(page.calls.map(c => [c.function, c.kind, c.share, c.callLine]), [['render', 'dependency', 5 / 15, page.line]])
  assert.deepEqual(page.callers.map(c => [c.function, c.via, c.line]), [['(anonymous)', 'productPage', lineOf(SERVER, 'res.end(productPage(')]])
  assert.equal(page.callers[0].label, 'createServer callback')
  assert.deepEqual(rankCulprits(resolved, ctx, near[0], via[0], { limit: 10, minShare: 0.3, callLimit: 5 }).map(c => c.function), ['productPage'])
  assert.deepEqual(rankCulprits(resolved, ctx, near[0], via[0], { limit: 1, minShare: 0, callLimit: 0 })[0].calls, [])
  // the stages in a row are findCulprits
  assert.deepEqual(findCulprits(model, { minShare: 0 }), culprits)
})

test('hottestLine: the line with most value, else the function\'s first line', () => {
  const r = emptyResolved()
  assert.equal(hottestLine(r, 12), 12)
  r.lines.set(14, 1).set(20, 3).set(16, 3)
  assert.equal(hottestLine(r, 12), 20, 'the first of equals')
})

// The dispatch fixture: a tiny router (a package) runs the app's handlers; V8 inlined the /visits handler into the
// router's dispatch, so the heap profile charges dispatch with the builtins the handler calls.
const DISPATCH = fn('dispatch', ROUTER, 'dispatch ')
const CREATE_CONTEXT = fn('createContext', ROUTER, 'function createContext ')
const VISITS = fn('', DISPATCH_SERVER, "router.get('/visits', ")
const LABEL = fn('', DISPATCH_SERVER, "router.get('/label', ")
const PAD_RIGHT = fn('padRight', PAD, 'function padRight ')

function dispatchModel () {
  return buildHeapProfile(heapProfile({
    frame: ROOT,
    children: [{
      frame: PARSER,
      children: [{
        frame: DISPATCH,
        self: 4000,
        children: [{ frame: builtin('repeat'), self: 3000 }, { frame: CREATE_CONTEXT, self: 1000 }, { frame: VISITS, self: 100 }]
      }]
    }]
  }), { appRoot: DISPATCH_APP })
}

test('dispatch: the app functions a package runs, and the stacks that go to it rather than to the package it called', () => {
  // the /label handler inlined into dispatch: padRight looks called by dispatch, whose source never names it
  const model = buildHeapProfile(heapProfile({
    frame: ROOT,
    children: [{
      frame: PARSER,
      children: [{ frame: DISPATCH, children: [{ frame: PAD_RIGHT, children: [{ frame: builtin('repeat'), self: 5000 }] }, { frame: LABEL, self: 50 }] }]
    }]
  }), { appRoot: DISPATCH_APP })
  const ctx = culpritContext(model, [])
  const dispatch = frameNamed(model, 'dispatch')
  const padRight = frameNamed(model, 'padRight')
  const label = /** @type {number} */ (model.frames.find(f => f.file === DISPATCH_SERVER)?.id)
  assert.deepEqual([...appCallees(model, ctx.index, [])], [[dispatch, [label]]])
  assert.deepEqual([...ctx.called], [[dispatch, [label]]])
  const { near, via } = nearestOwners(model)
  assert.equal(chargeOwners(model, near, via, null, null).get(padRight)?.charged, 5000, 'without the redirect, the package it called')
  const redirect = dispatchRedirect(model, ctx.called, ctx.fnOf, ctx.appSites)
  assert.ok(redirect)
  const owners = chargeOwners(model, near, via, null, redirect)
  assert.ok(!owners.has(padRight))
  assert.deepEqual([...(owners.get(dispatch)?.calls ?? [])], [[padRight, 5000]], 'dispatch\'s, to look for in the app code it runs')
  // a CPU profile (no app code found run by a package): nothing is redirected
  assert.equal(dispatchRedirect(model, new Map(), ctx.fnOf, ctx.appSites), null)
})

test('helpers: a call the owner\'s source does not make goes to the inlined function that makes it, with a share of the owner\'s own', () => {
  const model = dispatchModel()
  const ctx = culpritContext(model, [])
  const dispatch = frameNamed(model, 'dispatch')
  const repeat = frameNamed(model, 'repeat')
  const source = ctx.fnOf(dispatch)
  assert.ok(source)
  const moved = helperCalls(ctx, dispatch, source, repeat, 3000)
  assert.equal(moved.length, 1)
  const [m] = moved
  assert.equal(ctx.frameOf(m.helper).file, DISPATCH_SERVER)
  assert.equal(m.callLine, lineOf(DISPATCH_SERVER, 'id.repeat(64)'))
  assert.equal(m.value, 3000)
  assert.equal(ctx.frameOf(m.helper).label, "get('/visits') callback", 'the handler dispatch runs')
  assert.deepEqual(helperCalls(ctx, dispatch, source, frameNamed(model, 'createContext'), 1000), [], 'dispatch\'s own call')

  const createContext = frameNamed(model, 'createContext')
  // Two stacks of dispatch: on the first, 4000 bytes of its own beside a call an inlined helper makes (3000) and one
  // of its own (1000); on the second (another path through it), 2000 bytes of its own and no helper's call.
  /** @type {import('../src/profile/culprits/charge.js').Owner} */
  const owner = {
    charged: 10000,
    own: 6000,
    lines: new Map(),
    calls: new Map([[repeat, 3000], [createContext, 1000]]),
    paths: new Map([[1, { own: 4000, calls: new Map([[repeat, 3000], [createContext, 1000]]) }], [2, { own: 2000, calls: new Map() }]]),
    threads: new Map()
  }
  /** @type {Map<number, import('../src/profile/culprits/resolved.js').Resolved>} */
  const recovered = new Map()
  // the first stack's own 4000 bytes split like its calls: 3000 moved against 1000 explained by dispatch's source;
  // the second stack keeps its own: nothing shows the helper ran there
  const kept = shareWithHelpers(dispatch, owner, moved, ctx, recovered)
  assert.equal(kept, 10000 - 3000 - 3000)
  const helper = recovered.get(m.helper)
  assert.ok(helper)
  assert.equal(helper.charged, 6000)
  assert.deepEqual([...helper.calls], [[repeat, { value: 3000, callLine: m.callLine }]])
  const [into] = helper.inlinedInto.values()
  assert.deepEqual(into, { caller: dispatch, via: m.hop.name, line: m.hop.line, value: 6000 }, 'recovered from dispatch')

  // A third stack where the helper's call was sampled once: that shows the helper ran there, not how much of the
  // stack's 50,000 bytes of its own it made. They stay with dispatch; the call itself goes to the helper.
  const [once] = helperCalls(ctx, dispatch, source, repeat, 3100)
  /** @type {import('../src/profile/culprits/charge.js').Owner} */
  const thin = {
    ...owner,
    charged: 60100,
    own: 56000,
    calls: new Map([[repeat, 3100], [createContext, 1000]]),
    paths: new Map([...owner.paths, [3, { own: 50000, calls: new Map([[repeat, 100]]), sampled: new Map([[repeat, 1]]) }]])
  }
  const again = new Map()
  assert.equal(shareWithHelpers(dispatch, thin, [once], ctx, again), 60100 - 3100 - 3000)
  assert.equal(again.get(once.helper)?.charged, 6100)
})

test('the stages on a real profile: the charges add up, and folding moves callbacks into their functions without loss', async () => {
  const model = buildProfile(await recordProgram(fixture('callbacks.js')))
  const { near, via, owners } = charged(model)
  const ownerTotal = [...owners.values()].reduce((s, o) => s + o.charged, 0)
  // Every sample but idle ones and those with only the engine's frames on their stack.
  const engineOnly = model.nodes.reduce((s, n) => {
    const nobody = near[0][n.id] === -1 && near[1][n.id] === -1 && near[2][n.id] === -1
    return s + (nobody && model.frames[n.frame].name !== '(idle)' ? n.self : 0)
  }, 0)
  assert.ok(Math.abs(ownerTotal + engineOnly - model.total) < 1e-6, `${ownerTotal} + ${engineOnly} vs ${model.total}`)
  assert.ok(ownerTotal > model.total / 2)
  const ctx = culpritContext(model, [])
  const resolved = resolveOwners(owners, ctx, 0)
  const before = [...resolved.values()].reduce((s, r) => s + r.charged, 0)
  assert.ok(Math.abs(before - ownerTotal) < 1e-6, 'a CPU profile has no helpers to move time to')
  foldCallbacks(resolved, ctx, near[0])
  const after = [...resolved.values()].reduce((s, r) => s + r.charged, 0)
  assert.ok(Math.abs(after - before) < 1e-6)
  const mapCallback = model.frames.find(f => f.label === 'map callback in buildRows')
  assert.ok(mapCallback, 'the map callback was sampled')
  assert.ok(!resolved.has(mapCallback.id), 'folded into buildRows')
  const [top] = rankCulprits(resolved, ctx, near[0], via[0], { limit: 1, minShare: 0, callLimit: 5 })
  assert.equal(top.function, 'spin')
})
