// What a script's source says about its functions, read once per file: where named functions are declared (and so
// which function encloses a position), what a bare name called in the code refers to (a declaration in the same file,
// or one imported from a relative module). The search runs over the masked text of call-sites.js — strings, comments
// and regular expressions blanked — so nothing inside a literal is taken for code. It is a reading, not a parser: it
// finds the common forms and answers nothing rather than guess.
import { dirname, isAbsolute, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { functionSource } from './call-sites.js'

/**
 * A named function in a script, at the position V8 gives it (its parameter list; `async` for async arrows).
 * @typedef {object} Declaration
 * @property {string} name the name a person calls it by: the declared name, the variable or the property assigned
 * @property {number} start offset in the script
 * @property {number} line 1-based
 * @property {number} column 0-based
 * @property {boolean} bindable whether `name(…)` in the same scope calls it (declarations and variables; not methods or
 *   properties)
 * @property {boolean} exportDefault whether it is the module's default export
 */

const ID = '[A-Za-z_$][\\w$]*'
// After the name: what starts a function value. The parameter list's `(` is checked to be followed by `=>` or `{`.
const FUNCTION_VALUE = `(?:async\\s+)?(?:function\\b\\s*\\*?\\s*(?:${ID}\\s*)?\\(|\\(|${ID}\\s*=>)`
const DECLARATION_PATTERNS = [
  // function name (…) / async function* name (…) / export default function name (…)
  { re: new RegExp(`(export\\s+default\\s+)?(?:async\\s+)?\\bfunction\\b\\s*\\*?\\s*(${ID})\\s*\\(`, 'g'), name: 2, bindable: true, exported: 1 },
  // const name = function (…) / (…) => / x =>
  { re: new RegExp(`(?<![\\w$.])(?:const|let|var)\\s+(${ID})\\s*=\\s*${FUNCTION_VALUE}`, 'g'), name: 1, bindable: true },
  // exports.name = …, Foo.prototype.name = …, this.name = …
  { re: new RegExp(`(?<![\\w$])(?:${ID}\\s*\\.\\s*)+(${ID})\\s*=(?!=)\\s*${FUNCTION_VALUE}`, 'g'), name: 1, bindable: false },
  // name: function (…) / name: (…) => in an object literal
  { re: new RegExp(`(?<![\\w$.])(${ID})\\s*:\\s*${FUNCTION_VALUE}`, 'g'), name: 1, bindable: false, property: true },
  // methods in classes and object literals: name (…) { at the start of a line or after { ; }
  // (the white space is taken whole, through a lookahead, so a long indentation is not backtracked over)
  { re: new RegExp(`(?:^|[;{}])(?=([ \\t]*))\\1(?:(?:static|async|get|set)\\s+)*(?:\\*\\s*)?(#?${ID})\\s*\\(`, 'gm'), name: 2, bindable: false, method: true }
]

// Words that are never the name of a function called or declared (`get`, `of`, `from` can be).
export const KEYWORDS = new Set(['if', 'for', 'while', 'switch', 'catch', 'return', 'typeof', 'function', 'new', 'await',
  'yield', 'super', 'import', 'with', 'do', 'else', 'in', 'instanceof', 'void', 'delete', 'throw', 'case', 'class',
  'extends', 'async', 'let', 'const', 'var', 'this', 'try', 'finally', 'default', 'export'])

// How far back a declaration is looked for around a position: beyond it, enclosing functions are not worth the scan.
const MAX_CANDIDATES = 400

export class ScriptIndex {
  /**
   * @param {string} file
   * @param {string} text
   * @param {string} masked the text with literals and comments blanked, same offsets
   */
  constructor (file, text, masked) {
    this.file = file
    this.text = text
    this.masked = masked
    /** @type {number[]} offset of each line's start */
    this.lineStarts = [0]
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) this.lineStarts.push(i + 1)
    /** @type {Declaration[] | null} */
    this.declarationList = null
    /** @type {Map<Declaration, number>} */
    this.ends = new Map()
    /** @type {Map<string, { specifier: string, imported: string }> | null} */
    this.importMap = null
  }

  /**
   * @param {number} line 1-based
   * @param {number} column 0-based
   * @returns {number} the offset, -1 outside the text
   */
  offset (line, column) {
    if (line < 1 || line > this.lineStarts.length) return -1
    const at = this.lineStarts[line - 1] + Math.max(0, column)
    return at <= this.text.length ? at : -1
  }

  /**
   * @param {number} offset
   * @returns {{ line: number, column: number }} 1-based line, 0-based column
   */
  position (offset) {
    let lo = 0
    let hi = this.lineStarts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (this.lineStarts[mid] <= offset) lo = mid
      else hi = mid - 1
    }
    return { line: lo + 1, column: offset - this.lineStarts[lo] }
  }

  /** @returns {Declaration[]} every named function found, in order of position */
  declarations () {
    if (this.declarationList) return this.declarationList
    /** @type {Map<number, Declaration>} */
    const byStart = new Map()
    const m = this.masked
    for (const pattern of DECLARATION_PATTERNS) {
      const { re } = pattern
      re.lastIndex = 0
      let match
      while ((match = re.exec(m)) !== null) {
        const name = match[pattern.name]
        if (KEYWORDS.has(name)) continue
        // A property's value only in an object literal: `{ name: () => …`, not `a ? name : (x) => …`.
        if (pattern.property && !/[{,]/.test(previousCode(m, match.index + match[0].indexOf(name)))) continue
        const body = pattern.method || pattern.exported !== undefined || /\bfunction\b/.test(match[0].slice(match[0].indexOf(name) + name.length))
        const start = functionStart(m, match.index + match[0].length, body)
        if (start === -1 || byStart.has(start)) continue
        const { line, column } = this.position(start)
        byStart.set(start, { name, start, line, column, bindable: pattern.bindable, exportDefault: pattern.exported !== undefined && match[pattern.exported] !== undefined })
      }
    }
    this.declarationList = [...byStart.values()].sort((a, b) => a.start - b.start)
    return this.declarationList
  }

  /**
   * The offset just past a declared function's last character, or -1 when its extent cannot be read.
   * @param {Declaration} d
   */
  endOf (d) {
    let end = this.ends.get(d)
    if (end !== undefined) return end
    end = -1
    try {
      const fn = functionSource(this.text, d.line, d.column)
      if (fn) end = fn.start + fn.code.length
    } catch {}
    this.ends.set(d, end)
    return end
  }

  /**
   * The innermost named function whose source contains `offset` (not one starting there).
   * @param {number} offset
   * @returns {Declaration | null}
   */
  enclosing (offset) {
    const list = this.declarations()
    let i = upperBound(list, offset) - 1
    for (let n = 0; i >= 0 && n < MAX_CANDIDATES; i--, n++) {
      const d = list[i]
      if (d.start >= offset) continue
      if (this.endOf(d) > offset) return d
    }
    return null
  }

  /**
   * The functions `name(…)` may call from `offset`: declarations of that name in this file, the innermost scope's first
   * (one enclosing `offset`'s enclosing functions), else any.
   * @param {string} name
   * @param {number} offset where the call is made
   * @returns {Declaration[]}
   */
  bound (name, offset) {
    const found = this.declarations().filter(d => d.bindable && d.name === name)
    if (found.length <= 1) return found
    // Several: the one declared in the nearest function around the call, else one at the top level.
    for (let outer = this.enclosing(offset); outer; outer = this.enclosing(outer.start)) {
      const end = this.endOf(outer)
      const inside = found.filter(d => d.start > outer.start && d.start < end && this.enclosing(d.start) === outer)
      if (inside.length > 0) return inside.slice(0, 1)
    }
    const top = found.filter(d => this.enclosing(d.start) === null)
    return (top.length > 0 ? top : found).slice(0, 1)
  }

  /**
   * What a local name was imported as, from which module (ES imports and `require` destructuring).
   * @param {string} name
   * @returns {{ specifier: string, imported: string } | undefined}
   */
  importOf (name) {
    if (!this.importMap) this.importMap = readImports(this.text, this.masked)
    return this.importMap.get(name)
  }

  /**
   * The file a relative specifier of this script names, among the candidates `exists` accepts.
   * @param {string} specifier
   * @param {(file: string) => boolean} exists
   * @returns {string | null}
   */
  resolveSpecifier (specifier, exists) {
    let base
    if (specifier.startsWith('file://')) {
      try {
        base = fileURLToPath(specifier)
      } catch {
        return null
      }
    } else if (specifier.startsWith('./') || specifier.startsWith('../') || isAbsolute(specifier)) {
      base = resolve(dirname(this.file), specifier)
    } else {
      return null // a package or a builtin: not the app's code to read
    }
    for (const candidate of [base, `${base}.js`, `${base}.mjs`, `${base}.cjs`, `${base}/index.js`]) {
      if (exists(candidate)) return candidate
    }
    return null
  }
}

