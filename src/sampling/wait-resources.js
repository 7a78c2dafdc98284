// What a wait waited on, as [type, operation, target]: the client-socket round trip that ended it, else the async
// resource whose callback ended it (a timer, a file-system call, a DNS lookup, a child process, a worker…).

import { SPAN } from './wait-spans.js'
import { siteOf } from './wait-sites.js'

/** @typedef {import('./sockets.js').Trip} Trip */
/** @typedef {import('./wait-spans.js').Span} Span */
/** @typedef {import('./wait-spans.js').Trace} Trace */

/**
 * The client-socket trip that ended a span: its own, for a round trip; for a wait that a read resumed, the trip of
 * this request among those the read completed. When none was written by this request — a client that batches a
 * tick's commands in one deferred write (node-redis, ioredis's auto-pipelining), a pool that wrote a queued query
 * from another request's callback — one that no other request wrote as its own, and of those the one whose command
 * the app called by name (Redis clients name their methods after the commands: `hGetAll` sends HGETALL), else the
 * first one.
 * @param {Span} span
 * @param {Trace} trace
 * @param {string | null} [method] the client method the request called for it (`hGetAll`), when known
 * @returns {Trip | null}
 */
export function tripOf (span, trace, method = null) {
  const trips = span.trips
  if (trips === null || trips.length === 0) return null
  if (span.kind === 'socket') return trips[0]
  for (const trip of trips) if (trip.trace?.trace === trace) return trip
  if (method !== null && trips.length > 1) {
    const name = method.toUpperCase()
    const free = trips.filter(t => t.trace?.trace === undefined)
    for (const list of [free, trips]) for (const trip of list) if (commandsOf(trip).includes(name)) return trip
  }
  return trips[0]
}

/**
 * The commands a trip carried: `GET`; `GET ×6` and `pipeline (INCR, GET)`, a pipeline's.
 * @param {Trip} trip
 * @returns {string[]}
 */
function commandsOf (trip) {
  return batchOf(trip.op ?? '') ?? [(trip.op ?? '').split(' ', 1)[0].toUpperCase()]
}

/**
 * The commands of an op that names several in one trip (`GET ×6`, `pipeline (INCR, GET)`), else null.
 * @param {string} op
 * @returns {string[] | null}
 */
function batchOf (op) {
  const batch = /^(\S+) ×\d+$/.exec(op) ?? /^pipeline \((.*)\)$/.exec(op)
  return batch !== null ? batch[1].split(', ') : null
}

/**
 * Whether a trip that no request wrote by its own call was written for this one, and carried its command. A pool
 * that writes a queued query as a connection comes free (in the read of another request's reply) hands it to the
 * request that waited: that request's. A batch (written from a deferral, by another request or none) or a trip written outside every traced
 * request (a client's chain of batches begun before the tracer was on) is the request's when it holds the command the
 * app called — and a batch another request wrote, only when it holds several (a pipeline). A trip another request
 * wrote by its own call is that request's: the wait for it stays a queue. A semaphore's release names no command.
 * @param {Trip} trip
 * @param {string | null} method
 */
export function writtenFor (trip, method) {
  const by = trip.trace
  if (by?.handed === true) return true
  if (method === null || (by !== undefined && by.deferred !== true)) return false
  if (!commandsOf(trip).includes(method.toUpperCase())) return false
  return by?.trace === undefined || batchOf(trip.op ?? '') !== null
}

/**
 * The client method a call site names (`Class.hGetAll` → `hGetAll`), or null.
 * @param {{ api: string | null } | null} site
 */
export function methodOf (site) {
  const api = site?.api
  if (!api) return null
  return api.slice(api.lastIndexOf('.') + 1) || null
}

/**
 * @param {Trip} trip
 * @param {string | null} [method] the client method the request called: its command, not the batch's name (`GET ×6`,
 *   `pipeline (INCR, GET)`: the commands of six requests an auto-pipelining client wrote at once), when the batch
 *   holds it (a pipeline the app sent itself is sent by `exec`, which names none)
 * @returns {string[]}
 */
export function tripResource (trip, method = null) {
  const name = method?.toUpperCase()
  const op = name !== undefined && batchOf(trip.op ?? '')?.includes(name) ? name : trip.op ?? ''
  return [trip.protocol, op, trip.endpoint]
}

