// V8 profiles say which function called which, but not from which line: a node's positionTicks count only its own
// samples. When a function's time goes to what it calls, the line to show is the one that makes that call. This finds
// it by reading the function's source (from the start position V8 gives) and looking for a call of the callee's name,
// outside strings, comments and regular expressions.
import { functionSource } from './function-source.js'

/** @typedef {import('./function-source.js').FunctionSource} FunctionSource */

// Also exported here, beside callLines, which searches what it returns.
export { functionSource }

/**
 * Lines (1-based) inside the function where it calls `calleeName`, first occurrence first.
 * @param {FunctionSource} fn
 * @param {string} calleeName a V8 function name: `digest`, `Hash`, `Module._load`, `bound foo`, `get size`
 * @returns {number[]}
 */
export function callLines (fn, calleeName) {
  /** @type {number[]} */
  const lines = []
  for (const site of callSites(fn, calleeName)) {
    if (!lines.includes(site.line)) lines.push(site.line)
  }
  return lines
}

/**
 * Where inside the function it calls `calleeName`: 1-based line and 0-based column of each call, first first. The
 * column tells a call apart from others on its line — in one line of minified code, or of code a loader compiled
 * whitespace-free (tsx), a source map needs it to find the call's own line.
 * @param {FunctionSource} fn
 * @param {string} calleeName see callLines
 * @returns {{ line: number, column: number }[]}
 */
export function callSites (fn, calleeName) {
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
  /** @type {{ line: number, column: number }[]} */
  const sites = []
  // The function's own name at its start is a declaration, not a call.
  const bodyFrom = fn.start === 0 ? 0 : fn.code.search(/[({]/)
  let m
  while ((m = pattern.exec(fn.code)) !== null) {
    if (m.index < bodyFrom) continue
    const newlines = countNewlines(fn.code, m.index)
    const lineStart = fn.code.lastIndexOf('\n', m.index - 1) + 1
    // The function's first line starts at its start, not at the line's: columns there count from the line's start.
    const column = newlines === 0 ? fn.column + m.index : m.index - lineStart
    sites.push({ line: fn.firstLine + newlines, column })
  }
  return sites
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
