// A name a person recognises for a function V8 calls `(anonymous)`, read from the code around it: what it is passed to
// (`createServer callback`, `on('data') callback`, `new Promise callback`), the named function it is written in
// (`(anonymous in buildReport)`), both (`map callback in buildReport`), or `(top level)` for a script's own code. Only
// words of the source are used; when the source says nothing, there is no label.
import { KEYWORDS, matching, previousCode } from './script-declarations.js'

/** @typedef {import('./script-index.js').ScriptIndex} ScriptIndex */

const MAX_LITERAL = 24
// How far back the opening parenthesis of the call a callback is passed to is looked for.
const MAX_ARGUMENTS = 16 * 1024

/**
 * @param {ScriptIndex | null} index the script the function is in, null when it cannot be read
 * @param {number} line 1-based line of the function's start, as V8 gives it
 * @param {number} column 0-based
 * @returns {string | null}
 */
export function functionLabel (index, line, column) {
  // V8 puts a script's own code (a module body, the CommonJS wrapper) at its very start.
  if (line === 1 && column === 0) return '(top level)'
  if (!index) return null
  const start = index.offset(line, column)
  if (start <= 0) return null
  const callee = calleeOf(index, start)
  const outer = index.enclosing(start)
  if (callee && outer) return `${callee} callback in ${outer.name}`
  if (callee) return `${callee} callback`
  if (outer) return `(anonymous in ${outer.name})`
  return null
}

/** Blocks looked at, going out from a position, for the function that holds it. */
const MAX_BLOCKS = 64

/**
 * The label of the anonymous function that holds a position (a stack frame's line and column: an `await` inside an
 * arrow passed to `app.get`), read from the source as functionLabel does; null when the source says nothing.
 * @param {ScriptIndex | null} index
 * @param {number} line 1-based
 * @param {number} column 0-based
 * @returns {string | null}
 */
export function labelAt (index, line, column) {
  if (!index) return null
  const at = index.offset(line, column)
  if (at < 0) return null
  const m = index.masked
  let from = at
  for (let n = 0; n < MAX_BLOCKS; n++) {
    const open = m.lastIndexOf('{', from - 1)
    if (open < 0) return null
    from = open
    const close = matching(m, open)
    if (close !== -1 && close < at) continue
    const start = functionStartOfBody(m, open)
    if (start === -1) continue
    const { line: l, column: c } = index.position(start)
    return functionLabel(index, l, c)
  }
  return null
}

/**
 * Where the function whose body opens at `open` starts, as V8 counts it (its parameter list, or `async` before an
 * arrow's), or -1 when the block is not a function's body (an `if`, a loop, an object).
 * @param {string} m masked text
 * @param {number} open offset of the body's `{`
 */
function functionStartOfBody (m, open) {
  let i = skipSpaceBack(m, open - 1)
  const arrow = m[i] === '>' && m[i - 1] === '='
  if (arrow) i = skipSpaceBack(m, i - 2)
  if (m[i] !== ')') {
    // `x => {`: one bare parameter
    if (!arrow) return -1
    const word = wordEndingAt(m, i)
    return word ? asyncStart(m, word.start) : -1
  }
  const paren = openerBefore(m, i - 1)
  if (paren < 0 || m[paren] !== '(') return -1
  if (arrow) return asyncStart(m, paren)
  // `function name (…) {`, `name (…) {` in a class or object: not `if (…) {`, `for (…) {`, `catch (…) {`
  const name = wordBefore(m, paren)
  if (name && KEYWORDS.has(name.word) && name.word !== 'function') return -1
  return paren
}

/**
 * @param {string} m
 * @param {number} s where an arrow's parameters start
 */
function asyncStart (m, s) {
  const w = wordBefore(m, s)
  return w && w.word === 'async' ? w.start : s
}

/**
 * The call a function expression starting at `start` is an argument of: its callee's last name, `new` when it
 * constructs, and its first argument when that is a short string literal (`on('data')`, `get('/users')`).
 * @param {ScriptIndex} index
 * @param {number} start
 * @returns {string | null}
 */
