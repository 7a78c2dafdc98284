// What the serving processes waited on outside themselves: outgoing HTTP calls, and agent pools that ran out of
// sockets.
import { displayPath } from './paths.js'

/** @typedef {import('./run-data.js').RunData} RunData */
/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {import('./signals.js').OutgoingSignal} OutgoingSignal */

/**
 * Outgoing agent pools that ran out of sockets during the window.
 * @param {ThreadRecord[]} threads
 * @param {number} start
 * @param {number} end
 */
export function agentPressure (threads, start, end) {
  /** @type {Map<string, { agent: string, maxSockets: number, maxQueued: number, maxInUse: number }>} */
  const byAgent = new Map()
  for (const t of threads) {
    for (const snap of t.agents) {
      if (snap.time < start || snap.time > end + 1500) continue
      for (const a of snap.agents) {
        const name = String(a.agent ?? 'agent')
        // Each agent is its own pool with its own limit: two of one class (the app's, limited, and one a library made)
        // are not one, and the first one's limit is not the other's.
        const key = `${t.pid}:${Number.isInteger(a.id) ? a.id : name}`
        const entry = byAgent.get(key) ?? { agent: name, maxSockets: Number(a.maxSockets) || Infinity, maxQueued: 0, maxInUse: 0 }
        entry.maxQueued = Math.max(entry.maxQueued, Number(a.maxQueued ?? a.queued) || 0)
        entry.maxInUse = Math.max(entry.maxInUse, Number(a.socketsInUse) || 0)
        byAgent.set(key, entry)
      }
    }
  }
  return [...byAgent.values()].filter(a => a.maxQueued > 0 || a.maxInUse >= a.maxSockets).sort((a, b) => b.maxQueued - a.maxQueued)
}

/**
 * The outgoing calls of the window: each thread's counts (kept since it started) at the window's end less those at
 * its start.
 * @param {RunData} data
 * @param {ThreadRecord[]} threads
 * @param {number} start
 * @param {number} end
 * @param {number} requests finished on the loaded port in the window
 * @param {number} serverTimeMs per request
 * @returns {OutgoingSignal[]}
 */
export function outgoingCalls (data, threads, start, end, requests, serverTimeMs) {
  /** @type {Map<string, { target: string, calls: number, finished: number, failed: number, totalMs: number, maxMs: number, site: any }>} */
  const byTarget = new Map()
  for (const t of threads) {
    // Counts at the last snapshot before the load and the first after it (snapshots come once a second while calls
    // are made), scaled by the window over the span they cover.
    const i = t.outgoing.findLastIndex(snap => snap.time <= start)
    const before = i >= 0 ? t.outgoing[i] : null
    const j = t.outgoing.findIndex(snap => snap.time >= end)
    const after = j >= 0 ? t.outgoing[j] : t.outgoing.at(-1)
    if (after === undefined || after === before) continue
    const scale = Math.min(1, (end - start) / Math.max(1, after.time - (before?.time ?? start)))
    /** @type {Map<string, any>} */
    const baseline = new Map((before?.outgoing ?? []).map(o => [String(o.target), o]))
    /** @type {Map<string, number>} */
    const longest = new Map()
    for (const snap of t.outgoing.slice(i + 1, j >= 0 ? j + 1 : undefined)) {
      for (const o of snap.outgoing) longest.set(String(o.target), Math.max(longest.get(String(o.target)) ?? 0, Number(o.maxMs) || 0))
    }
    const cwd = String(t.hello.cwd ?? data.run.cwd)
    for (const o of after.outgoing) {
      const target = String(o.target)
      const b = baseline.get(target)
      const diff = (/** @type {string} */ k) => Math.max(0, (Number(o[k]) || 0) - (Number(b?.[k]) || 0)) * scale
      const entry = byTarget.get(target) ?? { target, calls: 0, finished: 0, failed: 0, totalMs: 0, maxMs: 0, site: null }
      entry.calls += diff('started')
      entry.finished += diff('finished')
      entry.failed += diff('failed')
      entry.totalMs += diff('totalMs')
      entry.maxMs = Math.max(entry.maxMs, longest.get(target) ?? 0)
      if (entry.site === null && o.site) entry.site = { function: String(o.site.function || '(anonymous)'), file: displayPath(String(o.site.file), cwd), line: Number(o.site.line) || 0 }
      byTarget.set(target, entry)
    }
  }
  const requestMs = requests * serverTimeMs
  return [...byTarget.values()]
    .filter(e => e.calls > 0)
    .map(e => ({
      target: e.target,
      calls: Math.round(e.calls),
      finished: Math.round(e.finished),
      failed: Math.round(e.failed),
      meanMs: e.finished > 0 ? e.totalMs / e.finished : 0,
      maxMs: e.maxMs,
      perRequest: requests > 0 ? e.calls / requests : 0,
      share: requestMs > 0 ? Math.min(1, e.totalMs / requestMs) : 0,
      site: e.site
    }))
    .sort((a, b) => b.share - a.share || b.calls - a.calls)
}
