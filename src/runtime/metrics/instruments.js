import { performance } from 'node:perf_hooks'
import { AgentWatcher } from '../../sampling/agents.js'
import { GC_KINDS } from '../../sampling/gc.js'
import { ListenerWatcher } from '../../sampling/listeners.js'
import { Monitor } from '../monitor.js'
import { ListenerGrowthJudge } from './listener-growth.js'
import { acquireLoopDelay, DELAY_BUCKETS } from './loop-delay.js'

// What hotpath measures for a metrics backend, independent of the backend: prom-client and OpenTelemetry each write
// these instruments their own way. Every value is either a current level (gauge) or a running total since the process
// (or the source) started — never "since the previous read" — so that any number of readers agree and no read changes
// what the next one sees.

/** @typedef {{ labels: Record<string, string>, value: number }} Point */
/** @typedef {import('./loop-delay.js').DelayTotals} DelayTotals */

/**
 * @typedef {object} Instrument
 * @property {string} name the Prometheus name, prefix included (counters end in _total)
 * @property {string} help
 * @property {'gauge' | 'counter' | 'histogram'} type
 * @property {'s' | 'By' | ''} unit for OpenTelemetry
 * @property {string[]} labelNames
 * @property {() => Point[]} [read] a gauge's or counter's points now
 * @property {() => DelayTotals} [totals] a histogram's running totals (bounds: `bounds`)
 * @property {number[]} [bounds]
 * @property {(fn: (value: number) => void) => () => void} [observe] a histogram's observations one by one; returns
 *   the unsubscribe
 */

/**
 * @typedef {object} SourceOptions
 * @property {string} prefix
 * @property {Monitor} [monitor]
 * @property {boolean | { threshold?: number, settle?: number }} [listeners]
 * @property {boolean} [agents]
 * @property {number} [interval] ms between the checks of listener growth and agent queues (default 1000)
 */

/** Label sets kept at most: event names can be dynamic, and a scrape must stay small. */
const TOP = 20

/** How long a peak of queued requests stays visible, ms: longer than any sane scrape interval. */
const PEAK_WINDOW = 60000

/**
 * Starts what the instruments read (a monitor unless one is given, the shared loop-delay totals, the watchers, a
 * check timer) and returns them with the function that stops it all.
 * @param {SourceOptions} o
 * @returns {{ instruments: Instrument[], close: () => void }}
 */
