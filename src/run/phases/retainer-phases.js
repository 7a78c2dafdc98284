// After doctor's verdict, when the heap kept megabytes of the load or each request cost more than the last: two more
// loads between three heap snapshots — hotpath heap's technique — so that a leak's verdict rests on what keeps objects
// alive and its first culprit names it. The load window is over: what these phases cost the server is not in any of
// the run's figures. A snapshot's cost grows with the heap (on a 2-core machine under load, 3–12 MB of heap a second),
// so the phases are given a budget of time: estimated before the first snapshot from the heap's size, and again after
// it from what it took; a heap they would not finish within it is not snapshotted, and the record says why.
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterWindowLoad, probeOf, runPhase, snapshot } from '../heap-run.js'
import { sampleHeap } from './allocation-phases.js'

/**
 * Bytes of heap a snapshot takes a second, before one has been timed: the slow end of what a 2-core machine under
 * load wrote (3–12 MB/s, 2026-12), so that a heap that would not fit is not started blindly.
 */
const SNAPSHOT_BYTES_PER_SECOND = 6 * 1048576
/** Reading three snapshots for what grows takes about a third of writing them (hotpath heap's reader). */
const READ_SHARE = 0.35

/**
 * @typedef {object} RetainerRecord what run.json keeps of the phases; the snapshots are in the run directory
 * @property {{ name: string, requests: number, duration: number, failed: string | null }[]} phases
 * @property {{ name: string, bytes: number, ms: number }[]} snapshots
 * @property {number} keptBytes what the load window left alive
 * @property {'kept' | 'cost'} reason what asked for them: the bytes kept, or a cost per request that rose
 * @property {string | null} error why they stopped short, if they did
 * @property {RetainerSkip} [skipped] why they were not taken, or not all: the budget, or the user
 * @property {RetainerPending} [pending] in the record written at the verdict: they are about to be taken
 * @property {string} [heapRetained] the heap samples of what the two loads left alive (sampled from the first load to
 *   the last snapshot), for the loaded process's main thread; absent when they could not be taken
 */

/**
 * @typedef {object} RetainerSkip
 * @property {'budget' | 'interrupted' | 'not-asked' | 'unfinished'} why `budget`: they would not have finished within
 *   it; `interrupted`: Ctrl-C; `not-asked`: the run could not take them (the target gone); `unfinished`: hotpath
 *   stopped (was killed) after its verdict, before them — a saved run's record says they were still to come
 * @property {number} heapBytes the heap they would have read
 * @property {number} seconds what they would have taken, estimated
 * @property {number} budget seconds they were given
 */

/**
 * @typedef {object} RetainerPending
 * @property {number} heapBytes
 * @property {number} seconds estimated
 * @property {number} budget seconds
 */

/**
 * What the snapshots and their loads will take: three snapshots of a heap that grows through the loads as it grew in
 * the window, the loads, and reading the snapshots.
 * @param {{ heapBytes: number, growthBytesPerSecond: number, phaseSeconds: number, bytesPerSecond?: number }} o
 * @returns {number} seconds
 */
export function retainerSeconds ({ heapBytes, growthBytesPerSecond, phaseSeconds, bytesPerSecond = SNAPSHOT_BYTES_PER_SECOND }) {
  const heaps = [heapBytes, heapBytes + growthBytesPerSecond * phaseSeconds, heapBytes + 2 * growthBytesPerSecond * phaseSeconds]
  const writing = heaps.reduce((a, h) => a + h / bytesPerSecond, 0)
  return writing * (1 + READ_SHARE) + 2 * phaseSeconds
}

/**
 * Seconds each of the two loads runs (heap-run.js's afterWindowLoad).
 * @param {Omit<import('../../load/load.js').LoadOptions, 'url'>} load
 */
export function retainerPhaseSeconds (load) {
  return afterWindowLoad(load).duration
}

/**
 * @param {import('../target/target-process.js').TargetProcess} target
 * @param {object} o
 * @param {number} o.pid the process whose heap is taken (the loaded one's main thread)
 * @param {string} o.url
 * @param {Omit<import('../../load/load.js').LoadOptions, 'url'>} o.load doctor's load, shortened
 * @param {boolean} [o.observe] observe the traffic the server gets instead of loading it
 * @param {string} o.runDir
 * @param {NonNullable<import('./memory-phases.js').MemoryPlan['retainers']>} o.plan
 * @param {number} o.heapInterval bytes between heap samples of what survives (0: none)
 * @param {number} o.budgetMs the most the phases may take
 * @param {AbortSignal} o.signal aborting skips what is left
 * @param {(message: string) => void} o.status
 * @returns {Promise<RetainerRecord>}
 */
