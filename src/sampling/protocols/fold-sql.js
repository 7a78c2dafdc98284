// SQL folding: a statement without its literals, so that statements differing only by them group together.

import { isDigit, isNamePart, isNameStart } from './bytes.js'

/** Characters of SQL read by foldSql; the rest is not looked at. */
const FOLD_INPUT = 4096
/** Length of foldSql's result. */
const FOLD_OUTPUT = 120
/** A select list this long or longer, or with a comma, is shown as `…`. */
const SELECT_LIST = 24

/**
 * A SQL statement without its literals, to group the statements that differ only by them: strings (`'…'`, `E'…'`,
 * `$$…$$`) and numbers become `?`; `IN (…)` and `VALUES (…)` lists of literals and placeholders become `(…)`;
 * comments go and whitespace runs become one space; keywords keep their case and placeholders (`$1`, `?`, `:name`)
 * stay. A select list of more than one short item becomes `…`; the result is cut at 120 characters. One pass over
 * at most the first 4096 characters.
 * @param {string} text
 * @returns {string}
 */
export function foldSql (text) {
  const folder = new SqlFolder(text.length > FOLD_INPUT ? text.slice(0, FOLD_INPUT) : text)
  let out = folder.fold()
  if (text.length > FOLD_INPUT && !out.endsWith('…')) out += ' …'
  return out.length > FOLD_OUTPUT ? `${out.slice(0, FOLD_OUTPUT - 1).trimEnd()}…` : out
}

/** Words and symbols that may stand in a folded list, besides literals and placeholders. */
const LISTABLE = new Set([',', '-', 'NULL', 'TRUE', 'FALSE', 'DEFAULT'])

/**
 * @typedef {object} SqlGroup an open parenthesis
 * @property {number} start where its `(` is in the output
 * @property {'in' | 'values' | 'row' | null} list a list after IN or VALUES, or a further row of VALUES, or neither
 * @property {number} rowEnd for a further row: where the folded row before it ends in the output
 * @property {boolean} listable nothing but literals, placeholders and commas in it so far
 * @property {number} select where the select list of a SELECT at this depth starts in the output, or -1
 * @property {boolean} selectComma
 */

/** One pass of foldSql over a statement's text, writing the folded text as it goes. */
class SqlFolder {
  #s
  #i = 0
  #out = ''
  #space = false
  /**
   * What the last token written was, for what may follow it: IN or VALUES (a list), ROW (a folded VALUES row),
   * ROW, (a comma after one: another row), COLON (`:name` is a placeholder)
   * @type {'' | 'IN' | 'VALUES' | 'ROW' | 'ROW,' | 'COLON'}
   */
  #after = ''
  /** where the last folded VALUES row ends in the output */
  #rowEnd = 0
  /** @type {SqlGroup[]} the statement itself, then each open parenthesis */
  #groups = [group(0, null, 0)]

  /** @param {string} s */
  constructor (s) {
    this.#s = s
  }

  fold () {
    const s = this.#s
    while (this.#i < s.length) {
      const ch = s.charCodeAt(this.#i)
      const next = s.charCodeAt(this.#i + 1)
      if (ch === 0x20 || (ch >= 0x09 && ch <= 0x0d)) {
        this.#space = true
        this.#i++
      } else if (ch === 0x2d && next === 0x2d) this.#lineComment()
      else if (ch === 0x2f && next === 0x2a) this.#blockComment()
      else if (ch === 0x27) this.#literal(this.#string(this.#i, true))
      else if (ch === 0x22 || ch === 0x60) this.#quotedName()
      else if (ch === 0x24) this.#dollar()
      else if (isDigit(ch) || (ch === 0x2e && isDigit(next))) this.#number()
      else if (isNameStart(ch)) this.#word()
      else if (ch === 0x28) this.#open()
      else if (ch === 0x29) this.#close()
      else this.#symbol(s[this.#i++])
    }
    return this.#out.endsWith(';') ? this.#out.slice(0, -1) : this.#out
  }

  /**
   * Writes a token, after one space where the input had whitespace or a comment.
   * @param {string} token
   * @param {boolean} listable
   * @param {'' | 'IN' | 'VALUES' | 'ROW' | 'ROW,' | 'COLON'} [after]
   */
  #emit (token, listable, after = '') {
    if (this.#space && this.#out.length > 0) this.#out += ' '
    this.#space = false
    this.#out += token
    if (!listable) this.#groups[this.#groups.length - 1].listable = false
    this.#after = after
  }

  /** @param {number} end */
  #literal (end) {
    this.#i = end
    this.#emit('?', true)
  }

  #lineComment () {
    const lf = this.#s.indexOf('\n', this.#i)
    this.#i = lf < 0 ? this.#s.length : lf + 1
    this.#space = true
  }

