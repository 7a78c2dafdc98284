import { relative } from 'node:path'
import { placeText, culpritShare, formatBytes, formatCount, formatMs, formatPercent, formatValue, table } from './format.js'
import { wordDiagnosis } from './words/diagnosis.js'
import { otherPortsNote } from './words/ports.js'
import { experimentLines } from './experiments-text.js'

/** @typedef {import('./words/diagnosis.js').Diagnosis} Diagnosis */

const CATEGORY_TITLE = {
  'target-failed': 'the target failed',
  'load-failed': 'the load failed',
  'event-loop': 'event loop blocked',
  io: 'waiting on I/O',
  gc: 'garbage collection pressure',
  'memory-leak': 'memory leak',
  healthy: 'healthy',
  'insufficient-data': 'not enough data'
}

/**
 * The doctor's verdict for a terminal: the verdict in one sentence, the code to blame, the evidence, what to do, then
 * the load figures.
 * @param {Diagnosis | import('../analysis/diagnose.js').Diagnosis} diagnosis in words, or as the analysis returned it
 * @param {{ cwd?: string }} [opts]
 * @returns {string}
 */
export function formatDiagnosis (diagnosis, opts = {}) {
  const d = wordDiagnosis(diagnosis)
  const lines = [firstLine(d)]
  for (const w of d.warnings ?? []) lines.push(`  ! ${warningLine(w, opts.cwd)}`)
  lines.push('', `  ${d.summary}`, '')
  if (d.run.exit.crashed || d.failure?.category === 'target-failed') {
    lines.push('  This covers the run until then. The target\'s last lines of stderr:')
    for (const l of excerpt(d.run.stderr, d.failure?.error?.message)) lines.push(`    | ${l}`)
    lines.push('')
  } else if (d.run.aborted) {
    lines.push('  Stopped early (interrupted); this covers the run until then.', '')
  }

  lines.push(...culpritLines(d))
  lines.push(...routeLines(d))

  lines.push('Evidence')
  lines.push(table([
    ['signal', 'value', 'threshold', 'verdict'],
    ...d.evidence.map(e => [
      (e.decisive ? '▸ ' : '  ') + e.label,
      formatValue(e.value, e.unit),
      e.threshold === null ? '' : `≥ ${formatValue(e.threshold, e.unit)}`,
      e.verdict
    ])
  ], { align: ['left', 'right', 'right', 'left'] }).split('\n').map(l => `  ${l}`).join('\n'))
  lines.push('')

  lines.push(...recommendationLines(d))
  lines.push(...experimentLines(d.experiments ?? []))
  lines.push(...retryLines(d))

  if (d.load) {
    const l = d.load
    lines.push(`Load: ${formatCount(l.requests.total)} requests in ${l.duration.toFixed(1)} s (${formatCount(l.requests.mean)} req/s), ` +
      `${l.connections} connections; latency p50 ${formatMs(l.latency.p50)}, p99 ${formatMs(l.latency.p99)}, max ${formatMs(l.latency.max)}; ` +
      `${l.errors === 0 ? 'no errors' : `${formatCount(l.errors)} errors`}${l.non2xx > 0 ? `, ${formatCount(l.non2xx)} non-2xx` : ''}`)
  }
  const processes = d.processes.map(p => {
    const main = p.threads.find(t => t.threadId === 0) ?? p.threads[0]
    const workers = p.threads.length - 1
    return `pid ${p.pid} ${p.role}${p.serving ? ', serving' : ''}: ELU ${formatPercent(main.utilization, 0)}` +
      (main.cpuPercent !== null ? `, CPU ${formatPercent(main.cpuPercent, 0)}` : '') +
      `, heap ${formatBytes(main.heapUsed)}` +
      (workers > 0 ? `, ${workers} worker thread${workers > 1 ? 's' : ''} (ELU ${p.threads.filter(t => t.threadId !== 0).map(t => formatPercent(t.utilization, 0)).join(', ')})` : '')
  })
  if (processes.length > 0) lines.push(`Processes: ${processes.join('; ')}`)
  const dir = opts.cwd ? relative(opts.cwd, d.run.dir) || '.' : d.run.dir
  lines.push(`Run saved in ${dir} (re-analyse: hotpath doctor --analyse ${dir})`)
  return lines.join('\n') + '\n'
}

/**
 * What changed since a verdict printed before the phases after it (heap snapshots, settings experiments): the first
 * line again, saying after what and whether the verdict changed, then whichever of the summary, culprits, advice and
 * experiments changed. The JSON and the HTML report are written again whole.
 * @param {Diagnosis} d
 * @param {Diagnosis} before
 * @param {{ cwd?: string, after: string }} opts `after`: what ran since, as the line says it (`after the experiments`)
 * @returns {string}
 */
