// Who is charged when a package runs the app's code: profiles shaped as V8 writes them, over a tiny router (a
// package: outside the app root) and an app that registers its handlers with it. V8's heap profiler does not expand
// inlined frames, so a handler the router's dispatch inlined leaves no frame of its own on the stacks that allocate:
// what it allocates must still be the handler's, at its line; what the router does of its own stays the router's.
// And a model of several threads says which threads each culprit comes from.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { buildProfile, findAllocationCulprits, findCulprits } from 'hotpath'

const dir = (/** @type {string} */ p) => fileURLToPath(new URL(`./fixtures/profiles/dispatch/${p}`, import.meta.url))
const APP_ROOT = dir('app')
const SERVER = dir('app/server.js')
const ROUTER = dir('lib/router.js')
const PAD = dir('lib/pad.js')

/**
 * Where a function starts as V8 reports it (0-based line, the column of its parameter list), found by a text that
 * ends just before that parameter list.
 * @param {string} file
 * @param {string} before
 */
function at (file, before) {
  const lines = readFileSync(file, 'utf8').split('\n')
  const line = lines.findIndex(l => l.includes(before))
  assert.notEqual(line, -1, `${before} in ${file}`)
  return { lineNumber: line, columnNumber: lines[line].indexOf(before) + before.length }
}

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

/**
 * @param {string} name
 * @param {string} file
 * @param {string} before see `at`
 * @returns {Frame}
 */
const fn = (name, file, before) => ({ functionName: name, url: pathToFileURL(file).href, scriptId: '1', ...at(file, before) })
/** A builtin, as V8 names it in heap profiles: no script. @param {string} name @returns {Frame} */
const builtin = (name) => ({ functionName: name, url: '', scriptId: '0', lineNumber: -1, columnNumber: -1 })

const ROOT = builtin('(root)')
const PARSER = { functionName: 'parserOnIncoming', url: 'node:_http_server', scriptId: '2', lineNumber: 1000, columnNumber: 26 }
const DISPATCH = fn('dispatch', ROUTER, 'dispatch ')
const CREATE_CONTEXT = fn('createContext', ROUTER, 'function createContext ')
const PAD_RIGHT = fn('padRight', PAD, 'function padRight ')
const VISITS = fn('', SERVER, "router.get('/visits', ")
const LABEL = fn('', SERVER, "router.get('/label', ")

/** @typedef {{ frame: Frame, self?: number, children?: Tree[] }} Tree */

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
  return { nodes, startTime: 0, endTime: samples.length * 1000, samples, timeDeltas: samples.map(() => 1000) }
}

/**
 * The router's dispatch with the /visits handler inlined: what the handler allocates is charged to dispatch, with
 * builtins dispatch's source never calls. `evidence` adds the handler's own frame under dispatch, as V8 leaves it for
 * the runs that were not inlined.
 * @param {{ evidence?: boolean }} [opts]
 */
function inlinedVisits (opts = {}) {
  return heapProfile({
    frame: ROOT,
    children: [{
      frame: PARSER,
      children: [{
        frame: DISPATCH,
        self: 4000,
        children: [
          { frame: builtin('repeat'), self: 3000 },
          { frame: builtin('set'), self: 2000 },
          { frame: CREATE_CONTEXT, self: 1000 },
          ...(opts.evidence === false ? [] : [{ frame: VISITS, self: 100 }])
        ]
      }]
    }]
  })
}

test('a handler a package ran inlined is charged with what it allocated, at its line; the package keeps its own work', () => {
  const [top, ...rest] = findAllocationCulprits(inlinedVisits(), { appRoot: APP_ROOT })
  assert.equal(top.function, '(anonymous)')
  assert.equal(top.label, "get('/visits') callback")
  assert.equal(top.file, SERVER)
  assert.equal(top.kind, 'app')
  assert.equal(top.line, lineOf(SERVER, 'visits.set('), 'the line that makes the calls dispatch was charged with')
  assert.equal(top.functionLine, lineOf(SERVER, "router.get('/visits'"))
  // repeat and set, and what dispatch allocated itself, which cannot be told apart by line and goes the same way
  assert.ok(Math.abs(top.share - 9100 / 10100) < 1e-9, `share ${top.share}`)
  assert.ok(top.inlinedShare !== undefined && Math.abs(top.inlinedShare - 9000 / 10100) < 1e-9, `inlinedShare ${top.inlinedShare}`)
  assert.deepEqual(top.calls.map(c => [c.function, c.callLine]).sort(), [['repeat', lineOf(SERVER, 'visits.set(')], ['set', lineOf(SERVER, 'visits.set(')]])
  const caller = top.callers.find(c => c.inlined)
  assert.ok(caller, JSON.stringify(top.callers))
  assert.equal(caller.function, 'dispatch')
  assert.equal(caller.file, ROUTER)
  // createContext is called by name in dispatch's source: the router's own work, not the handler's
  const own = rest.find(c => c.function === 'createContext')
  assert.ok(own, JSON.stringify(rest.map(c => c.function)))
  assert.equal(own.kind, 'dependency')
  assert.ok(Math.abs(own.share - 1000 / 10100) < 1e-9)
  assert.ok(!rest.some(c => c.function === 'dispatch'), 'nothing of the handler is left to dispatch')
})

