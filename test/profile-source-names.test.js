// Reading a script for the names a profile lacks: the label of an anonymous function (what it is passed to, what it is
// written in) and the function a bare call refers to (same file, or a relative import, ES or CommonJS). Any text, however
// broken, is read without throwing.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { functionSource } from '../src/profile/call-sites.js'
import { functionLabel } from '../src/profile/function-labels.js'
import { InlineResolver } from '../src/profile/inlined.js'
import { ScriptIndex, scriptIndex } from '../src/profile/script-index.js'
import { SourceCache } from '../src/profile/sources.js'

/**
 * An index of `text`, as if read from `file`.
 * @param {string} text
 */
function indexOf (text) {
  const whole = functionSource(text, 1, 0)
  assert.ok(whole)
  return new ScriptIndex('/app/x.js', text, whole.code)
}

/**
 * The label of the function starting at `marker` on the line containing `lineText`.
 * @param {ScriptIndex} index
 * @param {string} lineText
 * @param {string} marker
 */
function labelAt (index, lineText, marker) {
  const lines = index.text.split('\n')
  const l = lines.findIndex(x => x.includes(lineText))
  assert.notEqual(l, -1, lineText)
  const c = lines[l].indexOf(marker, lines[l].indexOf(lineText))
  return functionLabel(index, l + 1, c)
}

const source = `'use strict'
const { format } = require('./fmt')
app.get('/users/:id', auth, async (req, res) => { res.end(format(req)) })
server.on("request", function (req) {})
const s = 'app.get(' + "x(() => 1)"
class Store {
  save (item) {
    return this.items.map(function (x) { return x })
  }
  static async load () { return [1].forEach(x => x) }
  get (key) { return this.m.get(key, () => 0) }
}
exports.make = function () { return () => 2 }
const r = cond ? first : (z) => z
;(function () { work() })()
const longName = withALongFirstArgument('a string well past the limit of a label', () => 3)
`

test('a label says what an anonymous function is passed to and where it is written, from code only', () => {
  const index = indexOf(source)
  assert.equal(labelAt(index, "app.get('/users", 'async ('), "get('/users/:id') callback")
  assert.equal(labelAt(index, 'server.on(', '(req)'), 'on("request") callback')
  assert.equal(labelAt(index, 'this.items.map(', '(x)'), 'map callback in save')
  assert.equal(labelAt(index, 'static async load', 'x =>'), 'forEach callback in load')
  assert.equal(labelAt(index, 'get (key)', '() => 0'), 'get callback in get', 'a method named like a keyword-ish word is a name')
  assert.equal(labelAt(index, 'exports.make', '() => 2'), '(anonymous in make)')
  assert.equal(labelAt(index, 'cond ? first', '(z)'), null, 'a ternary is not an object property: nothing to say')
  assert.equal(labelAt(index, ';(function', '() {'), null, 'an immediately called function at the top level has no name in the source')
  assert.equal(labelAt(index, 'withALongFirstArgument', '() => 3'), "withALongFirstArgument('a string well past the…') callback")
  assert.equal(functionLabel(index, 1, 0), '(top level)')
  assert.equal(functionLabel(null, 1, 0), '(top level)', 'a script\'s own code is known by its position alone')
  assert.equal(functionLabel(null, 3, 28), null)
  // a string that looks like a call is not one
  assert.equal(labelAt(index, "const s = 'app.get('", '() => 1'), null)
})

test('a bare call resolves to its declaration in the same file, else through a relative import (ES or CommonJS)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-names-'))
  await mkdir(join(dir, 'lib'))
  const main = join(dir, 'main.js')
  await writeFile(main, `import keep, { stamp as mark } from './lib/keep.js'
const { pad } = require('./lib/pad')
function handler (req) {
  local(req)
  keep(req)
  mark(req)
  pad(req)
  missing(req)
}
function local (req) { return [req].concat([1]) }
`)
  await writeFile(join(dir, 'lib', 'keep.js'), `const all = []
export default function keep (req) { all.push(req) }
export function stamp (req) { return deeper(req) }
function deeper (req) { return String(req).repeat(2) }
`)
  await writeFile(join(dir, 'lib', 'pad.js'), `exports.pad = function (req) { return String(req).padEnd(9) }
`)
  const sources = new SourceCache()
  const index = scriptIndex(sources, main)
  assert.ok(index)
  const handler = index.declarations().find(d => d.name === 'handler')
  assert.ok(handler)
  const fn = functionSource(index.text, handler.line, handler.column)
  assert.ok(fn)
  const resolver = new InlineResolver(sources)
  const site = (/** @type {string} */ callee) => resolver.sites(main, fn, callee).map(s => `${s.declaration.name}@${s.file.slice(dir.length + 1)}:${s.callLine} via ${s.hop.name}:${s.hop.line} depth ${s.depth}`)
  assert.deepEqual(site('concat'), ['local@main.js:10 via local:4 depth 1'])
  assert.deepEqual(site('push'), ['keep@lib/keep.js:2 via keep:5 depth 1'])
  assert.deepEqual(site('repeat'), ['deeper@lib/keep.js:4 via mark:6 depth 2'])
  assert.deepEqual(site('padEnd'), ['pad@lib/pad.js:1 via pad:7 depth 1'])
  assert.deepEqual(site('nowhere'), [])
  // a file that is gone answers nothing
  assert.equal(scriptIndex(sources, join(dir, 'gone.js')), null)
})

test('any text is read without throwing: declarations, labels and enclosing functions', () => {
  let seed = 7
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  const alphabet = 'ab(){}[]/\\*`\'"$ \n;,=>.:?function async class get new on map #'
  for (let i = 0; i < 3000; i++) {
    let text = ''
    const n = Math.floor(rand() * 240)
    for (let j = 0; j < n; j++) {
      const k = Math.floor(rand() * alphabet.length)
      text += rand() < 0.2 ? alphabet.slice(k, k + 8) : alphabet[k]
    }
    const whole = functionSource(text, 1, 0)
    if (!whole) continue
    const index = new ScriptIndex('/fuzz.js', text, whole.code)
    const lines = text.split('\n').length
    for (const d of index.declarations()) {
      assert.ok(d.line >= 1 && d.line <= lines && d.column >= 0)
      index.enclosing(d.start)
    }
    const line = 1 + Math.floor(rand() * lines)
    const label = functionLabel(index, line, Math.floor(rand() * 20))
    assert.ok(label === null || (typeof label === 'string' && label.length > 0 && label.length < 200))
  }
})
