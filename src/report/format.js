// Number formatting shared by every terminal report.

/**
 * A duration given in milliseconds, at a precision that keeps three significant digits: 87.3 µs, 1.25 ms, 2.41 s.
 * @param {number} ms
 */
export function formatMs (ms) {
  if (!Number.isFinite(ms)) return '–'
  const abs = Math.abs(ms)
  if (abs === 0) return '0 ms'
  if (abs < 1) return `${sig(ms * 1000)} µs`
  if (abs < 1000) return `${sig(ms)} ms`
  return `${sig(ms / 1000)} s`
}

/**
 * @param {number} n
 * @param {number} [digits]
 */
export function sig (n, digits = 3) {
  if (n === 0) return '0'
  const magnitude = Math.floor(Math.log10(Math.abs(n)))
  const decimals = Math.max(0, digits - 1 - magnitude)
  return n.toFixed(decimals)
}

/** @param {number} n */
export function formatCount (n) {
  return Math.round(n).toLocaleString('en-US')
}

/**
 * @param {number} bytes
 * @param {string} [suffix]
 */
export function formatBytes (bytes, suffix = '') {
  const units = ['B', 'kB', 'MB', 'GB', 'TB']
  let v = bytes
  let u = 0
  while (Math.abs(v) >= 1000 && u < units.length - 1) {
    v /= 1000
    u++
  }
  return `${u === 0 ? Math.round(v) : sig(v)} ${units[u]}${suffix}`
}

/**
 * @param {number} ratio 0..1
 * @param {number} [digits]
 */
export function formatPercent (ratio, digits = 1) {
  return `${(ratio * 100).toFixed(digits)}%`
}

/**
 * Renders rows as a box-drawn table; the first row is the header.
 * @param {string[][]} rows
 * @param {{ align?: ('left' | 'right')[] }} [opts]
 */
export function table (rows, opts = {}) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map(r => displayWidth(r[c] ?? ''))))
  const align = opts.align ?? rows[0].map((_, c) => c === 0 ? 'left' : 'right')
  const line = (/** @type {string} */ l, /** @type {string} */ m, /** @type {string} */ r) =>
    l + widths.map(w => '─'.repeat(w + 2)).join(m) + r
  const row = (/** @type {string[]} */ cells) => '│' + cells.map((cell, c) => {
    const pad = widths[c] - displayWidth(cell)
    return ' ' + (align[c] === 'left' ? cell + ' '.repeat(pad) : ' '.repeat(pad) + cell) + ' '
  }).join('│') + '│'
  return [line('┌', '┬', '┐'), row(rows[0]), line('├', '┼', '┤'), ...rows.slice(1).map(row), line('└', '┴', '┘')].join('\n')
}

/** @param {string} s */
function displayWidth (s) {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\x1b\[[0-9;]*m/g, '').length
}

/**
 * What a culprit's share is of, in words: `42% of CPU`, `30% of allocations`, `listener leak`.
 * @param {{ share: number, measure?: string }} c
 * @param {string} [allocations] how to call the allocations measured (a retained-heap profile says what stays alive)
 */
export function culpritShare (c, allocations = 'allocations') {
  if (c.measure === 'listeners') return 'listener leak'
  if (c.measure === 'waits') return `${formatPercent(c.share, 0)} of request time, waiting`
  if (c.measure === 'retained') return `${formatPercent(c.share, 0)} of what the load left alive`
  return `${formatPercent(c.share, 0)} of ${c.measure === 'allocations' ? allocations : 'CPU'}`
}

/**
 * A value in the unit the diagnosis gives it.
 * @param {number} value
 * @param {string} unit
 */
export function formatValue (value, unit) {
  switch (unit) {
    case 'ms': return formatMs(value)
    case 'ratio': return formatPercent(value, value < 0.1 ? 1 : 0)
    case 'B/s': return formatBytes(value, '/s')
    case 'B': return formatBytes(value)
    case 'req/s': return formatCount(value)
    case 'cores': return `${value.toFixed(1)} cores`
    case 's': return `${value.toFixed(1)} s`
    default: return `${formatCount(value)}${unit ? ` ${unit}` : ''}`
  }
}

/**
 * A place as `file:line`, or the file alone when its line is unknown (0: code a loader compiled in memory, with no
 * source map to say which line of the file it was).
 * @param {string} file
 * @param {number} line
 */
export function placeText (file, line) {
  return line > 0 ? `${file}:${line}` : file
}
