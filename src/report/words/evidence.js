// The figures behind a verdict, in words: one row per figure against its threshold. The same thing one layer down, as
// facts: src/analysis/evidence.js.
import { placeText, formatBytes, formatMs, formatPercent } from '../format.js'
import { waitCounts, whereWaited } from './waits.js'
import { avoidableEvidence, polyfillEvidence } from './avoidable.js'

/** @typedef {import('../../analysis/evidence.js').Evidence} Evidence */

/**
 * What each signal is called, and what each of its states says; `f` is the row's facts.
 * @type {Record<string, { label: (f: any) => string, verdict: Record<string, string | ((f: any) => string)> }>}
 */
const WORDS = {
  'event-loop-delay-p99': { label: () => 'event-loop delay p99', verdict: { blocked: 'blocked', ok: 'ok' } },
  'event-loop-delay-max': {
    label: () => 'event-loop delay max',
    verdict: { 'blocked-over-a-second': 'blocked for over a second', 'long-tasks': 'long tasks', ok: 'ok' }
  },
  'cpu-per-request': { label: () => 'CPU per request', verdict: { high: 'high', ok: 'ok' } },
  'event-loop-utilization': { label: () => 'event-loop utilisation', verdict: { busy: 'busy', 'mostly-idle': 'mostly idle', ok: 'ok' } },
  'gc-time': { label: () => 'time in GC', verdict: { high: 'high', notable: 'notable', ok: 'ok' } },
  'heap-growth': {
    label: () => 'heap growth (after GC)',
    verdict: {
      leak: 'leak',
      'too-few-seconds': 'too few seconds to tell',
      released: 'held for a while: let go within seconds of the load, not a leak',
      'rising-unconfirmed': 'rising, but no two full GCs to tell a leak from garbage: run longer',
      flat: 'flat'
    }
  },
  'server-time': { label: () => 'server time per request', verdict: { 'mostly-waiting': 'mostly waiting', 'mostly-computing': 'mostly computing', ok: 'ok' } },
  'cost-per-request-trend': {
    label: () => 'CPU per request at the end',
    verdict: {
      rising: (f) => `rising: from ${formatMs(f.firstMs)} over ${Math.round(f.requests).toLocaleString('en-US')} requests — each costs more than the last${f.keptPerRequest !== null ? `, ${formatBytes(f.keptPerRequest)} a request kept alive` : ''}`,
      steady: 'steady'
    }
  },
  'requests-per-second': {
    label: () => 'requests/s served',
    verdict: { measured: (f) => `${f.finished.toLocaleString('en-US')} in ${f.seconds.toFixed(1)} s` }
  },
  'other-cpu': {
    label: () => 'CPU used by other processes',
    verdict: { 'busy-machine': 'busy machine: every figure may be distorted; run again on a quiet one' }
  },
  'backend-cpu': {
    label: (f) => `CPU of the local backends (${f.backends.map((/** @type {{ name: string, port: number }} */ b) => `${b.name} :${b.port}`).join(', ')})`,
    verdict: { backend: 'what the server waits on, on this machine: not counted as other processes' }
  },
  'worker-thread-exited': {
    label: (f) => `worker thread ${f.threadId} of pid ${f.pid}`,
    verdict: { exited: 'exited during the load: what was sent to it is lost, or waits for another' }
  },
  'worker-thread-utilization': {
    label: (f) => `busiest of ${f.threads} worker thread${f.threads > 1 ? 's' : ''}`,
    verdict: { busy: 'busy: requests wait for the pool', ok: 'ok' }
  },
  'listener-growth': {
    label: (f) => `'${f.event}' listeners on ${f.emitter}`,
    verdict: { leak: (f) => f.site ? `leak: added at ${placeText(f.site.file, f.site.line)}` : 'leak' }
  },
  'outgoing-wait': {
    label: (f) => `waiting on ${f.target}`,
    verdict: { waiting: (f) => `${f.calls.toLocaleString('en-US')} calls of ${formatMs(f.meanMs)}${f.site ? `, made at ${placeText(f.site.file, f.site.line)}` : ''}` }
  },
  wait: {
    label: (f) => `waiting ${whereWaited(f)}`,
    verdict: { waiting: (f) => `${f.resource.name}: ${waitCounts(f)}` }
  },
  'sequential-waits': {
    label: (f) => `waits one after another at ${placeText(f.site.file, f.site.line)}`,
    verdict: { 'n-plus-one': (f) => `N+1${f.loop ? ` from ${placeText(f.loop.file, f.loop.line)}` : ''}: one batched call would save ~${formatMs(f.savedMs)} a request` }
  },
  'pool-queue': {
    label: (f) => `queueing for a connection to ${f.endpoint}`,
    verdict: {
      queueing: (f) => `${f.pool ? `pool of ${f.pool.connections} connection${f.pool.connections === 1 ? '' : 's'}, ${f.pool.busy} busy at once` : 'pool full'}; the round trip itself takes ${formatMs(f.msPerTrip)}`
    }
  },
  'waits-traced': {
    label: () => 'requests traced for waits',
    verdict: { measured: (f) => `${formatPercent(f.attributed, 0)} of their ${formatMs(f.meanMs)} spent in waits at known lines` }
  },
  'avoidable-cost': avoidableEvidence,
  polyfill: polyfillEvidence,
  'agent-queue': {
    label: (f) => `requests waiting for a socket (${f.agent})`,
    verdict: { 'pool-full': (f) => `pool full at maxSockets ${f.maxSockets}` }
  }
}

/**
 * An evidence row as a person reads it: what the signal is (`label`) and what its value says (`verdict`). A signal
 * or state this version has no words for (a newer analysis) is shown by its stable name.
 * @param {Evidence} e
 * @returns {{ label: string, verdict: string }}
 */
export function evidenceWords (e) {
  const words = WORDS[e.signal]
  if (words === undefined) return { label: e.signal, verdict: e.state }
  const verdict = words.verdict[e.state] ?? e.state
  return { label: words.label(e.facts), verdict: typeof verdict === 'function' ? verdict(e.facts) : verdict }
}
