import { performance } from 'node:perf_hooks'
import { DelayWindows } from '../../sampling/delay.js'

/**
 * Event-loop delay percentiles and utilisation over the window between two scrapes: delay histograms read and reset
 * at each scrape without losing the tick that spans it (DelayWindows), and utilisation from the scrape's own
 * baseline — so a 2-second stall between 15-second scrapes shows in that scrape's max, even one that starts right
 * after the previous scrape.
 * @param {import('./index.js').Define} define
 * @param {string} prefix
 * @returns {() => void} releases the histogram
 */
export function eventLoopMetrics (define, prefix) {
  const window = new DelayWindows(10)
  window.enable()
  let lastElu = performance.eventLoopUtilization()
  define('Gauge', {
    name: `${prefix}eventloop_delay_seconds`,
    help: 'Event-loop delay since the previous scrape: quantile 0 is the minimum, 1 the maximum',
    labelNames: ['quantile'],
    /** @this {any} */
    collect () {
      const d = window.read()
      this.set({ quantile: '0' }, seconds(d.min))
      this.set({ quantile: '0.5' }, seconds(d.p50))
      this.set({ quantile: '0.9' }, seconds(d.p90))
      this.set({ quantile: '0.99' }, seconds(d.p99))
      this.set({ quantile: '1' }, seconds(d.max))
    }
  })
  define('Gauge', {
    name: `${prefix}eventloop_utilization_ratio`,
    help: 'Share of the time since the previous scrape that the event loop was busy, 0..1',
    /** @this {any} */
    collect () {
      const now = performance.eventLoopUtilization()
      this.set(performance.eventLoopUtilization(now, lastElu).utilization)
      lastElu = now
    }
  })
  return () => window.disable()
}

/** ms (to the µs) in seconds, without float noise in the exposition. @param {number} ms */
function seconds (ms) {
  return Math.round(ms * 1000) / 1e6
}
