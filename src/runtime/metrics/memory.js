import { GC_KINDS } from '../../sampling/gc.js'

/**
 * GC time and runs by kind, heap space use and active resources, from the monitor's samples.
 * @param {import('./index.js').Define} define
 * @param {string} prefix
 * @param {import('../monitor.js').Monitor} monitor
 */
export function memoryMetrics (define, prefix, monitor) {
  define('Counter', {
    name: `${prefix}gc_pause_seconds_total`,
    help: 'Time spent in garbage collection, by kind (scavenge, mark-compact, incremental, weak-callbacks)',
    labelNames: ['kind'],
    /** @this {any} */
    collect () {
      const gc = monitor.snapshot().totals.gc
      this.reset()
      for (const kind of GC_KINDS) this.inc({ kind }, gc.byKind[kind].duration / 1000)
    }
  })
  define('Counter', {
    name: `${prefix}gc_runs_total`,
    help: 'Garbage collections, by kind',
    labelNames: ['kind'],
    /** @this {any} */
    collect () {
      const gc = monitor.snapshot().totals.gc
      this.reset()
      for (const kind of GC_KINDS) this.inc({ kind }, gc.byKind[kind].count)
    }
  })
  define('Gauge', {
    name: `${prefix}heap_space_used_bytes`,
    help: 'Bytes used in each V8 heap space',
    labelNames: ['space'],
    /** @this {any} */
    collect () {
      this.reset()
      for (const [space, bytes] of Object.entries(monitor.snapshot().heapSpaces)) this.set({ space }, bytes)
    }
  })
  define('Gauge', {
    name: `${prefix}active_resources`,
    help: 'Active resources keeping the event loop alive, by type (process.getActiveResourcesInfo())',
    labelNames: ['type'],
    /** @this {any} */
    collect () {
      this.reset()
      for (const [type, count] of Object.entries(monitor.snapshot().resources)) this.set({ type }, count)
    }
  })
}