/**
 * What a wait waited on, as [type, operation, target]: a timer and its delay, a file-system call, a DNS lookup, a
 * child process, a worker's message…
 * @param {Span} span
 * @returns {string[]}
 */
export function describe (span) {
  const own = span.resource !== null ? describeResource(span.resource, span) : null
  if (own !== null) return own
  const cause = span.cause
  if (cause !== null && typeof cause === 'object') {
    const c = /** @type {any} */ (cause)
    const cs = c[SPAN]
    if (cs !== undefined && cs.resource !== null) {
      const d = describeResource(cs.resource, cs)
      if (d !== null) return d
    }
    const d = describeResource(c, null)
    if (d !== null) return d
  }
  return ['unknown', '', '']
}

/**
 * @param {any} r an async resource
 * @param {Span | null} span its span, when it has one (its site names the API called)
 * @returns {string[] | null}
 */
function describeResource (r, span) {
  const name = String(r?.constructor?.name ?? '')
  const api = span !== null ? siteOf(span)?.api ?? null : null
  switch (name) {
    case 'Timeout':
      return ['timer', `${r._repeat ? 'setInterval' : 'setTimeout'} ${Number(r._idleTimeout)} ms`, '']
    case 'Immediate':
      return ['timer', 'setImmediate', '']
    case 'FSReqCallback':
    case 'FSReqPromise':
    case 'FileHandle':
    case 'FileHandleCloseReq':
      return ['fs', apiName('fs', api), '']
    case 'GetAddrInfoReqWrap':
    case 'GetNameInfoReqWrap':
    case 'QueryReqWrap':
      return ['dns', apiName('dns', api), String(r.hostname ?? r.host ?? '')]
    case 'TCPConnectWrap':
    case 'PipeConnectWrap':
      return ['connect', '', r.address ? `${r.address}:${r.port}` : '']
    case 'Process':
      return ['child process', '', '']
    case 'MessagePort':
      return ['worker', 'message', '']
    case 'TCP':
    case 'Pipe':
    case 'TLSWrap':
      return socketOf(r)
    case 'HTTPClientAsyncResource': {
      const req = r.req
      return ['http', `${req?.method ?? 'GET'} ${req?.path ?? ''}`, String(req?.host ?? '')]
    }
  }
  if (r?.type === 'HTTPCLIENTREQUEST') return ['http', `${r.req?.method ?? 'GET'} ${r.req?.path ?? ''}`, String(r.req?.host ?? '')]
  if (/^[A-Z0-9]+(REQUEST|JOB)$/.test(String(r?.type ?? '')) || /(Job|Request)$/.test(name)) return ['thread pool', api ?? name, '']
  if (name === 'Zlib' || name === 'ZLIB') return ['thread pool', 'zlib', '']
  return name ? ['other', name, ''] : null
}

/**
 * A socket handle that is not one of the process's watched client sockets: a server connection (the request's own
 * body or the client's next bytes) or a socket opened before hotpath could watch it.
 * @param {any} handle
 * @returns {string[]}
 */
function socketOf (handle) {
  /** @type {{ address?: string, port?: number }} */
  const peer = {}
  try { handle.getpeername?.(peer) } catch {}
  const owner = ownerOf(handle)
  if (owner?.server) return ['client', 'request body', '']
  return ['tcp', '', peer.address ? `${peer.address}:${peer.port}` : '']
}

/** @type {symbol | null | undefined} */
let ownerSymbol
/** @param {any} handle @returns {any} the net.Socket a handle belongs to */
function ownerOf (handle) {
  if (ownerSymbol === undefined) ownerSymbol = Object.getOwnPropertySymbols(handle).find(s => s.description === 'owner_symbol') ?? null
  return ownerSymbol !== null ? handle[ownerSymbol] : undefined
}

/**
 * @param {string} module
 * @param {string | null} api the function the app called (`readFile`, `Object.readFile`, `FSReqCallback.open`)
 */
function apiName (module, api) {
  if (api === null) return module
  const fn = api.split('.').pop() ?? api
  return `${module}.${fn}`
}
