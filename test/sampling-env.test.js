// The probe's watch on the environment variables an app reads (src/sampling/env-reads.js): each first read by the
// app, with its file and line, and process.env behaving exactly as before while it watches and after.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { debuglog, types } from 'node:util'
import { Worker } from 'node:worker_threads'
import { EnvWatcher } from '../src/sampling/env-reads.js'

const THIS_FILE = fileURLToPath(import.meta.url)
/** The 1-based line of the first line of this file that contains `marker`. @param {string} marker */
function lineOf (marker) {
  return readFileSync(THIS_FILE, 'utf8').split('\n').findIndex(l => l.includes(marker) && !l.includes('lineOf(')) + 1
}

/**
 * Runs `fn` with a watcher on, and stops it whatever happens.
 * @param {(w: EnvWatcher) => void | Promise<void>} fn
 */
async function watching (fn) {
  const original = process.env
  const w = new EnvWatcher()
  w.start()
  try {
    await fn(w)
  } finally {
    w.stop()
    assert.equal(process.env, original, 'the real object is back')
  }
}

test('the first read of each variable by the app is noted with its file and line; a whole number is kept, other values are not', async () => {
  await watching((w) => {
    process.env.HOTPATH_TEST_LIMIT = '16'
    process.env.HOTPATH_TEST_TOKEN = 'secret-value'
    assert.ok(types.isProxy(process.env))
    const limit = Number(process.env.HOTPATH_TEST_LIMIT) // READ-LIMIT
    const token = process.env.HOTPATH_TEST_TOKEN // READ-TOKEN
    const unset = process.env.HOTPATH_TEST_UNSET ?? 'default' // READ-UNSET
    for (let i = 0; i < 3; i++) assert.equal(process.env.HOTPATH_TEST_LIMIT, '16')
    assert.equal(limit, 16)
    assert.equal(token, 'secret-value')
    assert.equal(unset, 'default')
    const reads = w.take()
    assert.deepEqual(reads.map(r => [r.name, r.set, r.value, r.site?.file, r.site?.line]), [
      ['HOTPATH_TEST_LIMIT', true, '16', THIS_FILE, lineOf('READ-LIMIT')],
      ['HOTPATH_TEST_TOKEN', true, null, THIS_FILE, lineOf('READ-TOKEN')],
      ['HOTPATH_TEST_UNSET', false, null, THIS_FILE, lineOf('READ-UNSET')]
    ])
    assert.deepEqual(w.take(), [], 'each read is taken once')
    delete process.env.HOTPATH_TEST_LIMIT
    delete process.env.HOTPATH_TEST_TOKEN
  })
})

test('process.env behaves as before while watched: in, keys, assignment, delete, JSON, a child\'s and a worker\'s environment', async () => {
  await watching(async (w) => {
    process.env.HOTPATH_TEST_SET = /** @type {any} */ (42)
    assert.equal(process.env.HOTPATH_TEST_SET, '42', 'assignment stores a string')
    assert.ok('HOTPATH_TEST_SET' in process.env)
    assert.ok(Object.keys(process.env).includes('HOTPATH_TEST_SET'))
    assert.equal(Object.getOwnPropertyDescriptor(process.env, 'HOTPATH_TEST_SET')?.value, '42')
    assert.equal(JSON.parse(JSON.stringify(process.env)).HOTPATH_TEST_SET, '42')
    assert.equal({ ...process.env }.HOTPATH_TEST_SET, '42')
    assert.ok(Object.prototype.hasOwnProperty.call(process.env, 'HOTPATH_TEST_SET'))
    const child = execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.env.HOTPATH_TEST_SET))'], { encoding: 'utf8' })
    assert.equal(child, '42', 'a child inherits the environment')
    const worker = new Worker('require("worker_threads").parentPort.postMessage(process.env.HOTPATH_TEST_SET)', { eval: true })
    const [fromWorker] = await once(worker, 'message')
    assert.equal(fromWorker, '42', 'a worker inherits it too')
    delete process.env.HOTPATH_TEST_SET
    assert.equal(process.env.HOTPATH_TEST_SET, undefined)
    assert.ok(!('HOTPATH_TEST_SET' in process.env))
    // A copy of the environment reads every variable: none of those reads is the app choosing a setting.
    assert.deepEqual(w.take().map(r => r.name), ['HOTPATH_TEST_SET'])
  })
})

test('copies of the environment, Node\'s own reads and Object.prototype\'s names are not noted; a read after a copy is', async () => {
  await watching((w) => {
    const copies = [{ ...process.env }, Object.entries(process.env), JSON.stringify(process.env), Object.assign({}, process.env)]
    for (const k in process.env) assert.equal(typeof process.env[k], 'string')
    assert.equal(copies.length, 4)
    // Node reads NODE_DEBUG itself when a debug log is first used; a child's spawn reads every variable.
    debuglog('hotpath-test')('nothing')
    execFileSync(process.execPath, ['-e', '0'])
    assert.equal(typeof process.env.hasOwnProperty, 'function')
    assert.equal(/** @type {any} */ (process.env).toJSON, undefined)
    assert.deepEqual(w.take(), [])
    const home = process.env.HOTPATH_TEST_AFTER_COPY // READ-AFTER
    assert.equal(home, undefined)
    assert.deepEqual(w.take().map(r => [r.name, r.site?.line]), [['HOTPATH_TEST_AFTER_COPY', lineOf('READ-AFTER')]])
  })
})

test('an Error.prepareStackTrace of the app\'s that reads the environment does not recurse', async () => {
  const saved = Error.prepareStackTrace
  Error.prepareStackTrace = (err, frames) => `${process.env.HOTPATH_TEST_IN_PREPARE ?? ''}${err}\n${frames.map(f => `    at ${f}`).join('\n')}`
  try {
    await watching((w) => {
      assert.equal(process.env.HOTPATH_TEST_OUTER, undefined) // READ-OUTER
      assert.deepEqual(w.take().map(r => [r.name, r.site?.line]), [['HOTPATH_TEST_OUTER', lineOf('READ-OUTER')]])
    })
  } finally {
    Error.prepareStackTrace = saved
  }
})

test('stop: the real object is back, a reference kept to the watched one still reads and writes through, nothing more is noted', () => {
  const original = process.env
  const w = new EnvWatcher()
  w.start()
  const kept = process.env
  w.stop()
  assert.equal(process.env, original)
  assert.ok(!types.isProxy(process.env))
  kept.HOTPATH_TEST_KEPT = 'x'
  assert.equal(process.env.HOTPATH_TEST_KEPT, 'x')
  assert.equal(kept.HOTPATH_TEST_KEPT, 'x')
  delete kept.HOTPATH_TEST_KEPT
  assert.deepEqual(w.take(), [])
  // An environment the app put in place itself stays.
  w.start()
  const own = { ...original }
  process.env = own
  w.stop()
  assert.equal(process.env, own)
  process.env = original
})