export function formatUpdate (d, before, opts) {
  const same = (/** @type {unknown} */ a, /** @type {unknown} */ b) => JSON.stringify(a) === JSON.stringify(b)
  const head = firstLine(d)
  const changed = head !== firstLine(before) ? ` (was: ${before.category})` : ''
  const lines = ['', `${head} — ${opts.after}${changed}`]
  for (const w of (d.warnings ?? []).filter(w => !before.warnings.some(b => b.message === w.message))) lines.push(`  ! ${warningLine(w, opts.cwd)}`)
  if (d.summary !== before.summary) lines.push('', `  ${d.summary}`)
  lines.push('')
  if (!same(d.culprits, before.culprits)) lines.push(...culpritLines(d))
  if (!same(d.recommendations, before.recommendations)) lines.push(...recommendationLines(d))
  if (!same(d.experiments ?? [], before.experiments ?? [])) lines.push(...experimentLines(d.experiments ?? []))
  if (!same(d.heapRetry ?? null, before.heapRetry ?? null)) lines.push(...retryLines(d))
  if (lines.at(-1) === '' && lines.at(-2) === `${head} — ${opts.after}${changed}`) lines.splice(-1, 1, '  Nothing else changed.', '')
  return lines.join('\n') + '\n'
}

/**
 * After a crash on heap exhaustion, the larger limit loaded again (after a kill at the container's memory, one within
 * it): what it gave.
 * @param {Diagnosis} d
 * @returns {string[]}
 */
function retryLines (d) {
  const r = d.heapRetry
  // One not tried is said in the advice, where the command to try it is.
  if (!r || r.outcome === 'not-run') return []
  return [`A ${r.lowered ? 'heap limit within the container' : 'larger heap limit'}, tried (the target started again, loaded as the run was)`, `  ${r.summary}`, '']
}

/**
 * The verdict's line: category, what damaged files make of it, and the port it is about.
 * @param {Diagnosis} d
 */
function firstLine (d) {
  // A loop busy with work it need not do is not blocked by any one task: said as what it is.
  const title = d.category === 'event-loop' && d.measured?.facts?.kind === 'avoidable' ? 'event loop busy with avoidable work' : CATEGORY_TITLE[d.category]
  return `hotpath doctor: ${d.category} (${title})${damageNote(d)}${otherPortsNote(d.run.url, d.measured?.facts?.otherPorts)}${observedNote(d)}`
}

/**
 * An observed window's first line says so, and what its count supports.
 * @param {Diagnosis} d
 */
function observedNote (d) {
  const t = d.traffic
  if (!d.observed || !t) return ''
  const thin = t.sample === 'thin' ? ': a thin sample, the verdict is a hint' : ''
  return ` — observed real traffic, no load sent: ${formatCount(t.requests)} requests in ${t.seconds.toFixed(1)} s (${t.rate < 10 ? t.rate.toFixed(1) : formatCount(Math.round(t.rate))} req/s)${thin}`
}

/**
 * An observed window's routes, busiest first, with each one's culprits.
 * @param {Diagnosis} d
 * @returns {string[]}
 */
function routeLines (d) {
  const routes = d.routes ?? []
  if (routes.length === 0) return []
  const lines = ['Routes (observed)']
  for (const r of routes.slice(0, 10)) {
    const sample = r.sample === 'thin' ? ', thin sample' : ''
    lines.push(`  ${r.method} ${r.route}  ${formatCount(r.requests)} requests (${r.rate < 10 ? r.rate.toFixed(1) : formatCount(Math.round(r.rate))}/s), mean ${formatMs(r.meanMs)}, max ${formatMs(r.maxMs)}${r.cpuMs >= 0.1 ? `, CPU ${formatMs(r.cpuMs)} a request` : ''}${sample}`)
    for (const c of r.culprits) {
      const what = c.measure === 'waits' ? `waits${c.waitsOn ? ` on ${c.waitsOn}` : ''}` : c.measure === 'cpu' ? 'CPU' : c.measure
      lines.push(`    ${c.label ?? c.function}  ${placeText(c.file, c.line)}  (${what}, ${formatPercent(c.share, 0)})`)
    }
  }
  if (routes.length > 10) lines.push(`  … ${routes.length - 10} more in the JSON`)
  lines.push('')
  return lines
}

