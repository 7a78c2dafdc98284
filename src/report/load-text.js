import { formatBytes, formatCount, formatMs, formatPercent, table } from './format.js'

/** @typedef {import('../load/result.js').LoadResult} LoadResult */

/**
 * The terminal summary of a load result: first what a reader must know before trusting any figure (the run failed,
 * was interrupted, merges runs made at different times), then the latency and rate tables, counts, status codes,
 * errors and, under --rate, whether the server kept up.
 * @param {LoadResult} r
 * @param {{ command?: string, notes?: string[] }} [opts] `command` names the lines' speaker; `notes` go first
 * @returns {string}
 */
export function formatLoadResult (r, opts = {}) {
  const first = [...(opts.notes ?? []), ...headlines(r, opts.command ?? 'load')]
  return first.map(line => `${line}\n`).join('') + loadTables(r)
}

/**
 * The lines that say how far a result can be trusted, empty for a run that measured what was asked.
 * @param {LoadResult} r
 * @param {string} command
 * @returns {string[]}
 */
export function headlines (r, command) {
  const say = (/** @type {string} */ text) => `hotpath ${command}: ${text}`
  const lines = []
  // A failure first, however the run ended: it is what the exit code says.
  if (r.failed) lines.push(say(r.failed.detail))
  if (r.interrupted) {
    lines.push(say(r.hotpath.options.machines > 1
      ? 'interrupted: a merged result was stopped early, so the figures cover less than was asked'
      : `interrupted after ${r.duration.toFixed(1)} s: the figures cover the run until then`))
  }
  if (r.merged && !r.merged.together) {
    lines.push(say(`warning: the merged results did not run at the same time (${r.merged.overlap.toFixed(1)} s in common over ` +
      `${r.merged.span.toFixed(1)} s): counts and percentiles add up, but requests/s and the duration describe no single load`))
  }
  return lines
}

/**
 * The figures alone: latency and rate tables, counts, status codes, errors, and the notes that explain them.
 * @param {LoadResult} r
 * @returns {string}
 */
export function loadTables (r) {
  const l = r.latency
  const latencyRows = [
    ['Latency', 'p50', 'p90', 'p99', 'p99.9', 'max', 'mean', 'stdev'],
    ['', ...[l.p50, l.p90, l.p99, l.p99_9, l.max, l.mean, l.stddev].map(formatMs)]
  ]
  const u = r.hotpath.uncorrectedLatency
  if (u) latencyRows.push(['uncorrected', ...[u.p50, u.p90, u.p99, u.p99_9, u.max, u.mean, u.stddev].map(formatMs)])
  const q = r.requests
  const t = r.throughput
  const rateRows = [
    ['Per second', 'mean', 'stdev', 'min', 'p50', 'max'],
    ['Requests', ...[q.mean, q.stddev, q.min, q.p50, q.max].map(formatCount)],
    ['Bytes', ...[t.mean, t.stddev, t.min, t.p50, t.max].map(v => formatBytes(v))]
  ]
  const lines = [
    table(latencyRows),
    table(rateRows),
    '',
    `${formatCount(q.total)} requests in ${r.duration.toFixed(1)} s, ${formatBytes(t.total)} read` +
      (q.sent !== q.total ? ` (${formatCount(q.sent)} sent)` : ''),
    `Status: ${statusLine(r)}`,
    `Errors: ${errorLine(r)}`
  ]
  const rate = r.hotpath.rate
  if (rate) {
    lines.push(rate.keptUp
      ? `Rate: asked ${formatCount(rate.asked)} req/s, achieved ${formatCount(rate.achieved)} req/s.`
      : `Rate: asked ${formatCount(rate.asked)} req/s, achieved only ${formatCount(rate.achieved)} req/s: the server could not keep up` +
        (rate.missed > 0 ? ` (${formatCount(rate.missed)} requests were due but no connection was free; try more connections)` : '') + '.')
    lines.push('Latency is measured from each request\'s intended send time (coordinated omission corrected); "uncorrected" is from the actual send.')
    const late = r.hotpath.sendLateness // results saved before it was measured have none
    // Said only when it moves the figures: a tenth of the latency it is part of.
    if (late && (late.p50 >= 0.1 * l.p50 || late.p99 >= 0.1 * l.p99)) {
      lines.push(`Sends went out late: p50 ${formatMs(late.p50)}, p99 ${formatMs(late.p99)}, max ${formatMs(late.max)} after they were due, ` +
        'and the latency above includes it: ' + (rate.keptUp
          ? 'the generator itself was slow to send (a busy machine?).'
          : 'mostly waits for a free connection while the server fell behind.'))
    }
  }
  const nap = r.hotpath.maxNapUs ?? 0 // results saved before read batching have none
  if (r.hotpath.options.coalesce || nap > 0) {
    lines.push(nap > 0
      ? `Reads batched (--coalesce): the generator napped up to ${formatCount(nap)} µs between reads (at most 6% of the median latency); latencies include it.`
      : 'Reads batched (--coalesce): the generator never napped between reads (responses too fast, or the generator too busy).')
  }
  if (r.hotpath.options.machines > 1) lines.push(`Merged from ${r.hotpath.options.machines} results.`)
  return lines.join('\n') + '\n'
}

/** @param {LoadResult} r */
function statusLine (r) {
  const codes = Object.entries(r.statusCodeStats)
  if (codes.length === 0) return 'no responses'
  const total = codes.reduce((a, [, s]) => a + s.count, 0)
  return codes.map(([code, s]) => `${code} ×${formatCount(s.count)}` + (codes.length > 1 ? ` (${formatPercent(s.count / total)})` : '')).join(', ')
}

/** @param {LoadResult} r */
function errorLine (r) {
  if (r.errors === 0 && r.hotpath.reconnects === 0) return 'none'
  const kinds = Object.entries(r.hotpath.errorKinds).sort((a, b) => b[1] - a[1])
  const parts = [r.errors === 0 ? 'none' : `${formatCount(r.errors)} (${kinds.map(([k, n]) => `${k} ×${formatCount(n)}`).join(', ')})`]
  if (r.timeouts > 0) parts.push(`${formatCount(r.timeouts)} timeouts`)
  if (r.resets > 0) parts.push(`${formatCount(r.resets)} resets`)
  if (r.hotpath.reconnects > 0) parts.push(`${formatCount(r.hotpath.reconnects)} reconnects`)
  return parts.join(' · ')
}
