import { EventEmitter } from 'node:events'
import { GC_KINDS } from '../sampling/gc.js'
import { Sampler } from '../sampling/sampler.js'
import { warnOnce } from '../sampling/warn.js'
import { checkOptions, rule } from './options.js'

/** @typedef {import('../sampling/sampler.js').Sample} Sample */
/** @typedef {import('../sampling/gc.js').GcStats} GcStats */

/**
 * @typedef {object} MonitorOptions
 * @property {number} [interval] ms between samples (default 1000)
 * @property {number} [slowInterval] ms between the costlier measures, active resources and heap spaces (default:
 *   the interval, at least 1000)
 */

/**
 * @typedef {object} MonitorTotals what the monitor counted since it started
 * @property {number} since epoch ms when it started
 * @property {number} samples
 * @property {{ user: number, system: number }} cpu CPU ms of the process
 * @property {GcStats} gc this thread's GCs
 */

/**
 * @typedef {Omit<Sample, 'resources' | 'heapSpaces'> & {
 *   resources: Record<string, number>, heapSpaces: Record<string, number>, totals: MonitorTotals
 * }} MonitorSnapshot the latest sample, with the latest active resources and heap spaces, and running totals
 */

/** @type {Record<string, import('./options.js').OptionRule>} */
const MONITOR_RULES = { interval: rule.positive('ms'), slowInterval: rule.positive('ms') }

/**
 * Watches this thread's event loop, memory and GC in production, with hotpath's Sampler — the very code the doctor's
 * probe uses. Emits 'sample' with each Sample; `snapshot()` returns the latest with running totals.
 * Its timer is unref'd; a throwing 'sample' listener becomes a process warning, never an uncaught exception.
 * @extends {EventEmitter<{ sample: [Sample] }>}
 */
export class Monitor extends EventEmitter {
  #sampler
  /** @type {Sample | null} */
  #last = null
  /** @type {Record<string, number>} */
  #resources = {}
  /** @type {Record<string, number>} */
  #heapSpaces = {}
  /** @type {MonitorTotals} */
  #totals = emptyTotals()

  /** @param {MonitorOptions} [opts] bad ones are a TypeError */
  constructor (opts) {
    super()
    checkOptions('monitor()', opts, MONITOR_RULES)
    const interval = opts?.interval ?? 1000
    const slowInterval = opts?.slowInterval ?? Math.max(1000, interval)
    this.#sampler = new Sampler({ interval, slowInterval, onSample: (s) => this.#record(s) })
  }

  /** ms between samples. */
  get interval () { return this.#sampler.interval }

  get running () { return this.#sampler.running }

  /** @returns {this} */
  start () {
    if (!this.#sampler.running) {
      this.#totals = emptyTotals()
      this.#sampler.start()
    }
    return this
  }

  /** @returns {this} */
  stop () {
    this.#sampler.stop()
    return this
  }

  /**
   * The latest interval's measures, the latest active resources and heap spaces, and totals since start. Before the
   * first interval ends it closes one early, so there is always something to show.
   * @returns {MonitorSnapshot}
   */
  snapshot () {
    const last = this.#last ?? this.sample()
    const { resources, heapSpaces, ...rest } = last
    return {
      ...rest,
      resources: { ...this.#resources },
      heapSpaces: { ...this.#heapSpaces },
      totals: structuredClone(this.#totals)
    }
  }

  /**
   * Closes the current interval now, records it like a timed one (listeners get it too) and returns it.
   * @returns {Sample}
   */
  sample () {
    const s = this.#sampler.sample()
    this.#record(s)
    return s
  }

  /** @param {Sample} s */
  #record (s) {
    this.#last = s
    if (s.resources !== undefined) this.#resources = s.resources
    if (s.heapSpaces !== undefined) this.#heapSpaces = s.heapSpaces
    const t = this.#totals
    t.samples++
    t.cpu.user += s.cpu.user
    t.cpu.system += s.cpu.system
    t.gc.count += s.gc.count
    t.gc.duration += s.gc.duration
    for (const kind of GC_KINDS) {
      t.gc.byKind[kind].count += s.gc.byKind[kind].count
      t.gc.byKind[kind].duration += s.gc.byKind[kind].duration
    }
    if (this.listenerCount('sample') === 0) return
    try {
      this.emit('sample', s)
    } catch (err) {
      warnOnce('monitor-listener', `hotpath: a monitor 'sample' listener threw: ${err instanceof Error ? err.stack ?? err.message : String(err)}`)
    }
  }
}

/** @returns {MonitorTotals} */
function emptyTotals () {
  return {
    since: Date.now(),
    samples: 0,
    cpu: { user: 0, system: 0 },
    gc: {
      count: 0,
      duration: 0,
      byKind: {
        scavenge: { count: 0, duration: 0 },
        'mark-compact': { count: 0, duration: 0 },
        incremental: { count: 0, duration: 0 },
        'weak-callbacks': { count: 0, duration: 0 }
      }
    }
  }
}

/**
 * Starts a Monitor.
 * @param {MonitorOptions} [opts]
 * @returns {Monitor}
 */
export function monitor (opts) {
  return new Monitor(opts).start()
}
