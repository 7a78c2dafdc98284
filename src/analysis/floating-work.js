// Work a request started and did not wait for: promises (and timers) still pending when its response finished, by the
// line they wait at and the line of the request's path that started them. A debugging upload fired and forgotten
// holds its payload until it is done; when such work is slower than the requests that start it, it piles up and the
// heap grows as a leak's does. The wait tracer records them per traced request (src/sampling/wait-records.js).
import { SourceCache } from '../profile/sources.js'
import { displayPath } from './paths.js'
import { sourceLabel } from './wait-culprits.js'

/** Of the traced requests, the part that must leave work pending at one site for it to be their habit, not a stray. */
const MIN_SHARE = 0.5
/** ms after the response it lives, on average, to count: a callback that runs as the response ends is no work left. */
const MIN_AGE_MS = 5

/**
 * @typedef {object} FloatingWork
 * @property {{ function: string, file: string, line: number }} site where the pending work waits (the await)
 * @property {{ function: string, label?: string, file: string, line: number } | null} fired the line on the request's path
 *   that started it without waiting for it (the site's outermost app caller), when its stack showed one; `label` names
 *   an anonymous function from the source around it, as the culprits do (`createServer callback`)
 * @property {number} perRequest promises pending here per traced request when its response finished (one call not
 *   awaited can leave several: each await inside what it called)
 * @property {number} requestShare of the traced requests, the part that left work pending here
 * @property {number} meanAgeMs how long after the response they lived: until they settled, or until the tracer wrote
 *   the request (a second at most) for those still pending then
 * @property {number} maxAgeMs
 * @property {number} pendingShare of them, the part still pending when the request was written
 * @property {number} requests traced requests that left work pending here
 * @property {true} [after] found in the tracing load after the window (src/run/phases/tracing-phase.js), the window
 *   having traced none that left it: a busy server is not traced in its window
 */

/**
 * The work the window's traced requests left pending; when they left none — or none was traced, a busy server's
 * window is not — what the requests of the tracing load after the window left, if there was one.
 * @param {import('./run-data.js').ThreadRecord[]} threads the serving threads
 * @param {number} start
 * @param {number} end
 * @param {import('../run/doctor-run.js').RunRecord} run
 * @returns {FloatingWork[]}
 */
export function runFloatingWork (threads, start, end, run) {
  const found = floatingWork(threads, start, end, run.cwd)
  const t = run.tracing
  if (found.length > 0 || !t || !(t.end > t.start)) return found
  return floatingWork(threads, t.start, t.end, run.cwd).map(f => ({ ...f, after: /** @type {const} */ (true) }))
}

/**
 * @param {import('./run-data.js').ThreadRecord[]} threads the serving threads
 * @param {number} start
 * @param {number} end
 * @param {string} fallbackCwd
 * @returns {FloatingWork[]} most pending time first
 */
export function floatingWork (threads, start, end, fallbackCwd) {
  /** @type {Map<string, { site: FloatingWork['site'], fired: FloatingWork['fired'], count: number, settled: number, ageMs: number, maxAgeMs: number, requests: number, last: unknown }>} */
  const bySite = new Map()
  const sources = new SourceCache()
  let traced = 0
  for (const t of threads) {
    const cwd = String(t.hello.cwd ?? fallbackCwd)
    for (const trace of t.waits.traces) {
      if (trace.time < start || trace.time > end) continue
      traced++
      for (const [id, count, settled, ageMs, maxAgeMs] of trace.floating ?? []) {
        const info = t.waits.sites.get(id)
        if (info === undefined) continue
        const caller = info.callers.at(-1) ?? null
        const key = `${info.file}:${info.line}|${caller ? `${caller.file}:${caller.line}` : ''}`
        let acc = bySite.get(key)
        if (acc === undefined) {
          acc = {
            site: { function: info.function, file: displayPath(info.file, cwd), line: info.line },
            fired: caller ? { function: caller.function, ...labelOf(caller, sources, cwd), file: displayPath(caller.file, cwd), line: caller.line } : null,
            count: 0,
            settled: 0,
            ageMs: 0,
            maxAgeMs: 0,
            requests: 0,
            last: null
          }
          bySite.set(key, acc)
        }
        acc.count += count
        acc.settled += settled
        acc.ageMs += ageMs
        acc.maxAgeMs = Math.max(acc.maxAgeMs, maxAgeMs)
        // Several sites of one request can be one line (the awaits inside what it called): the request counts once.
        if (acc.last !== trace) acc.requests++
        acc.last = trace
      }
    }
  }
  if (traced === 0) return []
  return [...bySite.values()]
    .map(a => ({ site: a.site, fired: a.fired, perRequest: a.count / traced, requestShare: a.requests / traced, meanAgeMs: a.ageMs / a.count, maxAgeMs: a.maxAgeMs, pendingShare: 1 - a.settled / a.count, requests: a.requests }))
    .filter(f => f.requestShare >= MIN_SHARE && f.meanAgeMs >= MIN_AGE_MS)
    .sort((a, b) => b.perRequest * b.meanAgeMs - a.perRequest * a.meanAgeMs)
}

/**
 * An anonymous caller's name read from its source, as the culprits have it; nothing for a named one.
 * @param {{ function: string, file: string, line: number, column?: number }} frame
 * @param {SourceCache} sources
 * @param {string} cwd
 * @returns {{ label?: string }}
 */
function labelOf (frame, sources, cwd) {
  if (!/(^|\.)<anonymous>$|^\(anonymous\)$|^$/.test(frame.function)) return {}
  const label = sourceLabel(sources, cwd, frame)
  return label ? { label } : {}
}
