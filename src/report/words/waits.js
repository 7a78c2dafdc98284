// Where requests waited, in words. The same thing one layer down, as facts: src/analysis/waits.js.
import { placeText, formatMs, formatPercent } from '../format.js'

/** @typedef {import('../../analysis/wait-line.js').WaitLine} WaitLine */

/**
 * `1 round trip a request, 14.2 ms each` / `20 one after another a request, 1.98 ms each`.
 * @param {WaitLine} w
 */
export function waitCounts (w) {
  const n = w.perRequest
  const noun = w.msPerTrip !== null ? (Math.abs(n - 1) < 0.05 ? 'round trip' : 'round trips') : (Math.abs(n - 1) < 0.05 ? 'wait' : 'waits')
  const count = n >= 10 ? Math.round(n).toString() : n.toFixed(1).replace(/\.0$/, '')
  const how = w.sequential ? ' one after another' : w.parallel ? ' at once' : ''
  return `${count} ${noun}${how} a request, ${formatMs(w.msPerWait)} each`
}

/**
 * ` Most of it (64%) is spent at app.js:12 waiting on postgres SELECT … (…), 80% of it queueing for one of the 10
 * connections of the pool created at db.js:3.` — where the requests wait most, in the verdict.
 * @param {WaitLine} w
 */
export function topWaitSentence (w) {
  const queued = w.queue && w.pool
    ? `, ${formatPercent(w.queue.share, 0)} of it queueing for ${connectionsText(w.pool)} ${w.pool.site ? `of the ${oneConnection(w.pool) ? 'client' : 'pool'} created at ${placeText(w.pool.site.file, w.pool.site.line)}` : `to ${w.pool.endpoint}`}`
    : ''
  return ` Most of it (${formatPercent(w.share, 0)}) is spent ${whereWaited(w)} waiting on ${w.resource.name} (${waitCounts(w)})${queued}.`
}

/**
 * `at app.js:12`, or for waits the app's packages made on their own, `in express-session (put on the request's path at
 * app.js:9)`.
 * @param {Pick<WaitLine, 'site' | 'via'> & { lines?: number[] | null }} w
 */
export function whereWaited (w) {
  const via = w.via
  if (w.lines) return `at ${w.site.file}:${lineRanges(w.lines)}`
  if (via === null || via === undefined || !via.outsideApp) return `at ${placeText(w.site.file, w.site.line)}`
  const first = via.chain[0]
  const placed = via.used ? `put on the request's path at ${via.used.file}:${via.used.line}` : via.created ? `its ${via.created.class} created at ${via.created.file}:${via.created.line}` : null
  return `in ${first.name} (${first.function}${placed ? `, ${placed}` : ''})`
}

/**
 * `; through express-session session → connect-session-sequelize SequelizeStore.get → sequelize Session.findOne, the
 * SequelizeStore created at app.js:12` — the packages a wait went through, when any.
 * @param {Pick<WaitLine, 'via'>} w
 */
export function viaPackages (w) {
  const via = w.via
  if (via === null || via === undefined || via.chain.length === 0) return ''
  const created = via.created ? `, the ${via.created.class} created at ${via.created.file}:${via.created.line}` : ''
  return `; through ${via.chain.map(c => `${c.name} ${c.function}`).join(' → ')}${created}`
}

/**
 * `6–11`, `4, 9–10`: line numbers, runs of consecutive ones as ranges.
 * @param {number[]} lines ascending
 */
export function lineRanges (lines) {
  /** @type {string[]} */
  const out = []
  for (let i = 0; i < lines.length; i++) {
    let j = i
    while (j + 1 < lines.length && lines[j + 1] === lines[j] + 1) j++
    out.push(j > i ? `${lines[i]}–${lines[j]}` : String(lines[i]))
    i = j
  }
  return out.join(', ')
}

/**
 * A client that opened one connection and says no limit (a Redis client): no pool to enlarge, one connection that
 * carries every request's commands.
 * @param {{ connections: number, limit: { key: string, value: number } | null }} pool
 */
export function oneConnection (pool) {
  return pool.connections === 1 && pool.limit === null
}

/**
 * `one of the 10 connections`, `the one connection`
 * @param {{ connections: number, limit: { key: string, value: number } | null }} pool
 */
export function connectionsText (pool) {
  return pool.connections === 1 ? 'the one connection' : `one of the ${pool.connections} connections`
}