/** @type {WeakMap<object, Map<string, ScriptIndex | null>>} */
const indexes = new WeakMap()

/**
 * The index of a script, built on first use and kept as long as `sources` is.
 * @param {import('./sources.js').SourceCache} sources
 * @param {string} file an absolute path
 * @returns {ScriptIndex | null} null when the file cannot be read
 */
export function scriptIndex (sources, file) {
  let perFile = indexes.get(sources)
  if (!perFile) indexes.set(sources, perFile = new Map())
  let index = perFile.get(file)
  if (index !== undefined) return index
  index = null
  const text = file.startsWith('/') || isAbsolute(file) ? sources.read(file) : null
  if (text !== null) {
    try {
      const whole = functionSource(text, 1, 0)
      if (whole) index = new ScriptIndex(file, text, whole.code)
    } catch {}
  }
  perFile.set(file, index)
  return index
}

/**
 * Where the function whose value starts right before `end` begins, as V8 counts it: the parameter list (`async` for an
 * async arrow, whose parameters follow it); -1 when what follows is not a function.
 * @param {string} m masked text
 * @param {number} end offset just past the match: after `(`, or after `=>` of a one-parameter arrow
 * @param {boolean} body whether the parameters are those of a `function` or a method (followed by `{`), not an arrow's
 */
