import { isAbsolute, resolve } from 'node:path'
import { labelAt } from '../profile/function-labels.js'
import { scriptIndex } from '../profile/script-index.js'
import { SourceCache } from '../profile/sources.js'
import { THRESHOLDS } from './thresholds.js'
import { poolIsFull, queueIsMinor, waitLine } from './wait-line.js'
import { placedAt } from './wait-packages.js'

/** @typedef {import('./waits.js').WaitSignal} WaitSignal */

/**
 * @typedef {object} WaitFacts what requests wait on at a culprit's line, in numbers
 * @property {'wait' | 'pool'} role `wait`: the line where requests wait; `pool`: where the pool they queue for was
 *   created (its `pool` says which, with its limit)
 * @property {import('./waits.js').WaitResource} resource
 * @property {number} perRequest waits there per request (round trips, for a socket)
 * @property {number} msPerWait
 * @property {number | null} msPerTrip the round trip on the wire, for a client socket
 * @property {number} requests traced requests that waited there
 * @property {{ perRequest: number, loop: { function: string, file: string, line: number } | null, savedMs: number } | null} sequential
 * @property {{ perRequest: number } | null} parallel
 * @property {{ msPerWait: number, others: number } | null} queue
 * @property {WaitSignal['pool']} pool
 * @property {WaitSignal['backend']} backend each round trip's queueing behind other operations at the backend, and its
 *   own time there
 * @property {WaitSignal['behind']} behind waits for other requests to finish, here (a limit of the app's own)
 * @property {import('./wait-packages.js').PackagePath | null} via the packages the wait went through (a middleware, a
 *   store, an ORM, a driver), and where the app put them on the request's path
 * @property {import('./waits.js').WaitBreakdown[]} [breakdown] for a handler whose waits at several lines add up: each
 *   of its lines, with its part
 */

/**
 * The lines to blame for a server that waits, most time first: where requests wait (an await, a call that takes a
 * callback, a round trip written there), with what they wait on and how often; for requests that queue for a pooled
 * connection, the line that created the pool with its limit, first unless the queue is short beside the trip.
 * @param {import('./signals.js').Signals} s
 * @param {string} cwd the target's working directory, which the sites' files are relative to
 * @returns {import('./culprits.js').Culprit[]}
 */
export function waitCulprits (s, cwd) {
  /** @type {import('./culprits.js').Culprit[]} */
  const out = []
  const sources = new SourceCache()
  for (const w of s.waits.sites) {
    if (w.share < THRESHOLDS.waitShare) continue
    const pool = poolCulprit(w)
    const site = siteCulprit(w, sources, cwd)
    const fresh = pool !== null && !out.some(c => c.file === pool.file && c.line === pool.line)
    // The pool comes first where queueing for it is a good part of each wait (see queueIsMinor).
    const minor = queueIsMinor(w)
    if (fresh && !minor) out.push(/** @type {import('./culprits.js').Culprit} */ (pool))
    out.push(site)
    if (fresh && minor) out.push(/** @type {import('./culprits.js').Culprit} */ (pool))
  }
  return out
}

/**
 * @param {WaitSignal} w
 * @param {SourceCache} sources
 * @param {string} cwd what the site's file is relative to
 * @returns {import('./culprits.js').Culprit}
 */
function siteCulprit (w, sources, cwd) {
  const placed = placedAt(w.site.packages)
  if (placed !== null) return placedCulprit(w, placed)
  const named = nameOf(w.site.function, w.site.callers)
  const name = named.name
  // An anonymous function is named from the source around it, as the CPU culprits are (`get('/') callback`).
  const label = name === '(anonymous)' ? sourceLabel(sources, cwd, w.site) ?? named.label : named.label
  return {
    function: name,
    ...(label ? { label } : {}),
    file: w.site.file,
    line: w.site.line,
    share: w.share,
    kind: /\bnode_modules\b/.test(w.site.file) ? 'dependency' : 'app',
    measure: 'waits',
    threads: [{ pid: w.pid, threadId: w.threadId }],
    facts: { kind: 'waits', ...waitLine(w) },
    wait: waitFacts(w, 'wait')
  }
}

/**
 * A wait the app's packages made with no frame of the app on its stack (a session middleware's lookup), blamed where
 * the app put them on the request's path: the line that hands the first of them to the framework, or constructs an
 * object of theirs the wait went through.
 * @param {WaitSignal} w
 * @param {{ file: string, line: number }} placed
 * @returns {import('./culprits.js').Culprit}
 */
