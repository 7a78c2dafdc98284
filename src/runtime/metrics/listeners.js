/** Label sets kept at most: event names can be dynamic, and a scrape must stay small. */
const TOP = 20

/**
 * Listener-count growth: the emitters whose listeners for one event passed the watcher's threshold.
 * @param {import('./index.js').Define} define
 * @param {string} prefix
 * @param {import('../../sampling/listeners.js').ListenerWatcher} watcher
 */
export function listenerMetrics (define, prefix, watcher) {
  /** @type {import('../../sampling/listeners.js').ListenerGrowth[]} */
  let growth = []
  define('Gauge', {
    name: `${prefix}event_listeners_max`,
    help: `Most listeners seen on one emitter for one event, for emitters that reached ${watcher.threshold} (top ${TOP})`,
    labelNames: ['emitter', 'event'],
    /** @this {any} */
    collect () {
      growth = watcher.snapshot().slice(0, TOP)
      this.reset()
      for (const g of growth) this.set({ emitter: g.emitter, event: g.event }, g.count)
    }
  })
  define('Gauge', {
    name: `${prefix}event_listeners_growing_emitters`,
    help: `Emitters of one kind whose listeners for one event reached ${watcher.threshold}`,
    labelNames: ['emitter', 'event'],
    /** @this {any} */
    collect () {
      this.reset()
      for (const g of growth) this.set({ emitter: g.emitter, event: g.event }, g.emitters)
    }
  })
}
