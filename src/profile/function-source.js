// The source of one function, read from the start position V8 gives: scanned to the function's end with strings,
// comments and regular expressions blanked, so that a search over it (call-sites.js, script-index.js) only finds code.
// It is a scan, not a parser: it follows brackets, literals and arrow bodies, and answers nothing rather than guess.

// A function longer than this is not scanned: a line found that far away would be a guess.
const MAX_SCAN = 512 * 1024
const REGEX_BEFORE = new Set('(,=:[!&|?{};+-*%<>~^'.split(''))
const REGEX_AFTER_WORDS = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await', 'instanceof'])

/**
 * The source of one function, with string, comment and regular-expression contents blanked (newlines kept), so a
 * search over it only finds code.
 * @typedef {object} FunctionSource
 * @property {number} start offset in the script
 * @property {string} code the masked text from start to the function's end
 * @property {number} firstLine 1-based line of `start`
 * @property {number} column 0-based column of `start` in its line
 */

/**
 * @param {string} text the whole script
 * @param {number} line 1-based line of the function's start, as V8 reports it
 * @param {number} column 0-based
 * @returns {FunctionSource | null}
 */
export function functionSource (text, line, column) {
  const start = offsetOf(text, line, column)
  if (start < 0) return null
  const scan = new MaskingScan(text, start, Math.min(text.length, start + MAX_SCAN))
  // V8 puts a script's top-level code (CommonJS wrapper, ES module body) at its very start: the function is the script.
  const end = functionEnd(scan, start === 0)
  return end === -1 ? null : { start, code: scan.masked(end), firstLine: line, column: Math.max(0, column) }
}

/**
 * Scans from the function's start to its end, masking literals on the way.
 * @param {MaskingScan} scan
 * @param {boolean} whole the function is the whole script: only masked, to its end
 * @returns {number} the offset just past the function's end, -1 when it has none in reach
 */
function functionEnd (scan, whole) {
  const { text, limit } = scan
  /** @type {'head' | 'body' | 'expr'} */
  let phase = 'head'
  let arrow = false
  let i = scan.start
  while (i < limit) {
    const ch = text[i]
    const next = text[i + 1]
    if (ch === '/' || ch === '"' || ch === "'" || ch === '`' || ch === '}') {
      const past = scan.literal(i, ch, next)
      if (past !== -1) {
        i = past
        continue
      }
    }
    i++
    const code = ch.charCodeAt(0)
    if (code === 10 && phase === 'expr' && scan.depth === 0 && scan.templates.length === 0 && !continues(text, i, scan.last, scan.lastWord, limit)) {
      // An arrow's expression body ends with its line when the next line cannot carry it on (no semicolons needed).
      return i - 1
    }
    if (code === 32 || code === 10 || code === 9 || code === 13) continue
    if (isWordChar(code)) {
      scan.lastWord = scan.last !== '' && isWordChar(scan.last.charCodeAt(0)) ? scan.lastWord + ch : ch
      scan.last = ch
      continue
    }
    scan.lastWord = ''
    scan.last = ch
    if (whole) continue
    if (ch === '(' || ch === '[' || ch === '{') {
      if (phase === 'head' && scan.depth === 0 && ch === '{') phase = 'body'
      scan.depth++
    } else if (ch === ')' || ch === ']' || ch === '}') {
      scan.depth--
      if (scan.depth === 0 && phase === 'body') return i
      if (scan.depth < 0) return phase === 'expr' ? i - 1 : -1
    } else if (ch === '=' && next === '>' && scan.depth === 0 && phase === 'head') {
      i++
      arrow = true
      const rest = /^\s*/.exec(text.slice(i, i + 200))
      if (text[i + (rest ? rest[0].length : 0)] !== '{') phase = 'expr'
    } else if ((ch === ';' || ch === ',') && scan.depth === 0) {
      if (phase === 'expr') return i - 1
      if (!arrow) return -1
    }
  }
  return phase === 'expr' || whole ? i : -1
}

/**
 * The state of a scan over code: the masked text built so far, and what the next character is read against.
 */
class MaskingScan {
  /**
   * @param {string} text
   * @param {number} start
   * @param {number} limit
   */
  constructor (text, start, limit) {
    this.text = text
    this.start = start
    this.limit = limit
    // The masked text is built from slices: runs of code are copied whole, literals are blanked.
    /** @type {string[]} */
    this.parts = []
    this.copied = start
    this.depth = 0
    /** @type {number[]} depths at which a template literal's ${ } opened */
    this.templates = []
    this.last = '' // last significant code character
    this.lastWord = ''
  }

  /**
   * @param {number} at where copying resumes
   * @param {number} from where the literal starts
   * @param {string} replacement
   */
  mask (at, from, replacement) {
    this.parts.push(this.text.slice(this.copied, from), replacement)
    this.copied = at
  }

