// The load generator's entry: a plan from the options, then the threads that load and the result they make. The
// same thing one layer up, as the command: src/cli/load.js.
import net from 'node:net'
import tls from 'node:tls'
import { UsageError } from '../errors.js'
import { buildRequest, requestsHash } from './requests.js'
import { mergeShards } from './merge.js'
import { buildResult } from './result.js'
import { parseSegment, parseStartAt, rotate, runIdOf, segmentPart } from './segment.js'
import { parseTarget } from './target.js'
import { runThreads } from './threads.js'

/**
 * @typedef {object} LoadOptions
 * @property {string} url e.g. http://127.0.0.1:3000/path; with `socketPath`, only its path and Host matter
 * @property {string} [socketPath] connect to this unix socket instead of the URL's host and port
 * @property {number} [connections] concurrent connections (default 10)
 * @property {number} [pipelining] requests in flight per connection (default 1)
 * @property {number} [duration] seconds to measure (default 10; unbounded when only `amount` is given)
 * @property {number} [amount] total requests to complete, instead of or as well as a duration
 * @property {number} [rate] total requests per second at a constant arrival rate (open loop)
 * @property {number} [timeout] seconds a request may wait for its response (default 10)
 * @property {number} [workers] worker threads sharing the connections (default 1: this thread)
 * @property {number} [warmup] seconds of load before measuring (default 0)
 * @property {string} [method] default GET
 * @property {Record<string, string> | string[]} [headers] an object, or 'Name: value' strings
 * @property {string | Buffer | object} [body] objects are sent as JSON
 * @property {import('./requests.js').RequestSpec[]} [requests] sent round-robin; each entry's fields override the above
 * @property {string} [title]
 * @property {boolean} [busyPoll] poll without sleeping while responses keep coming: costs the generator a core, spares
 *   a server on the same machine the cost of waking it (default false)
 * @property {boolean} [coalesce] nap up to 50 µs between reads (at most 6% of the median latency) so that one wake-up
 *   reads many responses: cheaper for the generator, but a response that arrives during a nap is timed late by up to
 *   a nap (default false; the result says when it was on, and the longest nap)
 * @property {string | import('./segment.js').Segment} [segment] run only this part of the load the other options
 *   describe: `'K/N'` (1-based), `'auto/N'` (K from JOB_COMPLETION_INDEX, 0-based, as a Kubernetes Indexed Job sets
 *   it) or `{ index, count }`; connections, rate and amount are split so that the N parts add up to the whole
 * @property {number | string} [startAt] begin the load at this instant (epoch ms, or ISO time with its zone), so that
 *   segments on several machines start together; an instant already past starts at once
 * @property {string} [runId] the id the segments of one load share (default: derived from the options, N and startAt)
 * @property {AbortSignal} [signal] aborting ends the run early and resolves with what was measured
 * @property {(bin: import('./recorder.js').Bin) => void} [onBin] called as each thread closes a second
 */

/** @typedef {import('./result.js').LoadResult} LoadResult */

/**
 * Loads an HTTP server and measures it. Resolves with autocannon's result shape plus hotpath's `hotpath` section.
 * @param {LoadOptions} options
 * @returns {Promise<LoadResult>}
 */
export async function load (options) {
  const { plan, meta, workers, segment } = preparePlan(options)
  await checkReachable(plan.target, plan.timeout)
  const shard = mergeShards(await runThreads(plan, workers, { onBin: options.onBin, signal: options.signal }))
  return buildResult(shard, meta, segment === null ? undefined : { ...segment, started: shard.began ?? shard.start })
}

/**
 * Validates options and turns them into a plan every thread can run, plus the metadata the result carries.
 * @param {LoadOptions} options
 */
export function preparePlan (options) {
  if (options === null || typeof options !== 'object') throw new UsageError('load() needs an options object')
  if (typeof options.url !== 'string') throw new UsageError('load(): url is required')
  const target = parseTarget(options.url, options.socketPath)
  const connections = integer('connections', options.connections, 10)
  const pipelining = integer('pipelining', options.pipelining, 1)
  const workers = integer('workers', options.workers, 1)
  const amount = options.amount === undefined ? 0 : integer('amount', options.amount, 0)
  const rate = options.rate === undefined ? 0 : positive('rate', options.rate)
  const duration = options.duration === undefined
    ? (amount > 0 ? Infinity : 10)
    : positive('duration', options.duration)
  const timeout = options.timeout === undefined ? 10 : positive('timeout', options.timeout)
  const warmup = options.warmup === undefined ? 0 : nonNegative('warmup', options.warmup)
  if (workers > connections) throw new UsageError(`workers (${workers}) cannot exceed connections (${connections})`)
  const startAt = options.startAt === undefined ? null : startInstant(options.startAt)

  const base = { method: options.method, headers: options.headers, body: options.body }
  const specs = options.requests ?? [{}]
  if (!Array.isArray(specs) || specs.length === 0) throw new UsageError('requests must be a non-empty list')
  const whole = specs.map(spec => buildRequest({
    method: spec.method ?? base.method,
    path: spec.path,
    headers: mergeHeaders(base.headers, spec.headers),
    body: spec.body ?? base.body
  }, target))
  const method = (specs.length === 1 ? (specs[0].method ?? base.method ?? 'GET') : 'mixed').toUpperCase()
  const part = options.segment === undefined
    ? null
    : segmentOf(options, { connections, rate, amount }, { url: target.href, method, requestsHash: requestsHash(whole), duration, warmup, pipelining, timeout, startAt })
  const own = part === null ? { connections, rate, amount } : part.own
  if (part !== null && workers > own.connections) {
    throw new UsageError(`workers (${workers}) cannot exceed the connections of segment ${part.info.index}/${part.info.count} (${own.connections})`)
  }
  const requests = part === null ? whole : rotate(whole, part.own.connectionOffset)

  /** @type {import('./runner.js').Plan} */
  const plan = {
    target,
    requests,
    connections: own.connections,
    pipelining,
    rate: own.rate,
    amount: own.amount,
    duration,
    warmup,
    timeout,
    // threads need a moment to boot before a common start
    startAt: Math.max(startAt ?? 0, Date.now() + (workers > 1 ? 200 : 0)),
    busyPoll: options.busyPoll === true,
    coalesce: options.coalesce === true
  }
  /** @type {import('./result.js').LoadMeta} */
  const meta = {
    url: target.href,
    ...(options.socketPath ? { socketPath: options.socketPath } : {}),
    ...(options.title ? { title: options.title } : {}),
    connections: own.connections,
    pipelining,
    workers,
    rate: own.rate,
    amount: own.amount,
    warmup,
    timeout,
    method,
    machines: 1,
    // a segment sends the list rotated; what it sends is still the whole load's list
    ...(part === null ? {} : { requestsHash: requestsHash(whole) }),
    ...(options.busyPoll ? { busyPoll: true } : {}),
    ...(options.coalesce ? { coalesce: true } : {})
  }
  return { plan, meta, workers, segment: part === null ? null : part.info, startAt }
}

