/**
 * Outgoing HTTP agent pool saturation: sockets in use against maxSockets, and requests queued for a socket. Agents
 * with the same name (say, several plain `Agent`s) are added up.
 * @param {import('./index.js').Define} define
 * @param {string} prefix
 * @param {import('../../sampling/agents.js').AgentWatcher} watcher
 */
export function agentMetrics (define, prefix, watcher) {
  /** @type {Map<string, { agent: string, protocol: string, maxSockets: number, inUse: number, free: number, queued: number, maxQueued: number }>} */
  let pools = new Map()
  const labels = (/** @type {{ agent: string, protocol: string }} */ p) => ({ agent: p.agent, protocol: p.protocol })
  define('Gauge', {
    name: `${prefix}http_agent_sockets`,
    help: 'Sockets of outgoing HTTP agents, by state: in_use carries a request, free waits for one (keep-alive)',
    labelNames: ['agent', 'protocol', 'state'],
    /** @this {any} */
    collect () {
      pools = new Map()
      for (const a of watcher.snapshot()) {
        const key = a.agent + ' ' + a.protocol
        const p = pools.get(key)
        if (p === undefined) {
          pools.set(key, { agent: a.agent, protocol: a.protocol, maxSockets: a.maxSockets, inUse: a.socketsInUse, free: a.freeSockets, queued: a.queued, maxQueued: a.maxQueued })
        } else {
          p.maxSockets += a.maxSockets
          p.inUse += a.socketsInUse
          p.free += a.freeSockets
          p.queued += a.queued
          p.maxQueued += a.maxQueued
        }
      }
      this.reset()
      for (const p of pools.values()) {
        this.set({ ...labels(p), state: 'in_use' }, p.inUse)
        this.set({ ...labels(p), state: 'free' }, p.free)
      }
    }
  })
  define('Gauge', {
    name: `${prefix}http_agent_max_sockets`,
    help: 'maxSockets of outgoing HTTP agents (per origin; +Inf when unlimited)',
    labelNames: ['agent', 'protocol'],
    /** @this {any} */
    collect () {
      this.reset()
      for (const p of pools.values()) this.set(labels(p), p.maxSockets)
    }
  })
  define('Gauge', {
    name: `${prefix}http_agent_queued_requests`,
    help: 'Requests waiting for a socket of an outgoing HTTP agent now',
    labelNames: ['agent', 'protocol'],
    /** @this {any} */
    collect () {
      this.reset()
      for (const p of pools.values()) this.set(labels(p), p.queued)
    }
  })
  define('Gauge', {
    name: `${prefix}http_agent_queued_requests_max`,
    help: 'Most requests waiting at once for a socket of an outgoing HTTP agent since the previous scrape',
    labelNames: ['agent', 'protocol'],
    /** @this {any} */
    collect () {
      this.reset()
      for (const p of pools.values()) this.set(labels(p), p.maxQueued)
    }
  })
}
