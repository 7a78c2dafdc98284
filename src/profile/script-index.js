// What a script's source says about its functions, read once per file: where named functions are declared (and so
// which function encloses a position), what a bare name called in the code refers to (a declaration in the same file,
// or one imported from a relative module). The search runs over the masked text of call-sites.js — strings, comments
// and regular expressions blanked — so nothing inside a literal is taken for code. It is a reading, not a parser: it
// finds the common forms and answers nothing rather than guess.
import { dirname, isAbsolute, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { functionSource } from './function-source.js'
import { findDeclarations } from './script-declarations.js'
import { readImports } from './script-imports.js'

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
    if (!this.declarationList) this.declarationList = findDeclarations(this.masked, (offset) => this.position(offset))
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