test('what a package called by the inlined handler allocates goes to the handler, at the line that calls it', () => {
  const heap = heapProfile({
    frame: ROOT,
    children: [{
      frame: PARSER,
      children: [{
        frame: DISPATCH,
        children: [
          // the handler inlined: padRight looks called by dispatch, whose source never names it
          { frame: PAD_RIGHT, children: [{ frame: builtin('repeat'), self: 5000 }] },
          { frame: LABEL, self: 50 }
        ]
      }]
    }]
  })
  const [top] = findAllocationCulprits(heap, { appRoot: APP_ROOT })
  assert.equal(top.label, "get('/label') callback")
  assert.equal(top.file, SERVER)
  assert.equal(top.line, lineOf(SERVER, 'padRight(ctx'))
  assert.ok(top.share > 0.99, `share ${top.share}`)
  assert.deepEqual(top.calls.map(c => [c.function, c.file, c.callLine]), [['padRight', PAD, lineOf(SERVER, 'padRight(ctx')]])

  // Without the router on the stack the rule has nothing to go on: the package is charged, as before.
  const alone = heapProfile({ frame: ROOT, children: [{ frame: PARSER, children: [{ frame: PAD_RIGHT, children: [{ frame: builtin('repeat'), self: 5000 }] }] }] })
  const [pad] = findAllocationCulprits(alone, { appRoot: APP_ROOT })
  assert.equal(pad.function, 'padRight')
  assert.equal(pad.kind, 'dependency')
})

test('a package that runs app code keeps what its own source explains', () => {
  // No call of dispatch's that it does not make itself: its own bytes stay its own, whatever app code it runs.
  const heap = heapProfile({
    frame: ROOT,
    children: [{ frame: DISPATCH, self: 4000, children: [{ frame: CREATE_CONTEXT, self: 1000 }, { frame: VISITS, self: 100 }] }]
  })
  const culprits = findAllocationCulprits(heap, { appRoot: APP_ROOT })
  assert.deepEqual(culprits.map(c => [c.function, c.kind]), [['dispatch', 'dependency'], ['createContext', 'dependency'], ['(anonymous)', 'app']])
})

test('which app code a package runs may come from a CPU profile of the same run, when the heap profile never saw it', () => {
  const heap = inlinedVisits({ evidence: false })
  const [before] = findAllocationCulprits(heap, { appRoot: APP_ROOT })
  assert.equal(before.function, 'dispatch', 'nothing in the heap profile says dispatch runs the handler')
  const cpu = buildProfile(cpuProfile({ frame: ROOT, children: [{ frame: PARSER, children: [{ frame: DISPATCH, self: 2, children: [{ frame: VISITS, self: 5 }] }] }] }), { appRoot: APP_ROOT })
  const [top] = findAllocationCulprits(heap, { appRoot: APP_ROOT, callProfiles: [cpu] })
  assert.equal(top.label, "get('/visits') callback")
  assert.equal(top.line, lineOf(SERVER, 'visits.set('))
  assert.ok(Math.abs(top.share - 9000 / 10000) < 1e-9, `share ${top.share}`)
  assert.equal(top.selfBytes, 0, 'V8 attributed it nothing itself')
})

test('under an app frame, what a package allocates is charged to the app function that called it', () => {
  const heap = heapProfile({ frame: ROOT, children: [{ frame: LABEL, self: 10, children: [{ frame: PAD_RIGHT, self: 90, children: [{ frame: builtin('repeat'), self: 900 }] }] }] })
  const [top] = findAllocationCulprits(heap, { appRoot: APP_ROOT })
  assert.equal(top.label, "get('/label') callback")
  assert.equal(top.line, lineOf(SERVER, 'padRight(ctx'))
  assert.equal(top.share, 1)
  assert.equal(top.calls[0].function, 'padRight')
  // CPU time the same way, from the same stacks
  const cpu = buildProfile(cpuProfile({ frame: ROOT, children: [{ frame: LABEL, self: 1, children: [{ frame: PAD_RIGHT, self: 9 }] }] }), { appRoot: APP_ROOT })
  const [hot] = findCulprits(cpu)
  assert.equal(hot.label, "get('/label') callback")
  assert.equal(hot.share, 1)
})

test('a model of several threads says which thread each culprit\'s share comes from', () => {
  const main = cpuProfile({ frame: ROOT, children: [{ frame: PARSER, children: [{ frame: LABEL, self: 30, children: [{ frame: PAD_RIGHT, self: 10 }] }] }] })
  const worker = cpuProfile({ frame: ROOT, children: [{ frame: VISITS, self: 50 }, { frame: LABEL, self: 10 }] })
  const model = buildProfile([{ profile: main, label: 'pid 7 main' }, { profile: worker, label: 'pid 7 thread 1' }], { appRoot: APP_ROOT })
  const culprits = findCulprits(model)
  const label = culprits.find(c => c.label === "get('/label') callback")
  const visits = culprits.find(c => c.label === "get('/visits') callback")
  assert.ok(label && visits, JSON.stringify(culprits))
  assert.deepEqual(label.threads?.map(t => t.label), ['pid 7 main', 'pid 7 thread 1'], 'most first')
  assert.ok(Math.abs((label.threads?.[0].share ?? 0) - 40 / 100) < 0.02, JSON.stringify(label.threads))
  assert.ok(Math.abs((label.threads ?? []).reduce((s, t) => s + t.share, 0) - label.share) < 1e-9, 'the parts add up to the share')
  assert.deepEqual(visits.threads?.map(t => t.label), ['pid 7 thread 1'])
  // one profile: no threads to tell apart
  assert.equal(findCulprits(buildProfile(worker, { appRoot: APP_ROOT }))[0].threads, undefined)
})
