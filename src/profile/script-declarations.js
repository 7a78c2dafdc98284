// Where a script declares its named functions, read from its masked text (see script-index.js) with a few patterns:
// the common forms of declarations, variables, properties and methods, each at the position V8 gives the function.

/** @typedef {import('./script-index.js').Declaration} Declaration */

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

/**
 * Every named function found, in order of position.
 * @param {string} m the masked text
 * @param {(offset: number) => { line: number, column: number }} position
 * @returns {Declaration[]}
 */
export function findDeclarations (m, position) {
  /** @type {Map<number, Declaration>} */
  const byStart = new Map()
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
      const { line, column } = position(start)
      byStart.set(start, { name, start, line, column, bindable: pattern.bindable, exportDefault: pattern.exported !== undefined && match[pattern.exported] !== undefined })
    }
  }
  return [...byStart.values()].sort((a, b) => a.start - b.start)
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
