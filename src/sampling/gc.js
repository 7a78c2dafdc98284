import { PerformanceObserver, constants } from 'node:perf_hooks'

/** @typedef {'scavenge' | 'mark-compact' | 'incremental' | 'weak-callbacks'} GcKind */

/**
 * @typedef {object} GcStats GCs that ended in an interval; durations in ms
 * @property {number} count
 * @property {number} duration
 * @property {Record<GcKind, { count: number, duration: number }>} byKind
 */

/** @type {readonly GcKind[]} */
export const GC_KINDS = Object.freeze(['scavenge', 'mark-compact', 'incremental', 'weak-callbacks'])

/**
 * Index into GC_KINDS for V8's kind flag, -1 for kinds we do not name.
 * @param {number} kind
 */
function kindIndex (kind) {
  switch (kind) {
    case constants.NODE_PERFORMANCE_GC_MINOR: return 0
    case constants.NODE_PERFORMANCE_GC_MAJOR: return 1
    case constants.NODE_PERFORMANCE_GC_INCREMENTAL: return 2
    case constants.NODE_PERFORMANCE_GC_WEAKCB: return 3
    default: return -1
  }
}

/**
 * Index into GC_KINDS of a GC pause as V8's trace events name it (category `v8`; the same names on Node 20 to 24),
 * -1 for the events that are not pauses.
 * @param {string} name
 */
export function traceEventKind (name) {
  switch (name) {
    case 'V8.GCScavenger':
    case 'V8.GCMinorMS':
      return 0
    case 'V8.GCFinalizeMC':
    case 'V8.GCFinalizeMCReduceMemory':
    case 'V8.GCCompactor':
      return 1
    case 'V8.GCIncrementalMarkingStart':
    case 'V8.GCIncrementalMarking':
    case 'V8.GCIncrementalMarkingFinalize':
      return 2
    default: return -1
  }
}

/** @type {GcStats} the figures of a thread whose GCs are not counted; shared and frozen */
export const NO_GC_STATS = Object.freeze({
  count: 0,
  duration: 0,
  byKind: /** @type {GcStats['byKind']} */ (Object.freeze(Object.fromEntries(GC_KINDS.map(k => [k, Object.freeze({ count: 0, duration: 0 })]))))
})

/**
 * Counts this thread's GCs by kind through a PerformanceObserver. Tallies live in fixed arrays so that the observer
 * callback, which runs after every GC, allocates nothing of its own.
 */
export class GcTally {
  /** @type {PerformanceObserver | null} */
  #observer = null
  #counts = [0, 0, 0, 0]
  #durations = [0, 0, 0, 0]
  #count = 0
  #duration = 0

  start () {
    if (this.#observer !== null) return
    this.#observer = new PerformanceObserver((list) => {
      const entries = list.getEntries()
      for (let i = 0; i < entries.length; i++) {
        const entry = /** @type {{ duration: number, detail?: { kind?: number }, kind?: number }} */ (/** @type {unknown} */ (entries[i]))
        const k = kindIndex(entry.detail?.kind ?? entry.kind ?? 0)
        this.#count++
        this.#duration += entry.duration
        if (k >= 0) {
          this.#counts[k]++
          this.#durations[k] += entry.duration
        }
      }
    })
    this.#observer.observe({ entryTypes: ['gc'] })
  }

  stop () {
    if (this.#observer === null) return
    this.#observer.disconnect()
    this.#observer = null
  }

  /**
   * What was counted since the previous call, then starts again from zero.
   * @returns {GcStats}
   */
  take () {
    const c = this.#counts
    const d = this.#durations
    const stats = {
      count: this.#count,
      duration: round(this.#duration),
      byKind: {
        scavenge: { count: c[0], duration: round(d[0]) },
        'mark-compact': { count: c[1], duration: round(d[1]) },
        incremental: { count: c[2], duration: round(d[2]) },
        'weak-callbacks': { count: c[3], duration: round(d[3]) }
      }
    }
    this.#count = 0
    this.#duration = 0
    c[0] = c[1] = c[2] = c[3] = 0
    d[0] = d[1] = d[2] = d[3] = 0
    return stats
  }
}

/** ms to the microsecond. @param {number} ms */
function round (ms) {
  return Math.round(ms * 1000) / 1000
}
