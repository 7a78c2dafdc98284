// V8 profiles say which function called which, but not from which line: a node's positionTicks count only its own
// samples. When a function's time goes to what it calls, the line to show is the one that makes that call. This finds
// it by reading the function's source (from the start position V8 gives) and looking for a call of the callee's name,
// outside strings, comments and regular expressions.

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
  // V8 puts a script's top-level code (CommonJS wrapper, ES module body) at its very start: the function is the script.
  const whole = start === 0
  const limit = Math.min(text.length, start + MAX_SCAN)
  // The masked text is built from slices: runs of code are copied whole, literals are blanked.
  /** @type {string[]} */
  const parts = []
  let copied = start
  /** @param {number} at where copying resumes @param {number} from where the literal starts @param {string} replacement */
  const mask = (at, from, replacement) => {
    parts.push(text.slice(copied, from), replacement)
    copied = at
  }
  const result = (/** @type {number} */ end) => ({ start, code: parts.join('') + text.slice(copied, end), firstLine: line })
  let depth = 0
  /** @type {'head' | 'body' | 'expr'} */
  let phase = 'head'
  let arrow = false
  /** @type {number[]} depths at which a template literal's ${ } opened */
  const templates = []
  let last = '' // last significant code character
  let lastWord = ''
  let i = start
  while (i < limit) {
    const ch = text[i]
    const next = text[i + 1]
    if (ch === '/' && next === '/') {
      const end = text.indexOf('\n', i)
      const stop = end === -1 ? limit : end
      mask(stop, i, ' '.repeat(stop - i))
      i = stop
      continue
    }
    if (ch === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2)
      const stop = end === -1 ? limit : end + 2
      mask(stop, i, blank(text.slice(i, stop)))
      i = stop
      continue
    }
    if (ch === '"' || ch === "'") {
      const stop = endOfString(text, i, ch, limit)
      mask(stop, i, ch + blank(text.slice(i + 1, stop - 1)) + ch)
      i = stop
      last = ch
      continue
    }
    if (ch === '`' || (ch === '}' && templates.length > 0 && templates[templates.length - 1] === depth)) {
      // A template literal, or its continuation after a ${ } expression.
      if (ch === '}') templates.pop()
      let j = i + 1
      while (j < limit && text[j] !== '`' && !(text[j] === '$' && text[j + 1] === '{')) j += text[j] === '\\' ? 2 : 1
      if (text[j] === '$') {
        mask(j + 2, i, ch + blank(text.slice(i + 1, j)) + '${')
        templates.push(depth)
        i = j + 2
        last = '{'
      } else {
        mask(j + 1, i, ch + blank(text.slice(i + 1, j)) + '`')
        i = j + 1
        last = '`'
      }
      continue
    }
    if (ch === '/' && (last === '' || REGEX_BEFORE.has(last) || REGEX_AFTER_WORDS.has(lastWord))) {
      const stop = endOfRegex(text, i, limit)
      mask(stop, i, '/' + blank(text.slice(i + 1, stop - 1)) + '/')
      i = stop
      last = '/'
      lastWord = ''
      continue
    }
    i++
    const code = ch.charCodeAt(0)
    if (code === 10 && phase === 'expr' && depth === 0 && templates.length === 0 && !continues(text, i, last, lastWord, limit)) {
      // An arrow's expression body ends with its line when the next line cannot carry it on (no semicolons needed).
      return result(i - 1)
    }
    if (code === 32 || code === 10 || code === 9 || code === 13) continue
    if (isWordChar(code)) {
      lastWord = last !== '' && isWordChar(last.charCodeAt(0)) ? lastWord + ch : ch
      last = ch
      continue
    }
    lastWord = ''
    last = ch
    if (whole) continue
    if (ch === '(' || ch === '[' || ch === '{') {
      if (phase === 'head' && depth === 0 && ch === '{') phase = 'body'
      depth++
    } else if (ch === ')' || ch === ']' || ch === '}') {
      depth--
      if (depth === 0 && phase === 'body') return result(i)
      if (depth < 0) return phase === 'expr' ? result(i - 1) : null
    } else if (ch === '=' && next === '>' && depth === 0 && phase === 'head') {
      i++
      arrow = true
      const rest = /^\s*/.exec(text.slice(i, i + 200))
      if (text[i + (rest ? rest[0].length : 0)] !== '{') phase = 'expr'
    } else if ((ch === ';' || ch === ',') && depth === 0) {
      if (phase === 'expr') return result(i - 1)
      if (!arrow) return null
    }
  }
  return phase === 'expr' || whole ? result(i) : null
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
 * Lines (1-based) inside the function where it calls `calleeName`, first occurrence first.
 * @param {FunctionSource} fn
 * @param {string} calleeName a V8 function name: `digest`, `Hash`, `Module._load`, `bound foo`, `get size`
 * @returns {number[]}
 */
export function callLines (fn, calleeName) {
  let name = calleeName.trim()
  let getter = false
  for (const prefix of ['bound ', 'async ', 'get ', 'set ']) {
    while (name.startsWith(prefix)) {
      if (prefix === 'get ' || prefix === 'set ') getter = true
      name = name.slice(prefix.length).trim()
    }
  }
  name = name.slice(name.lastIndexOf('.') + 1)
  if (!/^[\w$]+$/.test(name)) return []
  const id = name.replace(/\$/g, '\\$')
  // `name(`, `name?.(`, `name.call(`, `name.apply(`, `new Name(`, tagged templates; a getter is a bare property read.
  const pattern = getter
    ? new RegExp(`(?<![\\w$])${id}(?![\\w$]|\\s*\\()`, 'g')
    : new RegExp(`(?<![\\w$])${id}\\s*(?:\\?\\.\\s*)?(?:\\(|\\.\\s*(?:call|apply)\\s*\\(|\`)`, 'g')
  /** @type {number[]} */
  const lines = []
  // The function's own name at its start is a declaration, not a call.
  const bodyFrom = fn.start === 0 ? 0 : fn.code.search(/[({]/)
  let m
  while ((m = pattern.exec(fn.code)) !== null) {
    if (m.index < bodyFrom) continue
    const line = fn.firstLine + countNewlines(fn.code, m.index)
    if (!lines.includes(line)) lines.push(line)
  }
  return lines
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

/**
 * @param {string} s
 * @param {number} end
 */
function countNewlines (s, end) {
  let n = 0
  for (let i = s.indexOf('\n'); i !== -1 && i < end; i = s.indexOf('\n', i + 1)) n++
  return n
}
