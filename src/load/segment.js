// One load split over N processes (pods of a Kubernetes Indexed Job, a CI matrix): which part is this one, and when
// do all of them start. Decided once, before the run; the load's hot path never sees it.
import { createHash } from 'node:crypto'
import { UsageError } from '../errors.js'
import { split } from './threads.js'

/**
 * Which part of a split load a process runs.
 * @typedef {object} Segment
 * @property {number} index 1-based
 * @property {number} count N
 */

/**
 * The whole load a segment is part of, as the command line described it.
 * @typedef {object} WholeLoad
 * @property {number} connections
 * @property {number} rate 0 for a closed loop
 * @property {number} amount 0 for none
 */

/**
 * What a segment's result records about its part, so that `hotpath merge` can check that the parts belong together.
 * @typedef {object} SegmentInfo
 * @property {number} index 1-based
 * @property {number} count
 * @property {string} run the run id every segment of one load shares
 * @property {WholeLoad} whole
 * @property {number | null} startAt epoch ms the load was asked to begin at (--start-at), or null
 * @property {number} started epoch ms it actually began (load sent; measurement begins after any warm-up)
 */

/** The environment variable a Kubernetes Indexed Job gives each pod: its index, 0-based. */
export const INDEX_ENV = 'JOB_COMPLETION_INDEX'

/**
 * Parses `--segment K/N` (1-based) or `auto/N` (K from JOB_COMPLETION_INDEX + 1).
 * @param {string} raw
 * @param {NodeJS.ProcessEnv} env
 * @returns {Segment}
 */
export function parseSegment (raw, env) {
  const m = /^(auto|\d+)\/(\d+)$/.exec(raw.trim())
  const count = m ? Number(m[2]) : NaN
  if (!m || !Number.isSafeInteger(count) || count < 1) {
    throw new UsageError(`--segment must be K/N (1 <= K <= N) or auto/N, got '${raw}'`)
  }
  if (m[1] === 'auto') {
    const index = env[INDEX_ENV]
    if (index === undefined || index === '') {
      throw new UsageError(`--segment auto/${count} takes its index from ${INDEX_ENV} (set by a Kubernetes Indexed Job), which is not set`)
    }
    if (!/^\d+$/.test(index) || Number(index) >= count) {
      throw new UsageError(`${INDEX_ENV} must be an integer from 0 to ${count - 1} for --segment auto/${count}, got '${index}'`)
    }
    return { index: Number(index) + 1, count }
  }
  const index = Number(m[1])
  if (index < 1 || index > count) throw new UsageError(`--segment K/N needs 1 <= K <= N, got '${raw}'`)
  return { index, count }
}

/**
 * Accepts an ISO 8601 time with a zone (`2026-11-25T18:40:00Z`) or epoch milliseconds.
 * @param {string} raw
 * @param {number} now epoch ms
 * @returns {number} epoch ms
 */
export function parseStartAt (raw, now) {
  const text = raw.trim()
  const ms = /^\d+$/.test(text)
    ? Number(text)
    : /^\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:?\d\d)$/i.test(text) ? Date.parse(text) : NaN
  if (!Number.isFinite(ms) || ms < 1e12) {
    throw new UsageError(`--start-at must be an ISO time with its zone (2026-01-31T12:00:00Z) or unix ms, got '${raw}'`)
  }
  // A start a day away is a typo; a run must stay bounded in time.
  if (ms - now > 24 * 3600_000) throw new UsageError(`--start-at ${new Date(ms).toISOString()} is more than a day away`)
  return ms
}

/**
 * The K-th of N parts of a load: connections, rate and amount split so that the parts add up exactly to the whole,
 * remainders going to the first segments (the same rule as threads.js). The rate is split in thousandths of a request
 * per second. The N parts run the whole load's connections o..o+c-1; each starts the --requests list where that
 * connection of one process would, so that together they send the same mix.
 * @param {WholeLoad} whole
 * @param {Segment} segment
 * @returns {WholeLoad & { connectionOffset: number }}
 */
export function segmentPart (whole, { index, count }) {
  const need = (/** @type {string} */ what, /** @type {number} */ n) => {
    if (n < count) throw new UsageError(`a load split in ${count} segments needs ${what} of at least ${count}, one per segment, got ${n}`)
  }
  need('--connections', whole.connections)
  const connections = split(whole.connections, count)
  let rate = 0
  if (whole.rate > 0) {
    need('--rate (in thousandths of a request/s)', Math.round(whole.rate * 1000))
    rate = split(Math.round(whole.rate * 1000), count)[index - 1] / 1000
  }
  let amount = 0
  if (whole.amount > 0) {
    need('--amount', whole.amount)
    amount = split(whole.amount, count)[index - 1]
  }
  const connectionOffset = connections.slice(0, index - 1).reduce((a, b) => a + b, 0)
  return { connections: connections[index - 1], rate, amount, connectionOffset }
}

/**
 * The list rotated to start at `offset`: connection j of the rotated list starts where connection offset + j of the
 * whole list does (connection.js starts connection i at entry i mod length).
 * @template T
 * @param {T[]} list
 * @param {number} offset
 * @returns {T[]}
 */
export function rotate (list, offset) {
  const k = offset % list.length
  return k === 0 ? list : [...list.slice(k), ...list.slice(0, k)]
}

/**
 * A run id shared by every segment started from one command line: the same settings, N and start time give the same
 * id, so the pods of one Job agree without talking to each other.
 * @param {object} settings
 * @returns {string}
 */
export function runIdOf (settings) {
  return createHash('sha256').update(JSON.stringify(settings)).digest('hex').slice(0, 12)
}
