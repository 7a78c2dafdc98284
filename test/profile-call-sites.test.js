// Finding the line of a call inside a function's source: code only, never strings, comments, regular expressions or
// template text; and any text, however broken, is read without throwing.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { callLines, computedCallSite, computedKeyAt, functionSource, isComputedName } from '../src/profile/call-sites.js'

const source = `import { createHash } from 'node:crypto'
function etag (body) {
  // digest( in a comment is not a call
  const note = 'digest(' + "createHash(" + \`digest( \${body.length} \`
  const re = /digest\\(/g
  const h = createHash('sha512')
    .update(JSON.stringify(body))
    .digest('hex')
  return \`"\${h.slice(0, 8)}"\` + (note.length / 2) / 1
}
function other () { return digest() }
const arrow = (x) => x.map(v => hash(v)).join(',')
`

test('a call is found on its line, inside the function only, outside literals and comments', () => {
  const fn = functionSource(source, 2, 14)
  assert.ok(fn)
  assert.deepEqual(callLines(fn, 'digest'), [8])
  assert.deepEqual(callLines(fn, 'createHash'), [6])
  assert.deepEqual(callLines(fn, 'update'), [7])
  assert.deepEqual(callLines(fn, 'stringify'), [7])
  assert.deepEqual(callLines(fn, 'slice'), [9])
  assert.deepEqual(callLines(fn, 'etag'), [], 'its own name is not a call')
  // V8's names: class-qualified, bound, getters
  assert.deepEqual(callLines(fn, 'Hash.digest'), [8])
  assert.deepEqual(callLines(fn, 'bound digest'), [8])
  assert.deepEqual(callLines(fn, 'get length'), [4, 9], 'a getter is a property read: in the template expression and in the code')
  const arrow = functionSource(source, 12, 14)
  assert.ok(arrow)
  assert.deepEqual(callLines(arrow, 'hash'), [12])
  assert.equal(arrow.code.includes('const'), false, 'an expression arrow ends with its expression')
})

test('an arrow\'s expression body ends with its line, unless the next line carries it on', () => {
  const text = `const query = () => new Promise((resolve) => setTimeout(resolve, 2))

const server = http.createServer(async (req, res) => {
  res.end(digest(req))
})
const chained = (rows) => rows
  .map(r => r.id)
  // a comment between
  .filter(Boolean)
const wrapped = (a) =>
  a + 1
const last = (a) => a`
  const query = functionSource(text, 1, 14)
  assert.ok(query)
  assert.equal(query.code, '() => new Promise((resolve) => setTimeout(resolve, 2))')
  assert.deepEqual(callLines(query, 'digest'), [], 'the next statement is not part of it')
  const chained = functionSource(text, 6, 16)
  assert.ok(chained)
  assert.deepEqual(callLines(chained, 'filter'), [9])
  assert.equal(chained.code.includes('wrapped'), false)
  const wrapped = functionSource(text, 10, 16)
  assert.ok(wrapped)
  assert.equal(wrapped.code.trim().endsWith('a + 1'), true)
  assert.equal(functionSource(text, 12, 13)?.code, '(a) => a')
})

test('the whole script is the function at its very start (module code)', () => {
  const fn = functionSource(source, 1, 0)
  assert.ok(fn)
  assert.deepEqual(callLines(fn, 'digest'), [8, 11])
})

// A method defined under a computed key (`this[name] = function`, `[key]() {}`, as ORMs define their accessors) is named
// `Model.<computed>` or nothing by V8: its callers call it by a name no profile says.
const handler = `async function show (req, res) {
  const user = await User.findByPk(req.params.id)
  res.setHeader('content-type', 'application/json')
  const posts = await user.getPosts({ limit: 20 })
  const ids = posts.map(p => p.id).join(',')
  res.end(JSON.stringify({ user, posts, ids }))
}
`

test('a callee V8 names <computed> is found at the one method call no known function explains', () => {
  assert.equal(isComputedName('Model.<computed>'), true)
  assert.equal(isComputedName('Assoc.obj.<computed>'), true)
  assert.equal(isComputedName('getPosts'), false)
  const fn = functionSource(handler, 1, 14)
  assert.ok(fn)
  assert.deepEqual(callLines(fn, 'Model.<computed>'), [], 'no call is named so')
  // findByPk is a function the profile knows; setHeader, map, join, end, stringify are the runtime's
  assert.deepEqual(computedCallSite(fn, new Set(['findByPk', 'show'])), { line: 4, column: 27 })
  // With findByPk unknown, two lines are candidates: the function's own samples pick one, or nothing is said
  assert.equal(computedCallSite(fn, new Set()), undefined)
  assert.equal(computedCallSite(fn, new Set(), new Map([[4, 2], [2, 2]])), undefined, 'a tie is no evidence')
  assert.deepEqual(computedCallSite(fn, new Set(), new Map([[4, 3], [6, 9]])), { line: 4, column: 27 })
  assert.deepEqual(computedCallSite(fn, new Set(), new Map([[2, 1]])), { line: 2, column: 26 })
  const bracket = functionSource('function f (m, k) {\n  m.ready()\n  return m[k](1)\n}\n', 1, 11)
  assert.ok(bracket)
  assert.deepEqual(computedCallSite(bracket, new Set(['ready'])), { line: 3, column: 12 }, 'a call by a computed key too')
})

test('a function defined under a computed key is told from its source', () => {
  const code = 'class M { [key] () {} }\nobj[name] = function () {}\nconst o = { [k]: async function * () {} }\nfoo(function () {})\nconst a = { b: () => 1 }\n'
  const at = (/** @type {string} */ s) => code.indexOf(s)
  assert.equal(computedKeyAt(code, at('() {} }')), true)
  assert.equal(computedKeyAt(code, at('() {}\nconst o')), true)
  assert.equal(computedKeyAt(code, at('() {} }\nfoo')), true)
  assert.equal(computedKeyAt(code, at('() {})')), false)
  assert.equal(computedKeyAt(code, at('() => 1')), false)
})

test('positions outside the text, and broken code, give null or nothing, never an exception', () => {
  assert.equal(functionSource(source, 999, 0), null)
  assert.equal(functionSource(source, 2, 999), null)
  let seed = 1
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  const alphabet = 'ab(){}[]/\\*`\'"$ \n;,=>digest.'
  for (let i = 0; i < 3000; i++) {
    let text = ''
    const n = Math.floor(rand() * 200)
    for (let j = 0; j < n; j++) text += alphabet[Math.floor(rand() * alphabet.length)]
    const fn = functionSource(text, 1, Math.floor(rand() * 5))
    if (fn) {
      const lines = callLines(fn, 'digest')
      const total = text.split('\n').length
      for (const l of lines) assert.ok(l >= 1 && l <= total)
    }
  }
})
