// The larger heap limit doctor loads after a crash on heap exhaustion (src/analysis/heap-retry.js), in words: one
// sentence for the JSON, the terminal and the HTML report.
import { formatBytes, formatCount } from '../format.js'

/**
 * @param {import('../../analysis/heap-retry.js').HeapRetry} r
 * @returns {string}
 */
export function retrySummary (r) {
  const of = r.heapLimit !== null ? ` of its ${formatBytes(r.heapLimit)} limit` : ''
  const heap = r.peakHeap !== null ? `peak heap ${formatBytes(r.peakHeap)}${of}` : 'heap not read'
  const rss = r.peakRss !== null ? `, RSS ${formatBytes(r.peakRss)}` : ''
  const rate = r.requestsPerSecond !== null ? `${formatCount(r.requestsPerSecond)} req/s` : 'no req/s'
  const first = r.firstSeconds !== null ? ` (the first run: ${r.firstSeconds} s)` : ''
  switch (r.outcome) {
    case 'survived': return `With ${r.flag} the load ran ${r.seconds ?? '?'} s without a crash: ${rate}, ${heap}${rss}.`
    case 'crashed': return `With ${r.flag} the heap ran out${r.lowered ? ' (V8\'s error, not a kill)' : ' again'} after ${r.seconds ?? '?'} s of load${first}: ${heap}; ${formatCount(r.requests)} responses until then (${rate}).`
    case 'exited': return `With ${r.flag} the target exited ${r.exit?.signal ? `on signal ${r.exit.signal}` : `with code ${r.exit?.code}`} after ${r.seconds ?? '?'} s of load${first}, not on the heap's limit: ${heap}${rss}.`
    case 'interrupted': return `Loading it with ${r.flag} was skipped (interrupted).`
    case 'not-run': return r.why === 'no-room'
      ? `${r.flag} not tried: the machine has less memory free than that.`
      : `${r.flag} not tried: doctor cannot start the target again under the same load (--attach, --on-port).`
    default: return `Loading it with ${r.flag} measured nothing: ${r.error ?? 'no responses'}.`
  }
}