function calleeOf (index, start) {
  const m = index.masked
  // Back over `async` and `function*` to where the expression begins.
  let q = start
  let w = wordBefore(m, q)
  if (m[skipSpaceBack(m, q - 1)] === '*') w = wordBefore(m, skipSpaceBack(m, q - 1))
  if (w && w.word === 'function') q = w.start
  w = wordBefore(m, q)
  if (w && w.word === 'async') q = w.start
  const b = skipSpaceBack(m, q - 1)
  if (b < 0 || (m[b] !== '(' && m[b] !== ',')) return null
  const open = m[b] === '(' ? b : openerBefore(m, b)
  if (open < 0 || m[open] !== '(') return null
  let k = skipSpaceBack(m, open - 1)
  if (m[k] === '.' && m[k - 1] === '?') k = skipSpaceBack(m, k - 2)
  const name = wordEndingAt(m, k)
  if (!name || KEYWORDS.has(name.word) || /^\d/.test(name.word)) return null
  // `function name (cb = () => …)` declares, it does not call.
  if (wordBefore(m, name.start)?.word === 'function') return null
  // The head of the member chain: `new a.b.C(` constructs.
  let head = name.start
  for (;;) {
    const dot = skipSpaceBack(m, head - 1)
    if (m[dot] !== '.') break
    const part = wordEndingAt(m, skipSpaceBack(m, dot - 1))
    if (!part) break
    head = part.start
  }
  const constructs = wordBefore(m, head)?.word === 'new'
  const literal = m[b] === ',' ? firstLiteral(index, open) : null
  return `${constructs ? 'new ' : ''}${name.word}${literal ? `(${literal})` : ''}`
}

/**
 * The first argument of the call opened at `open`, when it is a string literal, shortened.
 * @param {ScriptIndex} index
 * @param {number} open
 */
function firstLiteral (index, open) {
  const m = index.masked
  let depth = 0
  let end = -1
  for (let i = open + 1; i < m.length && i < open + MAX_ARGUMENTS; i++) {
    const c = m[i]
    if (c === '(' || c === '[' || c === '{') depth++
    else if (c === ')' || c === ']' || c === '}') depth--
    else if (c === ',' && depth === 0) {
      end = i
      break
    }
    if (depth < 0) break
  }
  if (end === -1) return null
  const arg = index.text.slice(open + 1, end).trim()
  const quoted = /^(['"`])([^'"`\\\n]*)\1$/.exec(arg)
  if (!quoted || (quoted[1] === '`' && quoted[2].includes('${'))) return null
  const body = quoted[2].length > MAX_LITERAL ? `${quoted[2].slice(0, MAX_LITERAL - 1).trimEnd()}…` : quoted[2]
  return `${quoted[1] === '`' ? "'" : quoted[1]}${body}${quoted[1] === '`' ? "'" : quoted[1]}`
}

/**
 * The bracket left open before `from`, scanning back: the `(` of the argument list a `,` is in.
 * @param {string} m
 * @param {number} from
 */
function openerBefore (m, from) {
  let depth = 0
  for (let i = from; i >= 0 && i > from - MAX_ARGUMENTS; i--) {
    const c = m[i]
    if (c === ')' || c === ']' || c === '}') depth++
    else if (c === '(' || c === '[' || c === '{') {
      if (depth === 0) return i
      depth--
    } else if (c === ';' && depth === 0) return -1
  }
  return -1
}

/**
 * @param {string} m
 * @param {number} i
 * @returns {number} the last index at or before `i` that is not white space; -1 when none
 */
function skipSpaceBack (m, i) {
  while (i >= 0 && /\s/.test(m[i])) i--
  return i
}

/**
 * The identifier that ends at `end` (inclusive).
 * @param {string} m
 * @param {number} end
 * @returns {{ word: string, start: number } | null}
 */
function wordEndingAt (m, end) {
  if (end < 0 || !/[\w$]/.test(m[end])) return null
  let s = end
  while (s > 0 && /[\w$]/.test(m[s - 1])) s--
  return { word: m.slice(s, end + 1), start: s }
}

/**
 * The identifier right before `offset`, across white space.
 * @param {string} m
 * @param {number} offset
 */
function wordBefore (m, offset) {
  return /[\w$]/.test(previousCode(m, offset)) ? wordEndingAt(m, skipSpaceBack(m, offset - 1)) : null
}
