// Outgoing HTTP agents added up by name and protocol, with the most requests queued at once over the last minute:
// what the agent instruments report, whoever reads them and however often.

/** @typedef {import('../../sampling/agents.js').AgentWatcher} AgentWatcher */

/** How long a peak of queued requests stays visible, ms: longer than any sane scrape interval. */
const PEAK_WINDOW = 60000

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
export function agentPools (watcher) {
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
