// The evidence of a server that waits: outgoing HTTP calls, the lines where traced requests wait (with an N+1 or a
// full pool found there), and HTTP agents whose requests queued for a socket.
import { THRESHOLDS } from './thresholds.js'
import { waitLine } from './wait-line.js'

/** @typedef {import('./signals.js').Signals} Signals */
/** @typedef {Omit<import('./evidence.js').Evidence, 'decisive'>} Row */

/**
 * Outgoing HTTP calls that take a real part of the requests' time, unless the wait tracer found them at their line
 * (they are told there, with more).
 * @param {Signals} s
 * @param {Set<string> | null} decisive where to mark them decisive (io verdicts)
 * @returns {Row[]}
 */
export function outgoingRows (s, decisive) {
  const waitLines = new Set(s.waits.sites.filter(w => w.share >= THRESHOLDS.waitShare).map(w => `${w.site.file}:${w.site.line}`))
  /** @type {Row[]} */
  const rows = []
  for (const o of s.outgoing.slice(0, 3)) {
    if (o.share < THRESHOLDS.waitShare || (o.site && waitLines.has(`${o.site.file}:${o.site.line}`))) continue
    rows.push({
      signal: 'outgoing-wait',
      value: round(o.share),
      unit: 'ratio',
      threshold: THRESHOLDS.waitShare,
      state: 'waiting',
      facts: { target: o.target, calls: o.calls, meanMs: o.meanMs, site: o.site ? { file: o.site.file, line: o.site.line } : null }
    })
    decisive?.add('outgoing-wait')
  }
  return rows
}

/**
 * The lines where traced requests wait most, with an N+1 or a full pool found there, and how many were traced.
 * @param {Signals} s
 * @param {Set<string> | null} decisive where to mark them decisive (io verdicts)
 * @returns {Row[]}
 */
export function waitRows (s, decisive) {
  /** @type {Row[]} */
  const rows = []
  for (const w of s.waits.sites.slice(0, 3)) {
    if (w.share < THRESHOLDS.waitShare) continue
    const line = waitLine(w)
    rows.push({ signal: 'wait', value: round(w.share), unit: 'ratio', threshold: THRESHOLDS.waitShare, state: 'waiting', facts: line })
    decisive?.add('wait')
    if (w.sequential) {
      rows.push({
        signal: 'sequential-waits',
        value: round(w.sequential.perRequest, 1),
        unit: 'per request',
        threshold: THRESHOLDS.sequentialWaits,
        state: 'n-plus-one',
        facts: { site: line.site, loop: w.sequential.loop, savedMs: w.sequential.savedMs }
      })
      decisive?.add('sequential-waits')
    }
    if (line.queue) {
      rows.push({
        signal: 'pool-queue',
        value: round(line.queue.msPerWait),
        unit: 'ms',
        threshold: THRESHOLDS.poolQueueMs,
        state: 'queueing',
        facts: {
          endpoint: w.pool?.endpoint ?? w.resource.target,
          pool: w.pool ? { connections: w.pool.connections, busy: w.pool.busy } : null,
          msPerTrip: w.msPerTrip ?? 0
        }
      })
      decisive?.add('pool-queue')
    }
  }
  if (s.waits.traced > 0) {
    rows.push({
      signal: 'waits-traced',
      value: s.waits.traced,
      unit: 'requests',
      threshold: null,
      state: 'measured',
      facts: { attributed: s.waits.attributed, meanMs: s.waits.meanMs }
    })
  }
  return rows
}

/**
 * Outgoing HTTP agents whose requests queued for a socket.
 * @param {Signals} s
 * @param {Set<string> | null} decisive where to mark them decisive (io verdicts)
 * @returns {Row[]}
 */
export function agentRows (s, decisive) {
  return s.agents.map(a => {
    decisive?.add('agent-queue')
    return { signal: 'agent-queue', value: a.maxQueued, unit: 'requests', threshold: 0, state: 'pool-full', facts: { agent: a.agent, maxSockets: a.maxSockets } }
  })
}

/**
 * @param {number} v
 * @param {number} [digits]
 */
function round (v, digits = 3) {
  const f = 10 ** digits
  return Math.round(v * f) / f
}
