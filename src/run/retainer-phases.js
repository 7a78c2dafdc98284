// After doctor's load, when the heap kept megabytes of it or each request cost more than the last: two more loads between three heap snapshots — hotpath
// heap's technique — so that a leak's verdict rests on what keeps objects alive and its first culprit names it. The
// load window is over: what these phases cost the server is not in any of the run's figures.
import { probeOf, runPhase, snapshot } from './heap-run.js'
import { sampleHeap } from './allocation-phases.js'

/** Seconds each phase loads at most: enough requests to tell a group that grows with them, short beside the run. */
const PHASE_SECONDS = 3

/**
 * @typedef {object} RetainerRecord what run.json keeps of the phases; the snapshots are in the run directory
 * @property {{ name: string, requests: number, duration: number, failed: string | null }[]} phases
 * @property {{ name: string, bytes: number, ms: number }[]} snapshots
 * @property {number} keptBytes what the load window left alive
 * @property {'kept' | 'cost'} reason what asked for them: the bytes kept, or a cost per request that rose
 * @property {string | null} error why they stopped short, if they did
 * @property {string} [heapRetained] the heap samples of what the two loads left alive (sampled from the first load to
 *   the last snapshot), for the loaded process's main thread; absent when they could not be taken
 */

/**
 * @param {import('./target-process.js').TargetProcess} target
 * @param {object} o
 * @param {number} o.pid the process whose heap is taken (the loaded one's main thread)
 * @param {string} o.url
 * @param {Omit<import('../load/load.js').LoadOptions, 'url'>} o.load doctor's load, shortened
 * @param {string} o.runDir
 * @param {number} o.keptBytes
 * @param {'kept' | 'cost'} o.reason
 * @param {number} o.heapInterval bytes between heap samples of what survives (0: none)
 * @param {AbortSignal} o.signal
 * @returns {Promise<RetainerRecord>}
 */
export async function recordRetainers (target, o) {
  /** @type {RetainerRecord} */
  const record = { phases: [], snapshots: [], keptBytes: o.keptBytes, reason: o.reason, error: null }
  try {
    const peer = await probeOf(target, o.pid)
    if (peer === null) throw new Error(`no probe answers in pid ${o.pid}`)
    const timeout = 300
    const take = async () => {
      const { name, bytes, ms } = await snapshot(target, peer, `retained-${record.snapshots.length + 1}.heapsnapshot`, o.runDir, timeout)
      record.snapshots.push({ name, bytes, ms })
    }
    const seconds = Math.max(1, Math.min(PHASE_SECONDS, (o.load.duration ?? PHASE_SECONDS) / 2))
    const load = { ...o.load, duration: seconds, amount: undefined, warmup: undefined }
    await take()
    // What survives the two loads is also sampled where it was allocated: the leak's second culprit, the line that
    // allocates what is kept. The samples are a by-product: without them the snapshots still blame.
    const sampling = o.heapInterval > 0 ? await sampleHeap(target, peer, 'start', { kind: 'retained', interval: o.heapInterval, pid: o.pid }).then(() => true, () => false) : false
    for (const name of /** @type {const} */ (['growth', 'settle'])) {
      if (o.signal.aborted) throw new Error('interrupted')
      const { result, ...phase } = await runPhase(name, /** @type {any} */ ({ load }), o.url, o.signal)
      record.phases.push(phase)
      if (phase.failed !== null) throw new Error(`the ${name} load failed: ${phase.failed}`)
      await take()
    }
    if (sampling) record.heapRetained = await sampleHeap(target, peer, 'stop', { kind: 'retained', interval: o.heapInterval, pid: o.pid }).catch(() => undefined)
  } catch (err) {
    record.error = String(/** @type {Error} */ (err)?.message ?? err)
  }
  return record
}