  /** @param {number} end */
  masked (end) {
    return this.parts.join('') + this.text.slice(this.copied, end)
  }

  /**
   * Masks the comment, string, template literal (or its continuation after a ${ } expression) or regular expression
   * that starts at `i`.
   * @param {number} i
   * @param {string} ch text[i]
   * @param {string} next text[i + 1]
   * @returns {number} where the scan resumes; -1 when none starts at `i`
   */
  literal (i, ch, next) {
    const { text, limit, templates } = this
    if (ch === '/' && next === '/') {
      const end = text.indexOf('\n', i)
      const stop = end === -1 ? limit : end
      this.mask(stop, i, ' '.repeat(stop - i))
      return stop
    }
    if (ch === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2)
      const stop = end === -1 ? limit : end + 2
      this.mask(stop, i, blank(text.slice(i, stop)))
      return stop
    }
    if (ch === '"' || ch === "'") {
      const stop = endOfString(text, i, ch, limit)
      this.mask(stop, i, ch + blank(text.slice(i + 1, stop - 1)) + ch)
      this.last = ch
      return stop
    }
    if (ch === '`' || (ch === '}' && templates.length > 0 && templates[templates.length - 1] === this.depth)) {
      if (ch === '}') templates.pop()
      let j = i + 1
      while (j < limit && text[j] !== '`' && !(text[j] === '$' && text[j + 1] === '{')) j += text[j] === '\\' ? 2 : 1
      if (text[j] === '$') {
        this.mask(j + 2, i, ch + blank(text.slice(i + 1, j)) + '${')
        templates.push(this.depth)
        this.last = '{'
        return j + 2
      }
      this.mask(j + 1, i, ch + blank(text.slice(i + 1, j)) + '`')
      this.last = '`'
      return j + 1
    }
    if (ch === '/' && (this.last === '' || REGEX_BEFORE.has(this.last) || REGEX_AFTER_WORDS.has(this.lastWord))) {
      const stop = endOfRegex(text, i, limit)
      this.mask(stop, i, '/' + blank(text.slice(i + 1, stop - 1)) + '/')
      this.last = '/'
      this.lastWord = ''
      return stop
    }
    return -1
  }
}

// A line ending in one of these, or a next line starting with one, carries the expression on (no automatic semicolon).
const CONTINUES_AFTER = new Set('=+-*/%&|^,?:<>([{.!~'.split(''))
const CONTINUES_BEFORE = new Set('.?:+-*/%&|^=<>,([`'.split(''))

/**
 * Whether the expression before a line break goes on after it.
 * @param {string} text
 * @param {number} i just past the line break
 * @param {string} last the last code character before it
 * @param {string} lastWord the word it ends, when it ends in one
 * @param {number} limit
 */
function continues (text, i, last, lastWord, limit) {
  if (CONTINUES_AFTER.has(last) || REGEX_AFTER_WORDS.has(lastWord)) return true
  let j = i
  while (j < limit) {
    const c = text[j]
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') j++
    else if (c === '/' && text[j + 1] === '/') j = text.indexOf('\n', j) === -1 ? limit : text.indexOf('\n', j)
    else if (c === '/' && text[j + 1] === '*') j = text.indexOf('*/', j + 2) === -1 ? limit : text.indexOf('*/', j + 2) + 2
    else return CONTINUES_BEFORE.has(c)
  }
  return false
}

/** @param {number} c a UTF-16 code unit: letters, digits, _ and $ (and anything past ASCII, as identifiers allow) */
function isWordChar (c) {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c > 127
}

/**
 * @param {string} text
 * @param {number} line 1-based
 * @param {number} column 0-based
 */
function offsetOf (text, line, column) {
  let offset = 0
  for (let l = 1; l < line; l++) {
    offset = text.indexOf('\n', offset)
    if (offset === -1) return -1
    offset++
  }
  const end = text.indexOf('\n', offset)
  if (column > (end === -1 ? text.length : end) - offset) return -1
  return offset + Math.max(0, column)
}

/**
 * @param {string} text
 * @param {number} i the opening quote
 * @param {string} quote
 * @param {number} limit
 */
function endOfString (text, i, quote, limit) {
  let j = i + 1
  while (j < limit && text[j] !== quote && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1
  return Math.min(limit, j + 1)
}

/**
 * @param {string} text
 * @param {number} i the opening slash
 * @param {number} limit
 */
function endOfRegex (text, i, limit) {
  let j = i + 1
  let inClass = false
  while (j < limit && text[j] !== '\n') {
    const c = text[j]
    if (c === '\\') {
      j += 2
      continue
    }
    if (c === '[') inClass = true
    else if (c === ']') inClass = false
    else if (c === '/' && !inClass) break
    j++
  }
  return Math.min(limit, j + 1)
}

/** @param {string} s */
function blank (s) {
  return s.replace(/[^\n]/g, ' ')
}
