// Where a wait's own function loops around it, read from its source: an N+1 is fixed at the loop, and the line that
// awaits the function holding the loop (the handler's `await orderTotals()`) is one call away from it. The scan is of
// brackets and keywords, not a parse: enough to find the block a line sits in, outward to its function's header.

const LOOP = /\b(?:for\s*(?:await\s*)?\(|while\s*\(|do\b)|\.(?:forEach|reduce|reduceRight)\s*\(/
const FUNCTION = /\bfunction\b|=>|^\s*(?:static\s+)?(?:async\s+)?(?:get\s+|set\s+)?\*?\s*(?!(?:if|for|while|switch|catch|with|return)\b)[\w$#]+\s*\([^)]*\)\s*\{/
/** Lines looked at above the wait: a loop further than this from its body is not one a reader would call "the loop". */
const MAX_LINES = 200

/**
 * @param {string} text the file's source
 * @param {number} line 1-based line of the wait
 * @returns {number | null} 1-based line of the loop around it in the same function, or null when there is none
 */
export function enclosingLoop (text, line) {
  const lines = text.split('\n')
  if (line < 1 || line > lines.length) return null
  const own = code(lines[line - 1])
  // A loop written on the wait's own line (`for (const id of ids) await get(id)`).
  if (LOOP.test(own)) return line
  let depth = 0
  for (let i = line - 2; i >= 0 && i >= line - 1 - MAX_LINES; i--) {
    const l = code(lines[i])
    // A loop without braces on the line just above (`for (...)` then the awaited line).
    if (i === line - 2 && LOOP.test(l) && !/[{;]\s*$/.test(l)) return i + 1
    for (let k = l.length - 1; k >= 0; k--) {
      const c = l[k]
      if (c === '}') depth++
      else if (c === '{') {
        if (depth > 0) {
          depth--
          continue
        }
        // This brace opens a block the wait is in: its header is this line up to the brace, or the line above.
        const header = l.slice(0, k).trim() || code(lines[i - 1] ?? '')
        if (LOOP.test(header)) return header === l.slice(0, k).trim() || i === 0 ? i + 1 : i
        if (FUNCTION.test(header)) return null
      }
    }
  }
  return null
}

/**
 * A line without its comments and the contents of its string literals, so that their brackets do not count.
 * @param {string} line
 */
function code (line) {
  return line
    .replace(/(['"`])(?:\\.|(?!\1).)*\1/g, '""')
    .replace(/\/\/.*$/, '')
    .replace(/\/\*.*?\*\//g, '')
}
