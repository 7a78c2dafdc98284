// After doctor's load window, the heap phases its figures ask for, decided the moment the probes report the window's
// end: allocation samples when GC took a good share of the window (allocation-phases.js), and, when the window left
// megabytes alive or each request cost more than the last, the retainer phases' snapshots with samples of what
// survives (retainer-phases.js) — or, when snapshots are not wanted, a load of survivor samples alone.
import { recordAllocations } from './allocation-phases.js'
import { recordRetainers } from './retainer-phases.js'

/**
 * @typedef {object} MemoryPhaseOptions
 * @property {number} heapInterval bytes between heap samples (0: no samples)
 * @property {number} minGcShare GC share of the window (its pauses ÷ its length) that asks for allocation samples
 * @property {number} minKeptBytes what the window must leave alive (bytes after full collections, and share of where it
 *   started) to ask for what survives
 * @property {number} minKeptRatio
 * @property {boolean} snapshots take heap snapshots between two more loads, to see what keeps what survives
 * @property {(window: { pid: number, port: number, start: number, end: number }) => boolean} [costRose] whether each
 *   request cost more than the last during the window (state that grows by a little per request): asks for snapshots
 */

/**
 * @param {import('./target-process.js').TargetProcess} target
 * @param {object} o
 * @param {MemoryPhaseOptions} o.phases
 * @param {any[]} o.stopped the probes' 'stopped' messages
 * @param {{ pid: number, port: number }} o.listening
 * @param {{ start: number, end: number }} o.window
 * @param {string} o.url
 * @param {Omit<import('../load/load.js').LoadOptions, 'url'>} o.load
 * @param {string} o.runDir
 * @param {AbortSignal} o.signal
 * @param {(message: string) => void} o.status
 * @returns {Promise<{ retainers?: import('./retainer-phases.js').RetainerRecord, allocations?: import('./allocation-phases.js').AllocationRecord }>}
 */
export async function recordMemoryPhases (target, o) {
  const main = o.stopped.find(m => m.pid === o.listening.pid && m.threadId === 0)
  const { heapInterval, minGcShare } = o.phases
  /** @type {Awaited<ReturnType<typeof recordMemoryPhases>>} */
  const out = {}
  const gcShare = Number(main?.gcMs) / Number(main?.windowMs)
  const kept = keptBytes(main)
  const bytes = kept === null ? 0 : kept.end - kept.start
  const leaking = kept !== null && bytes >= o.phases.minKeptBytes && bytes >= o.phases.minKeptRatio * kept.start
  /** @type {import('./allocation-phases.js').SampleKind[]} */
  const kinds = []
  if (heapInterval > 0 && gcShare >= minGcShare) kinds.push('allocations')
  // With snapshots, what survives is sampled through their loads instead.
  if (heapInterval > 0 && leaking && !o.phases.snapshots) kinds.push('retained')
  if (kinds.length > 0) {
    o.status(kinds[0] === 'allocations'
      ? `GC took ${(gcShare * 100).toFixed(0)}% of the load window: loading once more with heap sampling on, to see who allocates…`
      : `The load left ${(bytes / 1048576).toFixed(1)} MB alive on the heap: loading once more with heap sampling on, to see where what stays is allocated…`)
    out.allocations = await recordAllocations(target, { kinds, pid: o.listening.pid, url: o.url, load: o.load, interval: heapInterval, signal: o.signal })
  }
  if (o.signal.aborted || !o.phases.snapshots) return out
  const rising = !leaking && o.phases.costRose?.({ pid: o.listening.pid, port: o.listening.port, start: o.window.start, end: o.window.end }) === true
  if (leaking || rising) {
    o.status(leaking
      ? `The load left ${(bytes / 1048576).toFixed(1)} MB alive on the heap: loading twice more between heap snapshots, to see what keeps it…`
      : 'Each request cost more CPU than the last: loading twice more between heap snapshots, to see what grows with them…')
    out.retainers = await recordRetainers(target, { pid: o.listening.pid, url: o.url, load: o.load, runDir: o.runDir, keptBytes: bytes, reason: leaking ? 'kept' : 'cost', heapInterval, signal: o.signal })
  }
  return out
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