  /** PostgreSQL's block comments nest */
  #blockComment () {
    const s = this.#s
    let depth = 0
    let i = this.#i
    while (i < s.length) {
      if (s.charCodeAt(i) === 0x2f && s.charCodeAt(i + 1) === 0x2a) {
        depth++
        i += 2
      } else if (s.charCodeAt(i) === 0x2a && s.charCodeAt(i + 1) === 0x2f) {
        i += 2
        if (--depth === 0) break
      } else i++
    }
    this.#i = i
    this.#space = true
  }

  /**
   * The end of a quoted string starting at `i`: a doubled quote is one quote, and so is one after a backslash when
   * backslashes escape (MySQL, and PostgreSQL's E'…'; a PostgreSQL string ending in a backslash is misread).
   * @param {number} i
   * @param {boolean} backslashes
   */
  #string (i, backslashes) {
    const s = this.#s
    const quote = s.charCodeAt(i)
    for (i++; i < s.length; i++) {
      const ch = s.charCodeAt(i)
      if (ch === 0x5c && backslashes) i++
      else if (ch === quote) {
        if (s.charCodeAt(i + 1) !== quote) return i + 1
        i++
      }
    }
    return s.length
  }

  /** A quoted identifier (`"…"`, `` `…` ``), kept */
  #quotedName () {
    const end = this.#string(this.#i, false)
    const name = this.#s.slice(this.#i, end)
    this.#i = end
    this.#emit(name, false)
  }

  /** `$1` is a placeholder; `$$…$$` and `$tag$…$tag$` a string */
  #dollar () {
    const s = this.#s
    const start = this.#i
    let i = start + 1
    if (isDigit(s.charCodeAt(i))) {
      while (isDigit(s.charCodeAt(i))) i++
      this.#i = i
      return this.#emit(s.slice(start, i), true)
    }
    while (i < s.length && isNamePart(s.charCodeAt(i)) && s.charCodeAt(i) !== 0x24) i++
    if (s.charCodeAt(i) !== 0x24) return this.#symbol(s[this.#i++])
    const tag = s.slice(start, i + 1)
    const close = s.indexOf(tag, i + 1)
    this.#literal(close < 0 ? s.length : close + tag.length)
  }

  /** `42`, `1.5`, `.5`, `1e-5`, `0x1F` */
  #number () {
    const s = this.#s
    const hex = (s.charCodeAt(this.#i + 1) | 0x20) === 0x78
    let i = this.#i
    while (i < s.length) {
      const ch = s.charCodeAt(i)
      const exponentSign = !hex && (ch === 0x2b || ch === 0x2d) && (s.charCodeAt(i - 1) | 0x20) === 0x65
      if (!(isNamePart(ch) || ch === 0x2e || exponentSign)) break
      i++
    }
    this.#literal(i)
  }

  #word () {
    const s = this.#s
    const start = this.#i
    let i = start + 1
    while (i < s.length && isNamePart(s.charCodeAt(i))) i++
    // E'…', N'…', B'…', X'…': a string with a prefix
    if (i === start + 1 && s.charCodeAt(i) === 0x27 && 'EeNnBbXx'.includes(s[start])) {
      return this.#literal(this.#string(i, true))
    }
    this.#i = i
    const word = s.slice(start, i)
    const upper = word.length <= 7 ? word.toUpperCase() : ''
    if (upper === 'FROM') this.#from()
    this.#emit(word, LISTABLE.has(upper) || this.#after === 'COLON', upper === 'IN' || upper === 'VALUES' ? upper : '')
    if (upper === 'SELECT') {
      const g = this.#groups[this.#groups.length - 1]
      g.select = this.#out.length
      g.selectComma = false
    }
  }

  /** A FROM ends the select list of the SELECT at its depth, which is shortened when long. */
  #from () {
    const g = this.#groups[this.#groups.length - 1]
    if (g.select < 0) return
    const list = this.#out.slice(g.select).trim()
    if (g.selectComma || list.length >= SELECT_LIST) this.#out = `${this.#out.slice(0, g.select)} …`
    g.select = -1
  }

  #open () {
    this.#i++
    const after = this.#after
    this.#emit('(', false)
    const list = after === 'IN' ? 'in' : after === 'VALUES' ? 'values' : after === 'ROW,' ? 'row' : null
    this.#groups.push(group(this.#out.length - 1, list, this.#rowEnd))
  }

  #close () {
    this.#i++
    const g = this.#groups.length > 1 ? /** @type {SqlGroup} */ (this.#groups.pop()) : null
    if (g === null || g.list === null || !g.listable || g.start === this.#out.length - 1) return this.#emit(')', false)
    // a list of literals: `(…)`; a further row of them after a folded one is dropped with its comma
    this.#out = g.list === 'row' ? this.#out.slice(0, g.rowEnd) : `${this.#out.slice(0, g.start)}(…)`
    this.#space = false
    this.#after = g.list === 'in' ? '' : 'ROW'
    this.#rowEnd = this.#out.length
  }

  /** @param {string} ch */
  #symbol (ch) {
    const g = this.#groups[this.#groups.length - 1]
    if (ch === ',' && g.select >= 0) g.selectComma = true
    const after = ch === ':' ? 'COLON' : ch === ',' && this.#after === 'ROW' ? 'ROW,' : ''
    this.#emit(ch, LISTABLE.has(ch) || ch === '?' || ch === ':', after)
  }
}

/**
 * @param {number} start
 * @param {SqlGroup['list']} list
 * @param {number} rowEnd
 * @returns {SqlGroup}
 */
function group (start, list, rowEnd) {
  return { start, list, rowEnd, listable: true, select: -1, selectComma: false }
}
