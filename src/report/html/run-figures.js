// The figures of a doctor run that are worth comparing with another run's, from its diagnosis.

/**
 * @typedef {object} RunFigure
 * @property {string} figure
 * @property {'ms' | 'ratio' | 'req/s' | 'B' | 'B/s'} unit
 * @property {number | null} value null when the run does not have it
 * @property {'higher' | 'lower' | null} good which way is better, when one is
 */

/**
 * @param {import('../words/diagnosis.js').Diagnosis | null} d
 * @returns {RunFigure[]}
 */
export function runFigures (d) {
  const ev = (/** @type {string} */ signal) => {
    const e = d?.evidence?.find(x => x.signal === signal)
    return e && Number.isFinite(e.value) ? e.value : null
  }
  const serving = (d?.processes ?? []).filter(p => p.serving).flatMap(p => p.threads.filter(t => t.serving))
  return [
    { figure: 'requests/s served', unit: 'req/s', value: ev('requests-per-second'), good: 'higher' },
    { figure: 'CPU per request', unit: 'ms', value: ev('cpu-per-request'), good: 'lower' },
    { figure: 'server time per request', unit: 'ms', value: ev('server-time'), good: 'lower' },
    { figure: 'event-loop delay p99', unit: 'ms', value: ev('event-loop-delay-p99'), good: 'lower' },
    { figure: 'event-loop utilisation', unit: 'ratio', value: ev('event-loop-utilization'), good: null },
    { figure: 'time in GC', unit: 'ratio', value: ev('gc-time'), good: 'lower' },
    { figure: 'heap used (end of load)', unit: 'B', value: d && serving.length > 0 ? serving.reduce((a, t) => a + t.heapUsed, 0) : null, good: null },
    { figure: 'heap growth after GC', unit: 'B/s', value: ev('heap-growth'), good: 'lower' }
  ]
}

/**
 * The relative change from a to b (0.1 = +10%); NaN when it cannot be said.
 * @param {number | null} a
 * @param {number | null} b
 */
export function relativeChange (a, b) {
  if (a === null || b === null) return NaN
  if (a === 0) return b === 0 ? 0 : Infinity
  return (b - a) / Math.abs(a)
}

/**
 * A change as text: +12.3%, −4.0%, 'new', or ''.
 * @param {number} change
 */
export function formatChange (change) {
  if (Number.isNaN(change)) return ''
  if (!Number.isFinite(change)) return 'new'
  return `${change >= 0 ? '+' : '−'}${Math.abs(change * 100).toFixed(1)}%`
}