export async function recordRetainers (target, o) {
  const began = Date.now()
  const load = afterWindowLoad(o.load)
  const phaseSeconds = load.duration
  const budget = Math.round(o.budgetMs / 1000)
  /** @type {RetainerRecord} */
  const record = { phases: [], snapshots: [], keptBytes: o.plan.keptBytes, reason: o.plan.reason, error: null }
  const estimate = retainerSeconds({ heapBytes: o.plan.heapBytes, growthBytesPerSecond: o.plan.growthBytesPerSecond, phaseSeconds })
  const skip = (/** @type {RetainerSkip['why']} */ why, /** @type {number} */ seconds) => {
    // (the one being written when Ctrl-C came too: its target is stopped in the middle of it)
    removeSnapshots(o.runDir)
    return { ...record, phases: [], snapshots: [], skipped: { why, heapBytes: o.plan.heapBytes, seconds: Math.round(seconds), budget } }
  }
  const what = o.plan.reason === 'kept'
    ? `what keeps the ${mb(o.plan.keptBytes)} the load left alive`
    : 'what grows with each request'
  if (estimate * 1000 > o.budgetMs) {
    o.status(`Heap snapshots not taken: the heap holds ${mb(o.plan.heapBytes)}, and three snapshots of it would take about ${Math.round(estimate)} s, beyond the ${budget} s doctor gives them (--snapshot-time)`)
    return skip('budget', estimate)
  }
  o.status(`Heap snapshots, to see ${what}: 3 snapshots of ${mb(o.plan.heapBytes)} and 2 loads of ${phaseSeconds} s, about ${Math.round(estimate)} s (at most ${budget} s, --snapshot-time; Ctrl-C skips)…`)
  try {
    const peer = await probeOf(target, o.pid)
    if (peer === null) throw new Error(`no probe answers in pid ${o.pid}`)
    const timeout = 300
    const take = async () => {
      o.status(`  snapshot ${record.snapshots.length + 1}/3 (${Math.round((Date.now() - began) / 1000)} s of about ${Math.round(estimate)} s)…`)
      // A big heap's snapshot takes long and cannot be stopped inside the target: Ctrl-C leaves it, and the target is
      // stopped with it.
      const { name, bytes, ms } = await untilAborted(snapshot(target, peer, `retained-${record.snapshots.length + 1}.heapsnapshot`, o.runDir, timeout), o.signal)
      record.snapshots.push({ name, bytes, ms })
      return ms
    }
    const first = await take()
    // The first snapshot says what this machine takes for this heap: the rest is judged by it.
    const rate = o.plan.heapBytes / Math.max(0.001, first / 1000)
    const rest = retainerSeconds({ heapBytes: o.plan.heapBytes, growthBytesPerSecond: o.plan.growthBytesPerSecond, phaseSeconds, bytesPerSecond: rate }) - first / 1000
    if (Date.now() - began + rest * 1000 > o.budgetMs) {
      o.status(`Heap snapshots stopped: the first took ${(first / 1000).toFixed(1)} s, and the rest would take about ${Math.round(rest)} s more, beyond the ${budget} s doctor gives them (--snapshot-time)`)
      return skip('budget', (Date.now() - began) / 1000 + rest)
    }
    if (o.signal.aborted) return skip('interrupted', estimate)
    // What survives the two loads is also sampled where it was allocated, and these samples replace those taken before
    // the verdict: on examples/memory-leak the load of their own right after the window charged the helper that keeps
    // the trail (inlined into the handler) to the handler in some runs, these did not. They are a by-product: without
    // them the snapshots still blame.
    const sampling = o.heapInterval > 0 ? await sampleHeap(target, peer, 'start', { kind: 'retained', interval: o.heapInterval, pid: o.pid }).then(() => true, () => false) : false
    for (const name of /** @type {const} */ (['growth', 'settle'])) {
      if (o.signal.aborted) return skip('interrupted', estimate)
      o.status(`  ${name} ${o.observe ? 'observed' : 'load'}, ${phaseSeconds} s (${Math.round((Date.now() - began) / 1000)} s of about ${Math.round(estimate)} s)…`)
      const { result, ...phase } = await runPhase(name, /** @type {any} */ ({ load, observe: o.observe }), o.url, o.signal)
      if (o.signal.aborted) return skip('interrupted', estimate)
      record.phases.push(phase)
      if (phase.failed !== null) throw new Error(`the ${name} load failed: ${phase.failed}`)
      await take()
    }
    if (sampling) record.heapRetained = await sampleHeap(target, peer, 'stop', { kind: 'retained', interval: o.heapInterval, pid: o.pid }).catch(() => undefined)
  } catch (err) {
    if (o.signal.aborted && target.exitInfo === null) return skip('interrupted', estimate)
    const exit = target.exitInfo
    record.error = exit && !exit.stoppedByUs
      ? `the target exited ${exit.signal ? `on signal ${exit.signal}` : `with code ${exit.code}`} during them`
      : String(/** @type {Error} */ (err)?.message ?? err)
  }
  return record
}

/**
 * A promise, or a rejection as soon as the signal aborts.
 * @template T
 * @param {Promise<T>} promise
 * @param {AbortSignal} signal
 * @returns {Promise<T>}
 */
function untilAborted (promise, signal) {
  if (signal.aborted) return Promise.reject(new Error('interrupted'))
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error('interrupted'))
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/**
 * Bytes as the report says them (decimal units, report/format.js), for the progress lines.
 * @param {number} bytes
 */
function mb (bytes) {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${(bytes / 1e6).toFixed(1)} MB`
}

/**
 * Removes the snapshots of phases that were skipped: the target may still be writing one when they are skipped, so
 * this runs again once it has stopped.
 * @param {string} runDir
 */
export function removeSnapshots (runDir) {
  for (let k = 1; k <= 3; k++) rmSync(join(runDir, `retained-${k}.heapsnapshot`), { force: true })
}
