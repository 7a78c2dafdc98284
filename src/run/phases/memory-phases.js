// After doctor's load window, the heap phases its figures ask for, decided the moment the probes report the window's
// end. Before the verdict, allocation samples: of every allocation when GC took a good share of the window, of what
// survives when the window left megabytes alive (allocation-phases.js) — a few seconds, and the culprits of the gc and
// memory-leak verdicts rest on them. After the verdict, when the window left megabytes alive or each request cost
// more than the last, the retainer phases' heap snapshots (retainer-phases.js): they confirm a leak and name what keeps
// it, within a budget of time, since a snapshot's cost grows with the heap.
import { recordAllocations } from './allocation-phases.js'
import { ask, probeOf } from '../heap-run.js'
import { COMMAND, MESSAGE, TRACED_ENOUGH } from '../../probe-protocol.js'

/**
 * How long after the load doctor watches whether the heap it left is let go, and how often: a cache that keeps each
 * entry a few seconds (a TTL) holds at the load's end what a leak holds, and only lets it go once the load stopped.
 */
const RELEASE_MS = 4000
const RELEASE_STEP_MS = 1000

/**
 * @typedef {object} MemoryPhaseOptions
 * @property {number} heapInterval bytes between heap samples (0: no samples)
 * @property {number} minGcShare GC share of the window (its pauses ÷ its length) that asks for allocation samples
 * @property {number} minKeptBytes what the window must leave alive (bytes after full collections, and share of where it
 *   started) to ask for what survives
 * @property {number} minKeptRatio
 * @property {boolean} snapshots take heap snapshots between two more loads, to see what keeps what survives
 * @property {number} snapshotBudgetMs the most the snapshots and their loads may take, all together
 * @property {(window: { pid: number, port: number, start: number, end: number }) => boolean} [costRose] whether each
 *   request cost more than the last during the window (state that grows by a little per request): asks for snapshots
 */

/**
 * What the window's figures ask for after it.
 * @typedef {object} MemoryPlan
 * @property {import('./allocation-phases.js').SampleKind[]} kinds allocation samples to take before the verdict
 * @property {number} gcShare
 * @property {number} keptBytes what the window left alive
 * @property {number | null} keptFrom the heap after the full collection just before the window (null: not measured)
 * @property {{ reason: 'kept' | 'cost', keptBytes: number, heapBytes: number, growthBytesPerSecond: number } | null} retainers
 *   the snapshots asked for after the verdict (when `snapshots` allows): what asked, the heap they will read (after
 *   the window's last full collection), and how fast it grew
 * @property {boolean} trace a load with its requests traced before the verdict (tracing-phase.js): the window left
 *   megabytes alive, and traced too few requests to say whether they leave work pending that holds them
 */

/**
 * @param {object} o
 * @param {MemoryPhaseOptions} o.phases
 * @param {any[]} o.stopped the probes' 'stopped' messages
 * @param {{ pid: number, port: number }} o.listening
 * @param {{ start: number, end: number }} o.window
 * @returns {MemoryPlan}
 */
export function planMemoryPhases (o) {
  const main = o.stopped.find(m => m.pid === o.listening.pid && m.threadId === 0)
  const { heapInterval, minGcShare } = o.phases
  const gcShare = Number(main?.gcMs) / Number(main?.windowMs)
  const kept = keptBytes(main)
  const bytes = kept === null ? 0 : kept.end - kept.start
  const leaking = kept !== null && bytes >= o.phases.minKeptBytes && bytes >= o.phases.minKeptRatio * kept.start
  /** @type {MemoryPlan['kinds']} */
  const kinds = []
  if (heapInterval > 0 && gcShare >= minGcShare) kinds.push('allocations')
  // What survives is sampled before the verdict, in a load of its own: the leak's allocating line is then in the
  // verdict, and stays when the snapshots cannot be taken.
  if (heapInterval > 0 && leaking) kinds.push('retained')
  const rising = o.phases.snapshots && !leaking && o.phases.costRose?.({ pid: o.listening.pid, port: o.listening.port, start: o.window.start, end: o.window.end }) === true
  const seconds = Math.max(0.001, (o.window.end - o.window.start) / 1000)
  const retainers = o.phases.snapshots && (leaking || rising)
    ? { reason: /** @type {'kept' | 'cost'} */ (leaking ? 'kept' : 'cost'), keptBytes: bytes, heapBytes: kept?.end ?? Number(main?.heapUsed) ?? 0, growthBytesPerSecond: Math.max(0, bytes) / seconds }
    : null
  const trace = heapInterval > 0 && leaking && !(Number(main?.traced) >= TRACED_ENOUGH)
  return { kinds, gcShare, keptBytes: bytes, keptFrom: kept?.start ?? null, retainers, trace }
}

