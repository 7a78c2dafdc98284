// Culprits in the terminal: one line each — share, function, file:line — and where the time goes.
import { relative } from 'node:path'
import { formatBytes, formatMs, formatPercent, placeText } from '../format.js'

/**
 * @param {import('../../profile/find-culprits.js').Culprit[]} culprits
 * @param {{ total: number, unit: 'ms' | 'bytes', cwd?: string }} opts total: what shares are of
 * @returns {string}
 */
export function formatCulprits (culprits, opts) {
  if (culprits.length === 0) return 'No function stands out: the profile has no code of its own to blame.\n'
  const what = opts.unit === 'ms' ? `${formatMs(opts.total)} of CPU` : `${formatBytes(opts.total)} sampled`
  const lines = [`Top culprits (share of ${what}):`]
  for (const c of culprits) {
    const where = c.file ? placeText(shortPath(c.file, opts.cwd), c.line) : ''
    lines.push(`  ${formatPercent(c.share).padStart(6)}  ${c.label ?? c.function}  ${where}${c.kind === 'app' ? '' : `  [${c.kind}]`}`)
    const calls = c.calls.filter(x => x.share >= c.share * 0.1).slice(0, 3)
    if (calls.length > 0) {
      lines.push(`          → ${calls.map(x => `${x.label ?? x.function} (${x.file ? shortPath(x.file, opts.cwd) : x.kind}) ${formatPercent(x.share)}`).join(', ')}`)
    }
    const caller = c.callers[0]
    if (caller && (caller.via !== c.function || caller.inlined)) {
      const via = caller.via !== c.function ? ` via ${caller.via}` : ''
      lines.push(`          ← ${caller.inlined ? 'inlined by V8 into' : 'run by'} ${caller.label ?? caller.function}${via} at ${shortPath(caller.file, opts.cwd)}:${caller.line}`)
    }
  }
  return lines.join('\n') + '\n'
}

/**
 * @param {string} file
 * @param {string} [cwd]
 */
function shortPath (file, cwd = process.cwd()) {
  if (!file.startsWith('/')) return file
  const rel = relative(cwd, file)
  return rel.startsWith('../../') ? file : rel
}