function functionStart (m, end, body) {
  const last = m[end - 1]
  if (last === '>') {
    // x => …: the parameter
    let i = end - 3
    while (i >= 0 && /\s/.test(m[i])) i--
    let s = i
    while (s > 0 && /[\w$]/.test(m[s - 1])) s--
    return asyncBefore(m, s)
  }
  const open = end - 1
  const close = matching(m, open)
  if (close === -1) return -1
  const after = /^\s*(=>|\{)/.exec(m.slice(close + 1, close + 200))
  if (!after || (after[1] === '{') !== body) return -1
  // `function name (` starts at its `(`; an arrow's `(` may follow `async`.
  return body ? open : asyncBefore(m, open)
}

/**
 * The last character of code before `offset` ('' at the start).
 * @param {string} m masked text
 * @param {number} offset
 */
export function previousCode (m, offset) {
  let i = offset - 1
  while (i >= 0 && /\s/.test(m[i])) i--
  return i >= 0 ? m[i] : ''
}

/**
 * @param {string} m
 * @param {number} s
 */
function asyncBefore (m, s) {
  const before = /async\s*$/.exec(m.slice(Math.max(0, s - 20), s))
  return before && !/[\w$]/.test(m[s - before[0].length - 1] ?? '') ? s - before[0].length : s
}

/**
 * The offset of the bracket closing the one at `open`, in masked text; -1 when it does not close.
 * @param {string} m
 * @param {number} open
 */
export function matching (m, open) {
  let depth = 0
  const limit = Math.min(m.length, open + 64 * 1024)
  for (let i = open; i < limit; i++) {
    const c = m[i]
    if (c === '(' || c === '[' || c === '{') depth++
    else if (c === ')' || c === ']' || c === '}') {
      depth--
      if (depth === 0) return i
      if (depth < 0) return -1
    }
  }
  return -1
}

/**
 * @param {Declaration[]} list sorted by start
 * @param {number} offset
 * @returns {number} the index of the first declaration starting after `offset`
 */
function upperBound (list, offset) {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (list[mid].start <= offset) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Local names bound by imports: `import a, { b, c as d } from './x.js'` and `const { b, c: d } = require('./x')`.
 * @param {string} text
 * @param {string} masked
 */
function readImports (text, masked) {
  /** @type {Map<string, { specifier: string, imported: string }>} */
  const map = new Map()
  const specifierAt = (/** @type {number} */ quote) => {
    const q = text[quote]
    const end = text.indexOf(q, quote + 1)
    return end === -1 ? null : text.slice(quote + 1, end)
  }
  const esm = /(?<![\w$.])import\s+([\w$\s,{}*]+?)\s*from\s*(['"])/g
  let m
  while ((m = esm.exec(masked)) !== null) {
    const specifier = specifierAt(m.index + m[0].length - 1)
    if (specifier === null) continue
    const clause = m[1]
    const braces = /\{([^}]*)\}/.exec(clause)
    const head = clause.replace(/\{[^}]*\}/, '').split(',').map(s => s.trim()).filter(Boolean)
    for (const h of head) if (/^[\w$]+$/.test(h)) map.set(h, { specifier, imported: 'default' })
    if (braces) {
      for (const part of braces[1].split(',')) {
        const named = /^\s*([\w$]+)(?:\s+as\s+([\w$]+))?\s*$/.exec(part)
        if (named) map.set(named[2] ?? named[1], { specifier, imported: named[1] })
      }
    }
  }
  const cjs = /(?<![\w$.])(?:const|let|var)\s*\{([^}]*)\}\s*=\s*require\s*\(\s*(['"])/g
  while ((m = cjs.exec(masked)) !== null) {
    const specifier = specifierAt(m.index + m[0].length - 1)
    if (specifier === null) continue
    for (const part of m[1].split(',')) {
      const named = /^\s*([\w$]+)(?:\s*:\s*([\w$]+))?\s*$/.exec(part)
      if (named) map.set(named[2] ?? named[1], { specifier, imported: named[1] })
    }
  }
  return map
}