/**
 * @typedef {object} ReleaseRecord what the heap did in the seconds after the load, with no load on it
 * @property {number} heapUsed bytes after the last full collection asked for
 * @property {number} afterMs how long after the probe's collection at the load's end it was read
 * @property {boolean} released whether it fell back by half of what the load left alive or more
 */

/**
 * Whether what the window left alive is let go within seconds of the load's end, when there is no load: full
 * collections a second apart, until the heap falls back by half of what the load kept or the time is up. A leak keeps
 * what it took; a cache whose entries expire, or work that held its data for a while, lets it go. When it is let go,
 * the snapshots and the samples of what survives that the plan asked for are dropped: what stays is no longer there.
 * @param {import('../target/target-process.js').TargetProcess} target
 * @param {object} o
 * @param {MemoryPlan} o.plan
 * @param {{ pid: number }} o.listening
 * @param {AbortSignal} o.signal
 * @param {(message: string) => void} o.status
 * @returns {Promise<ReleaseRecord | null>}
 */
export async function watchRelease (target, o) {
  const { plan } = o
  const asked = plan.kinds.includes('retained') || plan.retainers?.reason === 'kept'
  if (!asked || plan.keptFrom === null || plan.keptBytes <= 0) return null
  const peer = await probeOf(target, o.listening.pid)
  if (peer === null) return null
  const mb = (plan.keptBytes / 1048576).toFixed(1)
  o.status(`The load left ${mb} MB alive on the heap: watching for ${RELEASE_MS / 1000} s whether the server lets it go (Ctrl-C skips)…`)
  const began = Date.now()
  /** @type {ReleaseRecord | null} */
  let last = null
  while (Date.now() - began < RELEASE_MS && !o.signal.aborted) {
    await new Promise(resolve => setTimeout(resolve, RELEASE_STEP_MS))
    const reply = await ask(target, peer, { type: COMMAND.HEAP_SETTLE }, MESSAGE.HEAP_SETTLED, 30, 'heap settle')
    if (reply === null || typeof reply.heapUsed !== 'number') break
    const released = reply.heapUsed - plan.keptFrom <= plan.keptBytes / 2
    last = { heapUsed: reply.heapUsed, afterMs: Date.now() - began, released }
    if (released) {
      plan.kinds = plan.kinds.filter(k => k !== 'retained')
      if (plan.retainers?.reason === 'kept') plan.retainers = null
      break
    }
  }
  return last
}

/**
 * The allocation samples the plan asks for, before the verdict.
 * @param {import('../target/target-process.js').TargetProcess} target
 * @param {object} o
 * @param {MemoryPlan} o.plan
 * @param {number} o.heapInterval
 * @param {{ pid: number }} o.listening
 * @param {string} o.url
 * @param {Omit<import('../../load/load.js').LoadOptions, 'url'>} o.load
 * @param {boolean} [o.observe] the window observed real traffic: the phases observe it too, and load nothing
 * @param {AbortSignal} o.signal aborting skips what is left (Ctrl-C after the window)
 * @param {(message: string) => void} o.status
 * @returns {Promise<{ allocations?: import('./allocation-phases.js').AllocationRecord }>}
 */
export async function recordMemoryPhases (target, o) {
  const { kinds, gcShare, keptBytes } = o.plan
  if (kinds.length === 0) return {}
  o.status(kinds[0] === 'allocations'
    ? `GC took ${(gcShare * 100).toFixed(0)}% of the ${o.observe ? 'window' : 'load window'}: ${o.observe ? 'observing' : 'loading'} once more with heap sampling on, to see who allocates (Ctrl-C skips)…`
    : `The ${o.observe ? 'traffic' : 'load'} left ${(keptBytes / 1048576).toFixed(1)} MB alive on the heap: ${o.observe ? 'observing' : 'loading'} once more with heap sampling on, to see where what stays is allocated (Ctrl-C skips)…`)
  return { allocations: await recordAllocations(target, { kinds, pid: o.listening.pid, url: o.url, load: o.load, observe: o.observe, interval: o.heapInterval, signal: o.signal }) }
}

/**
 * The loaded process's heap after a full collection just before the load and just after it (its probe's), or null
 * when its probe did not say.
 * @param {any} main the loaded process's main thread's 'stopped' message
 * @returns {{ start: number, end: number } | null}
 */
function keptBytes (main) {
  const start = main?.settled?.start
  const end = main?.settled?.end
  return typeof start === 'number' && typeof end === 'number' ? { start, end } : null
}
