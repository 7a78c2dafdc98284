// After doctor's load, the heap samples its memory verdicts blame with. Heap sampling is the dearest of doctor's
// instruments — at saturation it cost a server more of its throughput than the CPU profiler — and its samples answer
// only the memory verdicts, so the load window runs without it, and a server that neither spends its time in GC nor
// keeps what it allocates never pays for it. When the window's GC time asks who makes the garbage, one short load
// samples every allocation, collected or not (`allocations`); when the window left megabytes alive, what survives is
// sampled (`retained`): through the retainer phases' loads when they run (retainer-phases.js), else in a load of its
// own. What these phases cost the server is in none of the run's figures: the window is over.
import { afterWindowLoad, ask, probeOf, runPhase } from '../heap-run.js'
import { COMMAND, MESSAGE } from '../../probe-protocol.js'

/** Bytes between samples of what survives: 8 KiB, hundreds of samples in the megabytes a leak keeps in a phase. */
const RETAINED_INTERVAL = 8 * 1024

/** @typedef {'allocations' | 'retained'} SampleKind */

/**
 * @typedef {object} AllocationRecord what run.json keeps of the phases
 * @property {SampleKind[]} kinds the samples asked for
 * @property {{ name: SampleKind, requests: number, duration: number, failed: string | null }[]} phases
 * @property {{ heapAllocations?: string, heapRetained?: string }} files heap profiles written to the run directory,
 *   for the loaded process's main thread
 * @property {number} pid the process sampled (the loaded one's main thread)
 * @property {string | null} error why they stopped short, if they did
 */

/**
 * @param {import('../target/target-process.js').TargetProcess} target
 * @param {object} o
 * @param {SampleKind[]} o.kinds
 * @param {number} o.pid
 * @param {string} o.url
 * @param {Omit<import('../../load/load.js').LoadOptions, 'url'>} o.load doctor's load, shortened
 * @param {boolean} [o.observe] observe the traffic the server gets instead of loading it
 * @param {number} o.interval bytes between heap samples
 * @param {AbortSignal} o.signal
 * @returns {Promise<AllocationRecord>}
 */
export async function recordAllocations (target, o) {
  /** @type {AllocationRecord} */
  const record = { kinds: o.kinds, phases: [], files: {}, pid: o.pid, error: null }
  try {
    const peer = await probeOf(target, o.pid)
    if (peer === null) throw new Error(`no probe answers in pid ${o.pid}`)
    const load = afterWindowLoad(o.load)
    for (const kind of o.kinds) {
      if (o.signal.aborted) throw new Error('interrupted')
      // What survives a full collection after a 2 s load is a few megabytes: at the allocation phase's interval that is
      // a handful of samples, too few to tell the line that keeps them from its caller. A finer interval gives hundreds.
      const interval = kind === 'retained' ? Math.min(o.interval, RETAINED_INTERVAL) : o.interval
      await sampleHeap(target, peer, 'start', { kind, interval, pid: o.pid })
      const { result, ...phase } = await runPhase(/** @type {any} */ (kind), /** @type {any} */ ({ load, observe: o.observe }), o.url, o.signal)
      record.phases.push({ ...phase, name: kind })
      const name = await sampleHeap(target, peer, 'stop', { kind, interval, pid: o.pid })
      if (phase.failed !== null) throw new Error(`the ${kind} load failed: ${phase.failed}`)
      if (kind === 'allocations') record.files.heapAllocations = name
      else record.files.heapRetained = name
    }
  } catch (err) {
    record.error = String(/** @type {Error} */ (err)?.message ?? err)
  }
  return record
}

/**
 * Starts or stops the probe's heap sampling in the loaded process's main thread; a stop writes the profile under the
 * name the thread's own would have (`heap-<kind>-<pid>-0.heapprofile`) and returns it. Throws when the probe cannot.
 * @param {import('../target/target-process.js').TargetProcess} target
 * @param {import('../target/probe-channel.js').Peer} peer
 * @param {'start' | 'stop'} what
 * @param {{ kind: SampleKind, interval: number, pid: number }} o
 * @returns {Promise<string>}
 */
export async function sampleHeap (target, peer, what, o) {
  const name = `heap-${o.kind}-${o.pid}-0.heapprofile`
  const reply = what === 'start'
    ? await ask(target, peer, { type: COMMAND.HEAP_SAMPLING_START, interval: o.interval, includeCollected: o.kind === 'allocations' }, MESSAGE.HEAP_SAMPLING_STARTED, 30, 'heap sampling')
    : await ask(target, peer, { type: COMMAND.HEAP_SAMPLING_STOP, name, collect: o.kind === 'retained' }, MESSAGE.HEAP_SAMPLING_DONE, 60, 'heap sampling')
  if (reply === null) throw new Error('the target exited')
  if (reply.error) throw new Error(String(reply.error))
  return name
}
