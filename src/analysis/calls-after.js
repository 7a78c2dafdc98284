// A server too busy for its requests to be traced in the window — its loop saturated — may spend that CPU on its calls
// to other servers: an ORM builds each query and parses each reply on the loop, so twenty queries a request where one
// would do are twenty times the client's work. doctor then traces a short load after the window
// (src/run/phases/tracing-phase.js); this counts the round trips its requests made, and from which line of the app.
import { TRACED_ENOUGH } from '../probe-protocol.js'
import { computeWaits } from './waits.js'

/** What a socket's round trip can be to (src/analysis/waits.js's resource types): a server, not a timer or a file. */
const CALLS = new Set(['postgres', 'redis', 'mysql', 'mongodb', 'http', 'tcp'])

/**
 * @typedef {object} CallsAfter the calls each request made, in the traced load after the window
 * @property {number} traced requests traced there
 * @property {number} perRequest round trips to other servers per request, in all
 * @property {string[]} to what they went to, most first: `postgres`, `redis`
 * @property {{ file: string, line: number, perRequest: number, op: string, loop: { file: string, line: number } | null }} most
 *   the line of the app that made the most of them, what it called, and the loop it made them in (one after another)
 */

/**
 * @param {import('./run-data.js').ThreadRecord[]} threads the serving threads
 * @param {import('../run/doctor-run.js').RunRecord} run
 * @param {number} windowTraced requests the window traced
 * @returns {CallsAfter | null} null: the window traced enough, no such load ran, or its requests made no call
 */
export function callsAfterWindow (threads, run, windowTraced) {
  const t = run.tracing
  if (windowTraced >= TRACED_ENOUGH || !t || !(t.end > t.start)) return null
  const waits = computeWaits(threads, t.start, t.end, run.cwd, { byHandler: false })
  const calls = waits.sites.filter(w => CALLS.has(w.resource.type))
  if (waits.traced < TRACED_ENOUGH || calls.length === 0) return null
  /** @type {Map<string, number>} */
  const to = new Map()
  /** @type {CallsAfter['most'] | null} */
  let most = null
  for (const w of calls) {
    to.set(w.resource.type, (to.get(w.resource.type) ?? 0) + w.perRequest)
    if (most !== null && w.perRequest <= most.perRequest) continue
    const loop = w.sequential?.loop ? { file: w.sequential.loop.file, line: w.sequential.loop.line } : null
    most = { file: w.site.file, line: w.site.line, perRequest: w.perRequest, op: w.resource.name, loop }
  }
  if (most === null) return null
  const perRequest = [...to.values()].reduce((a, v) => a + v, 0)
  return { traced: waits.traced, perRequest, to: [...to.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k), most }
}