/**
 * @param {Diagnosis} d
 * @returns {string[]}
 */
function culpritLines (d) {
  if (d.culprits.length === 0) return []
  const lines = ['Culprits']
  const manyThreads = threadCount(d) > 1
  d.culprits.forEach((c, i) => {
    const share = culpritShare(c)
    const where = manyThreads && c.threads?.length ? `, in ${threadPlace(c.threads)}` : ''
    lines.push(`  ${i + 1}. ${c.label ?? c.function}  ${placeText(c.file, c.line)}  (${share}, ${c.kind}${where})`)
    if (c.reason) lines.push(`     ${c.reason}`)
    const calls = (c.calls ?? []).filter(k => k.share >= 0.02).slice(0, 2)
    if (calls.length > 0) {
      lines.push(`     time goes to ${calls.map(k => `${k.label ?? k.function} (${k.kind === 'app' ? `${placeText(k.file, k.line)}` : k.file || k.kind}, ${formatPercent(k.share, 0)})`).join(', ')}`)
    }
  })
  lines.push('')
  return lines
}

/**
 * @param {Diagnosis} d
 * @returns {string[]}
 */
function recommendationLines (d) {
  if (d.recommendations.length === 0) return []
  return ['Recommendations', ...d.recommendations.map(r => `  • ${r}`), '']
}

/**
 * What damaged files of the run make of the verdict, for the first line: a reader must know before reading it.
 * @param {Diagnosis} d
 */
export function damageNote (d) {
  const affects = new Set((d.warnings ?? []).map(w => w.affects))
  // A profile the probe could not write (a thread that never came back to its loop) is missing, not damaged.
  const why = (d.warnings ?? []).every(w => w.affects === 'nothing' || w.notWritten) ? 'a thread\'s profile was not written' : 'files of the run are damaged'
  if (affects.has('verdict')) return ` — unreliable: ${why}`
  if (affects.has('culprits')) return ` — culprits incomplete: ${why}`
  return ''
}

/**
 * One warning with its file as the user would type it.
 * @param {import('./words/warnings.js').WordedWarning} w
 * @param {string} [cwd]
 */
export function warningLine (w, cwd) {
  if (!cwd) return w.message
  const rel = relative(cwd, w.file)
  return rel.startsWith('..') ? w.message : w.message.replace(w.file, rel)
}

/**
 * How many threads the run sampled: where a culprit was found is worth saying only when there were several.
 * @param {Diagnosis} d
 */
export function threadCount (d) {
  return d.processes.reduce((n, p) => n + p.threads.length, 0)
}

/**
 * Where a culprit was found, in words: `main thread of pid 4242`, `worker threads 1 and 2 of pid 4242`, `pids 4242
 * and 4243` (cluster workers' main threads).
 * @param {{ pid: number, threadId: number }[]} threads
 * @returns {string}
 */
export function threadPlace (threads) {
  /** @type {Map<number, number[]>} */
  const byPid = new Map()
  for (const t of threads) {
    const ids = byPid.get(t.pid) ?? []
    if (!ids.includes(t.threadId)) ids.push(t.threadId)
    byPid.set(t.pid, ids)
  }
  const pids = [...byPid.keys()].sort((a, b) => a - b)
  if (pids.length > 1 && pids.every(pid => byPid.get(pid)?.every(id => id === 0))) return `pids ${list(pids.map(String))}`
  return pids.map(pid => {
    const ids = /** @type {number[]} */ (byPid.get(pid)).sort((a, b) => a - b)
    const workers = ids.filter(id => id !== 0)
    const parts = []
    if (ids[0] === 0) parts.push('main thread')
    if (workers.length > 0) parts.push(`worker thread${workers.length > 1 ? 's' : ''} ${list(workers.map(String))}`)
    return `${parts.join(' and ')} of pid ${pid}`
  }).join('; ')
}

/**
 * `a`, `a and b`, `a, b and c`.
 * @param {string[]} items
 */
function list (items) {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`
}

/**
 * The last lines of a dying target's stderr, with the line of its error kept: a stack trace pushes it out of the last
 * few.
 * @param {string[]} lines
 * @param {string | undefined} message the error's line, when the analysis found one
 * @returns {string[]}
 */
export function excerpt (lines, message) {
  const last = lines.slice(-5)
  if (message === undefined || last.some(l => l.trim() === message)) return last
  const i = lines.findLastIndex(l => l.trim() === message)
  return i === -1 ? last : [...lines.slice(i, i + 3), '…', ...lines.slice(Math.max(i + 3, lines.length - 2))]
}
