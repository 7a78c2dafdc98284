import { performance } from 'node:perf_hooks'
import { AgentWatcher } from '../../sampling/agents.js'
import { GC_KINDS } from '../../sampling/gc.js'
import { ListenerWatcher } from '../../sampling/listeners.js'
import { Monitor } from '../monitor.js'
import { agentPools } from './agent-pools.js'
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

/**
 * Instruments that watch something of their own: they come with the check to run every interval and what stops them.
 * @typedef {object} WatchedInstruments
 * @property {Instrument[]} instruments
 * @property {() => void} check
 * @property {() => void} stop
 */

/** Label sets kept at most: event names can be dynamic, and a scrape must stay small. */
const TOP = 20

/**
 * Starts what the instruments read (a monitor unless one is given, the shared loop-delay totals, the watchers, a
 * check timer) and returns them with the function that stops it all.
 * @param {SourceOptions} o
 * @returns {{ instruments: Instrument[], close: () => void }}
 */
export function createInstruments (o) {
  /** @type {(() => void)[]} */
  const cleanups = []
  const monitor = o.monitor ?? new Monitor({ interval: 1000 }).start()
  if (o.monitor === undefined) cleanups.push(() => monitor.stop())
  const delay = acquireLoopDelay()
  cleanups.push(delay.release)

  /** @type {WatchedInstruments[]} */
  const watched = []
  if (o.listeners !== false) watched.push(listenerInstruments(o.prefix, typeof o.listeners === 'object' ? o.listeners : {}))
  if (o.agents !== false) watched.push(agentInstruments(o.prefix))
  for (const w of watched) cleanups.push(w.stop)
  if (watched.length > 0) {
    const timer = setInterval(() => {
      for (const w of watched) {
        try { w.check() } catch {}
      }
    }, o.interval ?? 1000)
    timer.unref()
    cleanups.push(() => clearInterval(timer))
  }

  return {
    instruments: [...runtimeInstruments(o.prefix, monitor, delay.source), ...watched.flatMap(w => w.instruments)],
    close () {
      for (const cleanup of cleanups.splice(0)) {
        try { cleanup() } catch {}
      }
    }
  }
}

/**
 * The event loop, GC, heap spaces and active resources, read from the monitor and the shared loop-delay totals.
 * @param {string} p the prefix
 * @param {Monitor} monitor
 * @param {import('./loop-delay.js').LoopDelaySource} delay
 * @returns {Instrument[]}
 */
function runtimeInstruments (p, monitor, delay) {
  return [
    {
      name: `${p}eventloop_delay_seconds`,
      help: 'Event-loop delay: how late each 10 ms tick came, cumulative since the process started measuring',
      type: 'histogram',
      unit: 's',
      labelNames: [],
      bounds: DELAY_BUCKETS,
      totals: () => delay.totals(),
      observe (fn) {
        delay.observe(fn)
        return () => delay.unobserve(fn)
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
}

/**
 * Listener leaks: listeners still growing after start-up, judged at each check.
 * @param {string} p the prefix
 * @param {{ threshold?: number, settle?: number }} lo
 * @returns {WatchedInstruments}
 */
function listenerInstruments (p, lo) {
  const watcher = new ListenerWatcher({ threshold: lo.threshold })
  watcher.start()
  const judge = new ListenerGrowthJudge(watcher, lo.settle ?? 10000)
  const top = () => judge.growing().slice(0, TOP)
  return {
    instruments: [{
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
    }],
    check: () => judge.check(),
    stop: () => watcher.stop()
  }
}

/**
 * Outgoing HTTP agents' sockets and queues against their caps; each check folds the queue's peak in.
 * @param {string} p the prefix
 * @returns {WatchedInstruments}
 */
function agentInstruments (p) {
  const watcher = new AgentWatcher()
  watcher.start()
  const agents = agentPools(watcher)
  /** @param {{ agent: string, protocol: string }} a */
  const labels = (a) => ({ agent: a.agent, protocol: a.protocol })
  return {
    instruments: [{
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
    }],
    check: () => { agents.pools() },
    stop: () => watcher.stop()
  }
}
