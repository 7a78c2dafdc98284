import http from 'node:http'
import https from 'node:https'

/**
 * @typedef {object} AgentPool one HTTP client agent's socket pool
 * @property {string} agent 'http.globalAgent', 'https.globalAgent', or the agent's constructor name
 * @property {number} id which agent, for the life of the process: two agents of one class are two pools, each with its
 *   own limit
 * @property {'http' | 'https'} protocol
 * @property {number} maxSockets per origin (Infinity when unlimited)
 * @property {number} socketsInUse sockets carrying a request now
 * @property {number} freeSockets idle keep-alive sockets
 * @property {number} queued requests waiting for a socket now
 * @property {number} maxQueued most requests waiting at once since the previous snapshot
 */

/**
 * Watches the socket pools of outgoing HTTP clients — the hidden cap of the AWS SDK's S3 client, whose agent with
 * `maxSockets: 50` made uploads queue for minutes (docs/runtime.md, Prometheus metrics). Every http/https Agent (the global ones, and any created before or
 * after start) is found the first time it carries a request, through Agent.prototype.addRequest, which every request
 * of every Agent subclass goes through. Agents are held weakly: one created per request does not leak here.
 *
 * Cost per outgoing request: one WeakMap lookup and a walk of that agent's queue lists (one per origin).
 * Clients that do not use node:http's Agent (fetch/undici) have pools of their own and are not seen.
 */
export class AgentWatcher {
  /** @type {WeakMap<object, { maxQueued: number }>} */
  #marks = new WeakMap()
  /** @type {WeakMap<object, number>} */
  #ids = new WeakMap()
  #nextId = 1
  #active = false

  start () {
    if (this.#active) return
    this.#active = true
    watchAgentRequests(this)
  }

  stop () {
    if (!this.#active) return
    this.#active = false
    unwatchAgentRequests(this)
  }

  /**
   * Every agent in use, global agents first; resets each agent's high-water mark of queued requests.
   * @returns {AgentPool[]}
   */
  snapshot () {
    /** @type {AgentPool[]} */
    const out = []
    /** @type {Set<object>} */
    const done = new Set()
    for (const agent of [http.globalAgent, https.globalAgent, ...liveAgents()]) {
      if (agent === null || typeof agent !== 'object' || done.has(agent)) continue
      done.add(agent)
      try {
        out.push(this.#describe(/** @type {http.Agent} */ (agent)))
      } catch {}
    }
    return out
  }

  /**
   * Called by the shared hook after an agent took a request.
   * @param {http.Agent} agent
   * @param {number} queued
   */
  saw (agent, queued) {
    const mark = this.#marks.get(agent)
    if (mark === undefined) this.#marks.set(agent, { maxQueued: queued })
    else if (queued > mark.maxQueued) mark.maxQueued = queued
  }

  /** @param {object} agent */
  #idOf (agent) {
    let id = this.#ids.get(agent)
    if (id === undefined) {
      id = this.#nextId++
      this.#ids.set(agent, id)
    }
    return id
  }

  /** @param {http.Agent} agent @returns {AgentPool} */
  #describe (agent) {
    const queued = countLists(agent.requests)
    const mark = this.#marks.get(agent)
    const maxQueued = Math.max(queued, mark?.maxQueued ?? 0)
    if (mark !== undefined) mark.maxQueued = queued
    const protocol = /** @type {any} */ (agent).protocol === 'https:' || agent instanceof https.Agent ? 'https' : 'http'
    return {
      agent: agentName(agent),
      id: this.#idOf(agent),
      protocol,
      maxSockets: limitOf(agent.maxSockets),
      socketsInUse: countLists(agent.sockets),
      freeSockets: countLists(agent.freeSockets),
      queued,
      maxQueued
    }
  }
}

/**
 * An agent's limit as node:http applies it: it compares counts with maxSockets as given, so a string from the
 * environment (`maxSockets: process.env.LIMIT || 50`) limits as its number does.
 * @param {unknown} value
 */
function limitOf (value) {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  return typeof n === 'number' && n > 0 && !Number.isNaN(n) ? n : Infinity
}

/** @param {object} agent */
function agentName (agent) {
  if (agent === http.globalAgent) return 'http.globalAgent'
  if (agent === https.globalAgent) return 'https.globalAgent'
  const name = agent.constructor?.name
  return typeof name === 'string' && name !== '' ? name : 'Agent'
}

/**
 * Total length of an agent's per-origin lists ({ 'host:port:': [...] }). A for-in walk: no arrays allocated.
 * @param {unknown} lists
 */
function countLists (lists) {
  let n = 0
  if (lists === null || typeof lists !== 'object') return 0
  for (const key in lists) {
    const list = /** @type {Record<string, unknown>} */ (lists)[key]
    if (Array.isArray(list)) n += list.length
  }
  return n
}

/**
 * @typedef {object} AgentRequestWatcher
 * @property {(agent: http.Agent, queued: number, request: unknown) => void} saw called inside http.request() (so
 *   the caller's frames are on the stack) once the agent has taken the request
 */

// One hook on http.Agent.prototype.addRequest, shared by every active watcher (pools here, outgoing calls too).
/** @type {any} */
const proto = http.Agent.prototype
/** @type {Set<AgentRequestWatcher>} */
const watchers = new Set()
/** @type {Set<WeakRef<object>>} */
const agents = new Set()
/** @type {WeakSet<object>} */
const known = new WeakSet()
/** @type {{ original: Function, wrapped: Function } | null} */
let hook = null

/** @param {AgentRequestWatcher} watcher */
export function watchAgentRequests (watcher) {
  watchers.add(watcher)
  if (hook !== null) return
  const original = proto.addRequest
  if (typeof original !== 'function') return
  /**
   * @this {http.Agent}
   * @param {unknown[]} args
   */
  function addRequestWatched (...args) {
    const result = original.apply(this, args)
    if (watchers.size === 0) return result
    try {
      if (!known.has(this)) {
        known.add(this)
        agents.add(new WeakRef(this))
      }
      const queued = countLists(this.requests)
      for (const w of watchers) w.saw(this, queued, args[0])
    } catch {}
    return result
  }
  hook = { original, wrapped: addRequestWatched }
  proto.addRequest = addRequestWatched
}

/** @param {AgentRequestWatcher} watcher */
export function unwatchAgentRequests (watcher) {
  watchers.delete(watcher)
  if (watchers.size > 0 || hook === null) return
  // Restore only what is still ours (see listeners.js): a wrapper someone put over ours stays, ours goes idle.
  if (proto.addRequest === hook.wrapped) proto.addRequest = hook.original
  hook = null
}

/** Agents seen so far that are still alive; forgets collected ones. */
function liveAgents () {
  const out = []
  for (const ref of agents) {
    const agent = ref.deref()
    if (agent === undefined) agents.delete(ref)
    else out.push(agent)
  }
  return out
}
