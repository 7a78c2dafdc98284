import { THRESHOLDS } from './thresholds.js'
import { placedAt } from './wait-packages.js'

/**
 * @typedef {object} WaitLine one line where traced requests waited, as the verdict, evidence, culprits and advice cite
 *   it: unrounded, so that what the report prints from it is what the signal measured
 * @property {{ file: string, line: number }} site the line of the app where they waited; for waits packages made with
 *   no frame of the app on their stacks, where the app put those packages on the request's path (see `via`)
 * @property {import('./wait-packages.js').PackagePath | null} via the packages the waits went through, when any
 * @property {number[] | null} lines for round trips made one after another from several lines of one function: those
 *   lines (the site is the first)
 * @property {import('./waits.js').WaitBreakdown[] | null} breakdown for a handler whose waits at several lines add up:
 *   each of its lines, with its part
 * @property {{ type: string, op: string, name: string, target: string }} resource what they wait on there
 * @property {number} share of the traced requests' time on the server
 * @property {number} perRequest waits there per request (round trips, for a socket)
 * @property {number} msPerWait
 * @property {number | null} msPerTrip the round trip on the wire, for a client socket
 * @property {import('./waits.js').WaitSignal['sequential']} sequential
 * @property {import('./waits.js').WaitSignal['parallel']} parallel
 * @property {{ msPerWait: number, share: number } | null} queue the time each wait spends queueing for a pooled
 *   connection, when it reaches THRESHOLDS.poolQueueMs (less is not told), and its share of the wait (`msPerWait`)
 * @property {import('./waits.js').WaitSignal['pool']} pool
 * @property {import('./waits.js').WaitSignal['backend']} backend each round trip's queueing behind other operations at
 *   the backend, and its own time there
 * @property {import('./waits.js').WaitSignal['behind']} behind when the requests wait here for others to finish (a
 *   limit of the app's own)
 */

/**
 * @param {import('./waits.js').WaitSignal} w
 * @returns {WaitLine}
 */
export function waitLine (w) {
  return {
    site: placedAt(w.site.packages) ?? { file: w.site.file, line: w.site.line },
    via: w.site.packages,
    lines: w.lines ?? null,
    breakdown: w.breakdown ?? null,
    resource: { type: w.resource.type, op: w.resource.op, name: w.resource.name, target: w.resource.target },
    share: w.share,
    perRequest: w.perRequest,
    msPerWait: w.msPerWait,
    msPerTrip: w.msPerTrip,
    sequential: w.sequential,
    parallel: w.parallel,
    queue: w.queue && w.queue.msPerWait >= THRESHOLDS.poolQueueMs
      ? { msPerWait: w.queue.msPerWait, share: w.queue.msPerWait / Math.max(w.msPerWait, 1e-9) }
      : null,
    pool: w.pool,
    backend: w.backend,
    behind: w.behind
  }
}

/**
 * Whether the pool a line's requests queue for is only full because what they wait on is slow: the round trip takes
 * more than twice as long as the queueing (an N+1 keeping all of a pool's connections busy). A bigger pool would
 * then only load the backend more; the line that waits is to blame first.
 * @param {{ queue: { msPerWait: number } | null, msPerTrip: number | null }} w
 */
export function queueIsMinor (w) {
  return w.queue !== null && w.msPerTrip !== null && w.queue.msPerWait < w.msPerTrip / 2
}

/**
 * Whether requests queued for the pool because all of it was in use: as many connections busy at once as its limit,
 * read from the pool object itself (or, when it has none to read, as many as it ever opened). A pool with room left —
 * an agent allowing 50 sockets with one in use — is not what the requests queue for, and raising its limit changes
 * nothing.
 * @param {import('./waits.js').WaitSignal['pool']} pool
 */
export function poolIsFull (pool) {
  if (pool === null) return false
  const limit = pool.limit?.value ?? pool.connections
  return pool.busy >= limit
}