function placedCulprit (w, placed) {
  const first = /** @type {import('./wait-packages.js').PackagePath} */ (w.site.packages).chain[0]
  return {
    function: `${first.name} ${first.function}`,
    file: placed.file,
    line: placed.line,
    share: w.share,
    kind: 'app',
    measure: 'waits',
    threads: [{ pid: w.pid, threadId: w.threadId }],
    facts: { kind: 'waits', ...waitLine(w) },
    wait: waitFacts(w, 'wait')
  }
}

/**
 * @param {WaitSignal} w
 * @returns {import('./culprits.js').Culprit | null}
 */
function poolCulprit (w) {
  const pool = w.pool
  if (w.queue === null || w.queue.msPerWait < THRESHOLDS.poolQueueMs || pool === null || pool.site === null || !poolIsFull(pool)) return null
  const share = w.msPerWait > 0 ? w.share * Math.min(1, w.queue.msPerWait / w.msPerWait) : 0
  const { name } = nameOf(pool.site.function, [])
  return {
    function: name,
    // What the line does, as a person reads it: `new BoundPool`, `new Agent`.
    ...(pool.class ? { label: `new ${pool.class}` } : {}),
    file: pool.site.file,
    line: pool.site.line,
    share,
    kind: 'app',
    measure: 'waits',
    threads: [{ pid: w.pid, threadId: w.threadId }],
    facts: { kind: 'creates-pool', ...waitLine(w) },
    wait: waitFacts(w, 'pool')
  }
}

/**
 * What the JSON says of a wait, in numbers.
 * @param {WaitSignal} w
 * @param {WaitFacts['role']} role
 * @returns {WaitFacts}
 */
function waitFacts (w, role) {
  return {
    role,
    resource: w.resource,
    perRequest: round(w.perRequest, 2),
    msPerWait: round(w.msPerWait, 3),
    msPerTrip: w.msPerTrip === null ? null : round(w.msPerTrip, 3),
    requests: w.requests,
    sequential: w.sequential ? { perRequest: round(w.sequential.perRequest, 1), loop: w.sequential.loop, savedMs: round(w.sequential.savedMs, 3) } : null,
    parallel: w.parallel ? { perRequest: round(w.parallel.perRequest, 1) } : null,
    queue: w.queue ? { msPerWait: round(w.queue.msPerWait, 3), others: round(w.queue.others, 3) } : null,
    pool: w.pool,
    backend: w.backend ? { queuedMs: round(w.backend.queuedMs, 3), serviceMs: round(w.backend.serviceMs, 3) } : null,
    behind: w.behind,
    via: w.site.packages,
    ...(w.breakdown ? { breakdown: w.breakdown.map(b => ({ line: b.line, share: round(b.share, 3), perRequest: round(b.perRequest, 1), sites: b.sites })) } : {})
  }
}

/**
 * A stack frame's function as a culprit names it: V8's name, `(anonymous)` for none, with a label naming the app
 * function it runs in when there is one.
 * @param {string} fn as the stack gave it (`handler`, `Server.<anonymous>`, `<anonymous>`)
 * @param {{ function: string }[]} callers
 */
function nameOf (fn, callers) {
  const bare = fn.replace(/^(async|new)\s+/, '')
  if (bare !== '' && !bare.endsWith('<anonymous>')) return { name: bare, label: null }
  const named = callers.find(c => c.function !== '' && !c.function.endsWith('<anonymous>'))
  return { name: '(anonymous)', label: named ? `(anonymous in ${named.function.replace(/^(async|new)\s+/, '')})` : null }
}

/**
 * An anonymous function's name read from the source around a frame (`createServer callback`), as the CPU culprits have
 * it; null when the source says nothing.
 * @param {SourceCache} sources
 * @param {string} cwd what the frame's file is relative to
 * @param {{ file: string, line: number, column?: number }} frame 1-based line and column
 * @returns {string | null}
 */
export function sourceLabel (sources, cwd, frame) {
  return labelAt(scriptIndex(sources, isAbsolute(frame.file) ? frame.file : resolve(cwd, frame.file)), frame.line, Math.max(0, (frame.column ?? 1) - 1))
}

/**
 * @param {number} v
 * @param {number} digits
 */
function round (v, digits) {
  const f = 10 ** digits
  return Math.round(v * f) / f
}
