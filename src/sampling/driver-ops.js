import dc from 'node:diagnostics_channel'
import { executionAsyncId } from 'node:async_hooks'
import { performance } from 'node:perf_hooks'
import { foldSql } from './protocols.js'

/**
 * @typedef {object} DriverOp an operation a database driver announced on its tracing channel
 * @property {string} protocol 'postgres', 'mysql', 'redis'
 * @property {string} op the folded query or the command
 * @property {string | null} endpoint `host:port`, when the driver said
 * @property {number} at performance.now() when it was announced
 * @property {number} context the async id it was announced in: a write in the same synchronous run is its
 */

/**
 * The TracingChannels drivers publish (Node's convention: `tracing:<name>:start` … `asyncEnd`), and the protocol
 * each speaks: pg and mysql2 announce each query, ioredis each command, with the text and the server.
 */
const CHANNELS = /** @type {const} */ ([
  ['pg:query', 'postgres'],
  ['mysql2:query', 'mysql'],
  ['mysql2:execute', 'mysql'],
  ['ioredis:command', 'redis']
])

/** A driver's announcement and a socket write belong together when this close (ms) and in one synchronous run. */
const SAME_RUN_MS = 1

/**
 * Names the round trips whose bytes say nothing — an encrypted connection to a managed database, a binary protocol —
 * from what drivers that publish tracing channels announce: the query text (folded like the sniffed one) or the
 * command, and the server. A driver announces either just before it writes (pg, mysql2) or just after (ioredis): the
 * announcement and the write meet within one synchronous run.
 *
 * Subscribing makes a driver build a context object per call, so the probe subscribes only while it traces waits.
 */
export class DriverOps {
  /** @type {DriverOp | null} */
  last = null
  #subscribed = false
  /** @type {((op: DriverOp) => void) | null} called with each announcement (the socket watcher names its last trip) */
  onOp = null
  /** @type {{ start: (ctx: unknown) => void }[]} */
  #handlers = CHANNELS.map(([name, protocol]) => ({
    // Channel subscribers must not throw: diagnostics_channel rethrows a subscriber's error in the driver's call.
    start: (/** @type {unknown} */ ctx) => {
      try { this.#announce(protocol, ctx) } catch {}
    },
    name
  }))

  subscribe () {
    if (this.#subscribed || typeof dc.tracingChannel !== 'function') return
    this.#subscribed = true
    for (const h of this.#handlers) dc.tracingChannel(/** @type {any} */ (h).name).subscribe(/** @type {any} */ (h))
  }

  unsubscribe () {
    if (!this.#subscribed) return
    this.#subscribed = false
    for (const h of this.#handlers) dc.tracingChannel(/** @type {any} */ (h).name).unsubscribe(/** @type {any} */ (h))
    this.last = null
  }

  /**
   * The announcement of the synchronous run a write is made in, if there was one.
   * @returns {DriverOp | null}
   */
  current () {
    const last = this.last
    if (last === null || last.context !== executionAsyncId() || performance.now() - last.at > SAME_RUN_MS) return null
    return last
  }

  /**
   * @param {string} protocol
   * @param {unknown} ctx
   */
  #announce (protocol, ctx) {
    const op = opOf(protocol, ctx)
    if (op === null) return
    this.last = { protocol, op, endpoint: endpointOf(ctx), at: performance.now(), context: executionAsyncId() }
    this.onOp?.(this.last)
  }
}

/**
 * The query or command a driver's context carries, whatever the driver names its fields.
 * @param {string} protocol
 * @param {unknown} ctx
 * @returns {string | null}
 */
function opOf (protocol, ctx) {
  if (ctx === null || typeof ctx !== 'object') return null
  const c = /** @type {Record<string, any>} */ (ctx)
  if (protocol === 'redis') {
    const name = c.command ?? c.name
    return typeof name === 'string' && name !== '' ? name.toUpperCase() : null
  }
  const query = c.query
  const text = [query?.text, query?.sql, query, c.text, c.sql, c.statement].find(t => typeof t === 'string' && t !== '')
  return typeof text === 'string' ? foldSql(text) : null
}

/**
 * @param {unknown} ctx
 * @returns {string | null}
 */
function endpointOf (ctx) {
  const c = /** @type {Record<string, any>} */ (ctx)
  const host = c.serverAddress ?? c.host ?? c.client?.host ?? c.connection?.host
  const port = c.serverPort ?? c.port ?? c.client?.port ?? c.connection?.port
  return typeof host === 'string' && host !== '' ? `${host}${port ? `:${port}` : ''}` : null
}
