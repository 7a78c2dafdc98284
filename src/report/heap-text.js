// `hotpath heap`'s result in words: the verdict line first (what grows, how much per request, what keeps it), then
// each group's retainer path from the leaked object up to the name that holds it.
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Bytes of survivors that are worth a warning even when no group of them is large enough to grow with load. */
const SPREAD_BYTES = 5 * 1024 * 1024

/** @typedef {import('../heap/describe-groups.js').Culprit} Culprit */

const number = new Intl.NumberFormat('en-US')

/** @param {number} bytes */
export function formatBytes (bytes) {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} KB`
  return `${bytes} B`
}

/**
 * A file as a developer reads it: relative to the working directory when it is under it.
 * @param {string | null} file
 * @param {string} cwd
 */
export function shortFile (file, cwd) {
  if (!file) return ''
  let path = file
  try {
    if (path.startsWith('file://')) path = fileURLToPath(path)
  } catch {}
  if (!path.startsWith('/')) return path
  const rel = relative(cwd, path)
  return rel.startsWith('..') ? path : rel
}

/**
 * @param {Culprit} c
 * @param {string} cwd
 */
function where (c, cwd) {
  return c.file ? ` in ${shortFile(c.file, cwd)}${c.line ? `:${c.line}` : ''}` : ''
}

/**
 * @param {Culprit} c
 * @param {string} cwd
 */
function describe (c, cwd, verb = 'is kept') {
  const perRequest = c.bytesPerRequest !== null ? `, ${formatBytes(c.bytesPerRequest)}/request` : ''
  const kept = c.holding ? `${verb} by \`${c.holding}\` (${c.holder})` : `${verb} by ${c.holder}`
  return `${number.format(c.count)} \`${c.constructor}\` (${formatBytes(c.bytes)}${perRequest}), ${kept}${where(c, cwd)}`
}

/**
 * The first line: what the run found, or why it did not measure what was asked.
 * @param {import('../heap/report-data.js').HeapReport} report
 * @param {string} cwd
 */
export function verdictLine (report, cwd) {
  if (report.failure) return `hotpath heap: ${report.failure.detail}; ${report.snapshots.length} of 3 snapshots taken, nothing analysed`
  if (report.interrupted && report.snapshots.length < 3) return `hotpath heap: interrupted during the ${report.load.phases.at(-1)?.name ?? 'warm-up'} phase; ${report.snapshots.length} of 3 snapshots taken, nothing analysed`
  const n = report.culprits.length
  if (n === 0) {
    const s = report.survivors
    // Megabytes left alive with no holder to show are not "nothing": say what is known, and that it is spread out.
    if ((s?.bytes ?? 0) >= SPREAD_BYTES) {
      return `hotpath heap: ${formatBytes(s?.bytes ?? 0)} made in the growth phase is still alive (${number.format(s?.count ?? 0)} objects), spread so thin that no holder keeps ${report.threshold?.minCount ?? 0} of them (${report.load.growthRequests} requests): the largest groups are below`
    }
    return `hotpath heap: nothing grows with load — ${number.format(s?.count ?? 0)} objects (${formatBytes(s?.bytes ?? 0)}) made in the growth phase survive, no group of them as many as ${report.threshold?.minCount ?? 0} (${report.load.growthRequests} requests)`
  }
  if (n === 1) return `hotpath heap: one group of objects grows with load: ${describe(report.culprits[0], cwd, 'kept')}`
  return `hotpath heap: ${n} groups of objects grow with load; the first, ${describe(report.culprits[0], cwd)}`
}

/**
 * The whole terminal text.
 * @param {import('../heap/report-data.js').HeapReport} report
 * @param {string} cwd
 */
export function formatHeapReport (report, cwd) {
  // The CLI's first line (report.verdict) may say more than the snapshots do: which port the run loaded.
  const lines = [report.verdict || verdictLine(report, cwd)]
  if (report.failure) {
    for (const l of report.failure.stderr) lines.push(`  | ${l}`)
  }
  const phases = report.load.phases.map(p => `${p.name} ${number.format(p.requests)} requests`).join(', ')
  if (phases) lines.push(`Load: ${phases}`)
  report.culprits.forEach((c, i) => {
    lines.push('', `${i + 1}. ${describe(c, cwd, 'kept')}`)
    c.retainers.forEach((r, k) => {
      const at = r.file ? `  ${shortFile(r.file, cwd)}${r.line ? `:${r.line}` : ''}` : ''
      lines.push(`   ${k === 0 ? '  ' : '← '}${r.name} in ${r.holder}${at}`)
    })
  })
  const alloc = report.allocations
  if (alloc && 'error' in alloc) lines.push('', `No allocation flame graph: ${alloc.error}`)
  else if (alloc) {
    const top = alloc.sites.slice(0, 3).map(s => `${s.function} ${shortFile(s.file, cwd)}${s.line ? `:${s.line}` : ''} (${Math.round(s.share * 100)}%)`)
    lines.push('', `Allocated (still alive, ${formatBytes(alloc.bytes)} sampled): ${top.join(', ') || 'no sample'}`)
    lines.push(`Allocation flame graph: ${shortFile(alloc.flame, cwd)}`)
  }
  if (report.snapshots.length > 0) {
    lines.push('', `Snapshots: ${report.snapshots.map(s => `${shortFile(s.file, cwd)} (${formatBytes(s.bytes)})`).join(', ')}`)
  }
  if (report.analyseMs !== null) lines.push(`Analysed in ${(report.analyseMs / 1000).toFixed(1)} s (reading the snapshots: ${((report.parseMs ?? 0) / 1000).toFixed(1)} s)`)
  return lines.join('\n') + '\n'
}
