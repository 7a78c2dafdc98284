// The figures both HTML reports show: the key figures of a diagnosis under its verdict, the load result's tables, and
// the rules' thresholds the charts draw.
import { THRESHOLDS } from '../../analysis/rules.js'
import { esc, formatBytes, formatCount, formatMs, formatValue, htmlTable } from './page.js'

/** @typedef {import('../words/diagnosis.js').Diagnosis} Diagnosis */
/** @typedef {import('../../load/result.js').LoadResult} LoadResult */

/** The rules' thresholds in the charts' units: delay p99 in ms, utilisation in %, GC in ms per second. */
export const CHART_THRESHOLDS = { delay: THRESHOLDS.delayP99, elu: THRESHOLDS.busy * 100, gc: THRESHOLDS.gcShare * 1000 }

/**
 * The figures a person checks first, each marked when it crosses its rule's threshold.
 * @param {Diagnosis} d
 * @returns {{ label: string, value: string, bad: boolean, title: string }[]}
 */
export function keyFigures (d) {
  const ev = (/** @type {string} */ signal) => d.evidence.find(e => e.signal === signal)
  const over = (/** @type {import('../words/diagnosis.js').WordedEvidence | undefined} */ e) =>
    Boolean(e && (e.decisive || (e.threshold !== null && e.threshold > 0 && e.value >= e.threshold)))
  /** @type {{ label: string, value: string, bad: boolean, title: string }[]} */
  const out = []
  const rps = ev('requests-per-second')
  if (d.load) {
    out.push({ label: 'requests/s', value: formatCount(d.load.requests.mean), bad: false, title: `${formatCount(d.load.requests.total)} requests in ${d.load.duration} s, ${d.load.connections} connections` })
    out.push({ label: 'latency p99', value: formatMs(d.load.latency.p99), bad: false, title: `p50 ${formatMs(d.load.latency.p50)}, max ${formatMs(d.load.latency.max)}` })
  } else if (rps) {
    out.push({ label: 'requests/s served', value: formatCount(rps.value), bad: false, title: rps.verdict })
  }
  for (const [signal, label] of /** @type {const} */ ([
    ['event-loop-delay-p99', 'event-loop delay p99'],
    ['cpu-per-request', 'CPU per request'],
    ['event-loop-utilization', 'event-loop utilisation'],
    ['gc-time', 'time in GC'],
    ['heap-growth', 'heap growth after GC']
  ])) {
    const e = ev(signal)
    if (!e) continue
    out.push({
      label,
      value: formatValue(e.value, e.unit),
      // Utilisation alone proves nothing (a fast server under a saturating load is busy too): red only when it decided.
      bad: signal === 'event-loop-utilization' ? e.decisive : over(e) || (signal === 'heap-growth' && e.verdict === 'leak'),
      title: `${e.verdict}${e.threshold !== null ? ` (threshold ${formatValue(e.threshold, e.unit)})` : ''}`
    })
  }
  // What decided an I/O verdict: time on the server that is not CPU, and requests queued for a socket.
  const serverTime = ev('server-time')
  if (serverTime?.decisive) out.splice(2, 0, { label: 'server time per request', value: formatValue(serverTime.value, serverTime.unit), bad: true, title: serverTime.verdict })
  for (const e of d.evidence.filter(x => x.signal === 'agent-queue')) {
    out.push({ label: e.label, value: formatCount(e.value), bad: true, title: e.verdict })
  }
  const listeners = ev('listener-growth')
  if (listeners) out.push({ label: listeners.label, value: formatCount(listeners.value), bad: true, title: listeners.verdict })
  return out
}

/**
 * @param {LoadResult | null} l
 */
export function loadSection (l) {
  if (!l) return ''
  return `<section class="hr-section" id="load">
  <h2>Load</h2>
  ${loadTables(l)}
</section>`
}

/**
 * The load result in two tables: latency percentiles, and the rest.
 * @param {LoadResult} l
 */
export function loadTables (l) {
  const keys = /** @type {const} */ (['p50', 'p90', 'p97_5', 'p99', 'p99_9', 'max', 'mean'])
  const latency = htmlTable(
    ['latency', ...keys.map(k => k.replace('_', '.'))],
    [['ms', ...keys.map(k => esc(formatMs(l.latency[k])))]],
    { numeric: keys.map((_, i) => i + 1), cls: 'hr-latency' }
  )
  const opts = l.hotpath?.options
  const rate = l.hotpath?.rate
  const codes = Object.entries(l.statusCodeStats ?? {}).map(([code, s]) => `${code}: ${formatCount(s.count)}`).join(', ')
  /** @type {[string, string][]} */
  const facts = [
    ['requests', `${formatCount(l.requests.total)} in ${l.duration} s (${formatCount(l.requests.sent)} sent)`],
    ['requests/s', `mean ${formatCount(l.requests.mean)}, min ${formatCount(l.requests.min)}, max ${formatCount(l.requests.max)}, stddev ${formatCount(l.requests.stddev)}`],
    ['throughput', `${formatBytes(l.throughput.mean, '/s')} (${formatBytes(l.throughput.total)} in all)`],
    ['load', `${opts?.method ?? 'GET'} ${l.url}, ${l.connections} connection${l.connections === 1 ? '' : 's'}` +
      (l.pipelining > 1 ? `, pipelining ${l.pipelining}` : '') + (l.workers > 1 ? `, ${l.workers} worker threads` : '') +
      (rate ? `, ${formatCount(rate.asked)} req/s asked (open loop), ${formatCount(rate.achieved)} achieved${rate.keptUp ? '' : ' — did not keep up'}` : ', closed loop')],
    ['errors', l.errors === 0 ? 'none' : `${formatCount(l.errors)} (${formatCount(l.timeouts)} timeouts, ${formatCount(l.resets)} resets)`],
    ['status codes', codes || 'none'],
    ['non-2xx', formatCount(l.non2xx)]
  ]
  return latency + `<dl class="hr-facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`
}
