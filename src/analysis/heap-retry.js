// After a crash on heap exhaustion, doctor loads the target again with the heap limit its advice proposes
// (src/cli/doctor-heap-retry.js), under the same load, and says what it gave: the load ran to its end, or the heap
// ran out again — a heap that outgrows twice its limit under the same load grows with the load (a leak, or more
// requests held at once than any limit holds), and a larger limit only postpones the crash. This judges that run; in
// words: src/report/words/heap-retry.js.
import { heapAtCrash, OUT_OF_HEAP } from './heap-exhaustion.js'

/**
 * What loading the target again with a larger heap limit gave.
 * @typedef {object} HeapRetry
 * @property {string} flag the node flag tried, `--max-old-space-size=256`
 * @property {number} value its value, MB
 * @property {'survived' | 'crashed' | 'exited' | 'failed' | 'interrupted' | 'not-run'} outcome `survived`: the load
 *   ran to its end; `crashed`: the heap ran out again; `exited`: the target ended otherwise during the load (a signal,
 *   an exit code); `failed`: it measured nothing (the target did not start, the load failed); `interrupted`: Ctrl-C
 * @property {'no-command' | 'no-room' | null} why for `not-run`: no command doctor started (--attach, --on-port), or
 *   less free memory on the machine than the limit tried
 * @property {number | null} heapLimit V8's heap limit with the flag, bytes
 * @property {number | null} peakHeap the most heap used during the load, bytes (the gauge's readings, four a second;
 *   for a crash, V8's last collections where they are higher)
 * @property {number | null} peakRss the most resident memory during the load, bytes
 * @property {number} requests responses during the load
 * @property {number | null} requestsPerSecond responses ÷ the seconds loaded
 * @property {number | null} seconds seconds of load until its end or the crash
 * @property {number | null} firstSeconds seconds of load the diagnosed run lasted before its crash
 * @property {{ code: number | null, signal: string | null } | null} exit how the target ended during the load
 * @property {string | null} error what stopped it measuring (`failed`), or the load's own complaint
 * @property {number} wallSeconds the whole retry, start of the target to its stop
 * @property {boolean} lowered the limit tried is below the first run's: its container's out-of-memory killer killed it,
 *   and a limit within the container's memory is tried (`crashed` is then V8's error in place of the kill, `exited`
 *   on SIGKILL a kill again: the memory is taken outside the heap)
 */

/**
 * What the retry's phase measured, as the phase runner returns it (src/run/phases/heap-retry-phase.js).
 * @typedef {object} RetryPhase
 * @property {number | null} heapLimit
 * @property {{ heapUsed: number, rss: number, heapLimit?: number | null } | null} gauge
 * @property {{ requests: number, seconds: number, failed: string | null, interrupted: boolean } | null} load
 * @property {{ code: number | null, signal: string | null } | null} exit how the target ended during the load, when
 *   it did by itself
 * @property {string[]} stderr its last lines
 * @property {string | null} failed why it measured nothing
 * @property {number} ms
 */

/**
 * @param {RetryPhase} phase
 * @param {number} value MB
 * @param {number | null} firstSeconds
 * @param {boolean} [lowered] the limit is a lower one, within the container's memory
 * @returns {HeapRetry}
 */
export function judgeRetry (phase, value, firstSeconds, lowered = false) {
  const crashed = phase.exit !== null && phase.stderr.some(l => OUT_OF_HEAP.test(l))
  const atCrash = crashed ? heapAtCrash(phase.stderr) : null
  const peakHeap = Math.max(phase.gauge?.heapUsed ?? 0, atCrash ?? 0) || null
  const load = phase.load
  /** @type {HeapRetry['outcome']} */
  let outcome = 'survived'
  if (phase.exit !== null) outcome = crashed ? 'crashed' : 'exited'
  else if (phase.failed !== null || load === null) outcome = 'failed'
  else if (load.interrupted) outcome = 'interrupted'
  else if (load.requests === 0) outcome = 'failed'
  // The flag goes in NODE_OPTIONS unless the command gives its own before its script, where it is replaced: one the
  // command gives elsewhere (a shell that starts node with it) wins, and then the limit read is not the one tried.
  const missed = phase.heapLimit !== null && (phase.heapLimit < 0.9 * value * MB || phase.heapLimit > value * MB + YOUNG_ROOM)
  if (missed) outcome = 'failed'
  const seconds = load ? round(load.seconds) : null
  return {
    flag: `--max-old-space-size=${value}`,
    value,
    outcome,
    why: null,
    heapLimit: phase.heapLimit,
    peakHeap,
    peakRss: phase.gauge?.rss || null,
    requests: load?.requests ?? 0,
    requestsPerSecond: load && load.seconds > 0 ? Math.round(load.requests / load.seconds) : null,
    seconds,
    firstSeconds,
    exit: phase.exit,
    error: missed ? `the flag did not take effect: V8's heap limit read ${Math.round(/** @type {number} */ (phase.heapLimit) / MB)} MB (the command sets its own --max-old-space-size where NODE_OPTIONS cannot override it)` : phase.failed ?? load?.failed ?? null,
    wallSeconds: round(phase.ms / 1000),
    lowered
  }
}

/**
 * A retry that did not run, and why.
 * @param {number} value
 * @param {'no-command' | 'no-room'} why
 * @param {number | null} firstSeconds
 * @param {boolean} [lowered]
 * @returns {HeapRetry}
 */
export function notRetried (value, why, firstSeconds, lowered = false) {
  return { flag: `--max-old-space-size=${value}`, value, outcome: 'not-run', why, heapLimit: null, peakHeap: null, peakRss: null, requests: 0, requestsPerSecond: null, seconds: null, firstSeconds, exit: null, error: null, wallSeconds: 0, lowered }
}

/**
 * The advice with what the retry measured, on the heap's advice.
 * @param {import('./recommendations.js').Advice[]} advice
 * @param {HeapRetry} retry
 * @returns {import('./recommendations.js').Advice[]}
 */
export function withRetry (advice, retry) {
  return advice.map(a => a.kind === 'heap-exhausted' || a.kind === 'memory-killed' ? { ...a, retry } : a)
}

/**
 * Bytes V8's heap limit may exceed the old generation's size the flag sets: the young generation, up to three
 * semi-spaces of 64 MB on Node 24.
 */
const YOUNG_ROOM = 256 * 1048576
const MB = 1048576

/** @param {number} v */
const round = (v) => Math.round(v * 10) / 10