export function createInstruments (o) {
  const p = o.prefix
  /** @type {(() => void)[]} */
  const cleanups = []
  /** @type {(() => void)[]} */
  const checks = []
  const monitor = o.monitor ?? new Monitor({ interval: 1000 }).start()
  if (o.monitor === undefined) cleanups.push(() => monitor.stop())
  const delay = acquireLoopDelay()
  cleanups.push(delay.release)

  /** @type {Instrument[]} */
  const instruments = [
    {
      name: `${p}eventloop_delay_seconds`,
      help: 'Event-loop delay: how late each 10 ms tick came, cumulative since the process started measuring',
      type: 'histogram',
      unit: 's',
      labelNames: [],
      bounds: DELAY_BUCKETS,
      totals: () => delay.source.totals(),
      observe (fn) {
        delay.source.observe(fn)
        return () => delay.source.unobserve(fn)
      }
    },
    {
      name: `${p}eventloop_busy_seconds_total`,
      help: 'Time the event loop was busy (utilisation = rate of this)',
      type: 'counter',
      unit: 's',
      labelNames: [],
      read: () => [{ labels: {}, value: performance.eventLoopUtilization().active / 1000 }]
    },
    {
      name: `${p}gc_pause_seconds_total`,
      help: 'Time spent in garbage collection, by kind (scavenge, mark-compact, incremental, weak-callbacks)',
      type: 'counter',
      unit: 's',
      labelNames: ['kind'],
      read: () => {
        const gc = monitor.snapshot().totals.gc
        return GC_KINDS.map(kind => ({ labels: { kind }, value: gc.byKind[kind].duration / 1000 }))
      }
    },
    {
      name: `${p}gc_runs_total`,
      help: 'Garbage collections, by kind',
      type: 'counter',
      unit: '',
      labelNames: ['kind'],
      read: () => {
        const gc = monitor.snapshot().totals.gc
        return GC_KINDS.map(kind => ({ labels: { kind }, value: gc.byKind[kind].count }))
      }
    },
    {
      name: `${p}heap_space_used_bytes`,
      help: 'Bytes used in each V8 heap space',
      type: 'gauge',
      unit: 'By',
      labelNames: ['space'],
      read: () => Object.entries(monitor.snapshot().heapSpaces).map(([space, value]) => ({ labels: { space }, value }))
    },
    {
      name: `${p}active_resources`,
      help: 'Active resources keeping the event loop alive, by type (process.getActiveResourcesInfo())',
      type: 'gauge',
      unit: '',
      labelNames: ['type'],
      read: () => Object.entries(monitor.snapshot().resources).map(([type, value]) => ({ labels: { type }, value }))
    }
  ]

  if (o.listeners !== false) {
    const lo = typeof o.listeners === 'object' ? o.listeners : {}
    const watcher = new ListenerWatcher({ threshold: lo.threshold })
    watcher.start()
    cleanups.push(() => watcher.stop())
    const judge = new ListenerGrowthJudge(watcher, lo.settle ?? 10000)
    checks.push(() => judge.check())
    const top = () => judge.growing().slice(0, TOP)
    instruments.push({
      name: `${p}event_listeners_max`,
      help: `Most listeners on one emitter for one event, for listeners still growing after start-up (top ${TOP})`,
      type: 'gauge',
      unit: '',
      labelNames: ['emitter', 'event'],
      read: () => top().map(g => ({ labels: { emitter: g.emitter, event: g.event }, value: g.count }))
    }, {
      name: `${p}event_listeners_growing_emitters`,
      help: `Emitters of one kind whose listeners for one event reached ${watcher.threshold} and kept growing after start-up`,
      type: 'gauge',
      unit: '',
      labelNames: ['emitter', 'event'],
      read: () => top().map(g => ({ labels: { emitter: g.emitter, event: g.event }, value: g.emitters }))
    })
  }

  if (o.agents !== false) {
    const watcher = new AgentWatcher()
    watcher.start()
    cleanups.push(() => watcher.stop())
    const agents = agentPools(watcher)
    checks.push(() => agents.pools())
    /** @param {{ agent: string, protocol: string }} a */
    const labels = (a) => ({ agent: a.agent, protocol: a.protocol })
    instruments.push({
      name: `${p}http_agent_sockets`,
      help: 'Sockets of outgoing HTTP agents, by state: in_use carries a request, free waits for one (keep-alive)',
      type: 'gauge',
      unit: '',
      labelNames: ['agent', 'protocol', 'state'],
      read: () => agents.pools().flatMap(a => [
        { labels: { ...labels(a), state: 'in_use' }, value: a.inUse },
        { labels: { ...labels(a), state: 'free' }, value: a.free }
      ])
    }, {
      name: `${p}http_agent_max_sockets`,
      help: 'maxSockets of outgoing HTTP agents (per origin; +Inf when unlimited)',
      type: 'gauge',
      unit: '',
      labelNames: ['agent', 'protocol'],
      read: () => agents.pools().map(a => ({ labels: labels(a), value: a.maxSockets }))
    }, {
      name: `${p}http_agent_queued_requests`,
      help: 'Requests waiting for a socket of an outgoing HTTP agent now',
      type: 'gauge',
      unit: '',
      labelNames: ['agent', 'protocol'],
      read: () => agents.pools().map(a => ({ labels: labels(a), value: a.queued }))
    }, {
      name: `${p}http_agent_queued_requests_max`,
      help: 'Most requests waiting at once for a socket of an outgoing HTTP agent over the last minute',
      type: 'gauge',
      unit: '',
      labelNames: ['agent', 'protocol'],
      read: () => agents.pools().map(a => ({ labels: labels(a), value: a.peak }))
    })
  }

  if (checks.length > 0) {
    const timer = setInterval(() => {
      for (const check of checks) {
        try { check() } catch {}
      }
    }, o.interval ?? 1000)
    timer.unref()
    cleanups.push(() => clearInterval(timer))
  }

  return {
    instruments,
    close () {
      for (const cleanup of cleanups.splice(0)) {
        try { cleanup() } catch {}
      }
    }
  }
}

/**
 * @typedef {object} Pool agents of one name and protocol, added up
 * @property {string} agent
 * @property {string} protocol
 * @property {number} maxSockets
 * @property {number} inUse
 * @property {number} free
 * @property {number} queued
 * @property {number} peak most queued at once over the last PEAK_WINDOW ms
 */

/**
 * Agent pools by name, with the peak of queued requests over a fixed window. The watcher's high-water mark resets at
 * each of its snapshots; every snapshot — a check's or a scrape's — is folded into per-second maxima here, so a reader
 * takes nothing away from another.
 * @param {AgentWatcher} watcher
 */
function agentPools (watcher) {
  /** @type {Map<string, { t: number, q: number }[]>} */
  const peaks = new Map()
  return {
    /** @returns {Pool[]} */
    pools () {
      /** @type {Map<string, Pool>} */
      const pools = new Map()
      /** @type {Map<string, number>} */
      const maxQueued = new Map()
      for (const a of watcher.snapshot()) {
        const key = a.agent + ' ' + a.protocol
        const p = pools.get(key)
        if (p === undefined) {
          pools.set(key, { agent: a.agent, protocol: a.protocol, maxSockets: a.maxSockets, inUse: a.socketsInUse, free: a.freeSockets, queued: a.queued, peak: 0 })
        } else {
          p.maxSockets += a.maxSockets
          p.inUse += a.socketsInUse
          p.free += a.freeSockets
          p.queued += a.queued
        }
        maxQueued.set(key, (maxQueued.get(key) ?? 0) + a.maxQueued)
      }
      const now = Date.now()
      const second = Math.floor(now / 1000)
      for (const [key, pool] of pools) {
        let list = peaks.get(key)
        if (list === undefined) peaks.set(key, list = [])
        const q = maxQueued.get(key) ?? 0
        const last = list.at(-1)
        if (last !== undefined && last.t === second) last.q = Math.max(last.q, q)
        else list.push({ t: second, q })
        while (list.length > 0 && list[0].t * 1000 <= now - PEAK_WINDOW) list.shift()
        pool.peak = list.reduce((m, e) => Math.max(m, e.q), 0)
      }
      return [...pools.values()]
    }
  }
}