/**
 * This process's part of a split load, and what its result records of it.
 * @param {LoadOptions} options
 * @param {import('./segment.js').WholeLoad} whole
 * @param {Record<string, unknown> & { startAt: number | null }} settings what every segment of the load must share
 */
function segmentOf (options, whole, settings) {
  const raw = options.segment
  /** @type {import('./segment.js').Segment} */
  let segment
  if (typeof raw === 'string') segment = parseSegment(raw, process.env)
  else if (raw !== null && typeof raw === 'object' && Number.isInteger(raw.count) && raw.count >= 1 && Number.isInteger(raw.index) && raw.index >= 1 && raw.index <= raw.count) segment = { index: raw.index, count: raw.count }
  else throw new UsageError(`segment must be 'K/N', 'auto/N' or { index, count } with 1 <= index <= count, got ${JSON.stringify(raw)}`)
  const own = segmentPart(whole, segment)
  const run = options.runId ?? runIdOf({ ...settings, whole, count: segment.count })
  if (typeof run !== 'string' || !/^[\w.-]{1,63}$/.test(run)) throw new UsageError(`run id must be 1 to 63 letters, digits, '.', '_' or '-', got ${JSON.stringify(run)}`)
  return { own, info: { index: segment.index, count: segment.count, run, whole, startAt: settings.startAt } }
}

/**
 * @param {number | string} value epoch ms, or an ISO time (or epoch ms) as text
 * @returns {number} epoch ms
 */
function startInstant (value) {
  if (typeof value === 'number' && Number.isFinite(value)) return parseStartAt(String(Math.round(value)), Date.now())
  if (typeof value === 'string') return parseStartAt(value, Date.now())
  throw new UsageError(`startAt must be epoch ms or an ISO time, got ${JSON.stringify(value)}`)
}

/**
 * @param {Record<string, string> | string[] | undefined} base
 * @param {Record<string, string> | string[] | undefined} own
 * @returns {string[] | undefined}
 */
function mergeHeaders (base, own) {
  if (base === undefined && own === undefined) return undefined
  /** @param {Record<string, string> | string[] | undefined} h */
  const lines = (h) => h === undefined ? [] : Array.isArray(h) ? h : Object.entries(h).map(([k, v]) => `${k}: ${v}`)
  const ownNames = new Set(lines(own).map(l => l.slice(0, l.indexOf(':')).trim().toLowerCase()))
  return [...lines(base).filter(l => !ownNames.has(l.slice(0, l.indexOf(':')).trim().toLowerCase())), ...lines(own)]
}

/**
 * @param {string} name
 * @param {unknown} value
 * @param {number} fallback
 */
function integer (name, value, fallback) {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new UsageError(`${name} must be a positive integer, got ${JSON.stringify(value)}`)
  }
  return value
}

/**
 * @param {string} name
 * @param {unknown} value
 */
function positive (name, value) {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw new UsageError(`${name} must be a positive number, got ${JSON.stringify(value)}`)
  }
  return value
}

/**
 * @param {string} name
 * @param {unknown} value
 */
function nonNegative (name, value) {
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) {
    throw new UsageError(`${name} must be a number >= 0, got ${JSON.stringify(value)}`)
  }
  return value
}

/**
 * Fails fast, with one clear line, when nothing answers at the target — rather than a run full of errors.
 * @param {import('./target.js').Target} target
 * @param {number} timeoutSeconds
 * @returns {Promise<void>}
 */
export function checkReachable (target, timeoutSeconds) {
  const where = target.socketPath ?? `${target.host}:${target.port}`
  return new Promise((resolve, reject) => {
    const socket = target.tls
      ? tls.connect({ host: target.host, port: target.port, rejectUnauthorized: false, servername: net.isIP(target.host) ? undefined : target.host })
      : target.socketPath ? net.connect({ path: target.socketPath }) : net.connect({ host: target.host, port: target.port })
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new UsageError(`cannot reach ${where}: no connection within ${Math.min(timeoutSeconds, 5)} s`))
    }, Math.min(timeoutSeconds, 5) * 1000)
    socket.once(target.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer)
      socket.destroy()
      resolve()
    })
    socket.once('error', (/** @type {NodeJS.ErrnoException} */ err) => {
      clearTimeout(timer)
      socket.destroy()
      reject(new UsageError(`cannot reach ${where}: ${err.code ?? err.message}`))
    })
  })
}
