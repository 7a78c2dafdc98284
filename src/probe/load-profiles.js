// The profiles of one load window in one thread: a CPU profile, heap sampling (every allocation for the first part of
// the load, then only what survives) and, on the main thread, V8's GC trace events; stopped and written to the run
// directory when the load stops, or at once when the process exits during it.

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isMainThread } from 'node:worker_threads'
import { startCpuProfile, startGcTrace, startHeapSampling } from '../profile/capture.js'
import { traceEventKind } from '../sampling/gc.js'

/** @typedef {import('./probe.js').ProbeOptions} ProbeOptions */
/** @typedef {import('./probe.js').ProfileHandle} ProfileHandle */
/** @typedef {import('./event-log.js').EventLog} EventLog */

export class LoadProfiles {
  /** @type {ProfileHandle | null} */
  cpu = null
  /** @type {ProfileHandle | null} */
  heap = null
  /** @type {{ stop: () => Promise<import('../profile/capture.js').GcTrace> } | null} */
  gcTrace = null
  /** @type {'allocations' | 'retained'} what the running heap sampler records */
  heapKind = /** @type {'allocations' | 'retained'} */ ('allocations')
  /** @type {Record<string, string>} heap profiles written so far in this load */
  heapFiles = {}
  /** @type {NodeJS.Timeout | null} */
  heapTimer = null
  /** @type {number | null} ms of GC pauses in the last load window, from the trace (main thread only) */
  gcMs = null

  /**
   * @param {ProbeOptions} options
   * @param {string} name this process/thread's name in file names
   * @param {import('../sampling/sampler.js').Sampler} sampler told to read the thread's own time while the CPU profiler
   *   runs
   * @param {() => boolean} loading whether the load is still on
   */
  constructor (options, name, sampler, loading) {
    this.options = options
    this.name = name
    this.sampler = sampler
    this.loading = loading
  }

  async start () {
    const { profileInterval, heapInterval } = this.options
    if (isMainThread && this.options.runtime !== false) this.gcTrace = await startGcTrace().catch(() => null)
    if (profileInterval > 0) this.cpu = await startCpuProfile({ interval: profileInterval }).catch(() => null)
    // The profiler makes libuv misread utilisation; the thread's own time corrects it (see profile-utilization.js).
    if (this.cpu) this.sampler.threadTime = true
    if (heapInterval > 0) {
      // One heap sampler per isolate, two questions: the first part of the load samples every allocation (who makes
      // the garbage: GC pressure), the rest only what survives (who keeps memory: leaks).
      this.heapFiles = {}
      this.heap = await startHeapSampling({ interval: heapInterval, includeCollected: true }).catch(() => null)
      this.heapTimer = setTimeout(() => { this.switchHeapSampling().catch(() => {}) }, this.options.heapSplit)
      this.heapTimer.unref()
    }
  }

  async switchHeapSampling () {
    if (!this.loading() || !this.heap) return
    const heap = this.heap
    this.heap = null
    await this.saveHeap(heap, 'allocations')
    if (this.loading()) {
      this.heap = await startHeapSampling({ interval: this.options.heapInterval }).catch(() => null)
      this.heapKind = 'retained'
    }
  }

  /**
   * @param {ProfileHandle} handle
   * @param {'allocations' | 'retained'} kind
   */
  async saveHeap (handle, kind) {
    const profile = await handle.stop().catch(() => null)
    if (profile) {
      const file = this.writeJson(`heap-${kind}-${this.name}.heapprofile`, profile)
      if (file) this.heapFiles[kind] = file
    }
  }

  /**
   * Stops the profilers and writes them, then their event.
   * @param {EventLog} log
   */
  async stop (log) {
    if (this.gcTrace) {
      const trace = await this.gcTrace.stop().catch(() => null)
      this.gcTrace = null
      this.gcMs = null
      if (trace) {
        const events = gcEvents(trace.events)
        log.write({ type: 'gc-trace', tid: trace.tid, events })
        let us = 0
        for (const e of events) us += e[1]
        this.gcMs = us / 1000
      }
    }
    /** @type {{ cpu?: string }} */
    const files = {}
    this.sampler.threadTime = false
    if (this.cpu) {
      const profile = await this.cpu.stop().catch(() => null)
      this.cpu = null
      if (profile) files.cpu = this.writeJson(`cpu-${this.name}.cpuprofile`, profile)
    }
    if (this.heapTimer) clearTimeout(this.heapTimer)
    if (this.heap) {
      const heap = this.heap
      this.heap = null
      await this.saveHeap(heap, this.heapKind)
    }
    this.heapKind = /** @type {'allocations' | 'retained'} */ ('allocations')
    log.write({ type: 'profiles', time: Date.now(), ...files, ...(this.heapFiles.allocations ? { heapAllocations: this.heapFiles.allocations } : {}), ...(this.heapFiles.retained ? { heapRetained: this.heapFiles.retained } : {}) })
  }

  /**
   * Stops the profilers at once and writes what they hold: the process is exiting.
   * @param {EventLog} log
   */
  stopSync (log) {
    /** @type {{ cpu?: string, heapAllocations?: string, heapRetained?: string }} */
    const files = {}
    const cpu = this.cpu?.stopSync?.() ?? null
    this.cpu = null
    if (cpu) files.cpu = this.writeJson(`cpu-${this.name}.cpuprofile`, cpu)
    const heap = this.heap?.stopSync?.() ?? null
    this.heap = null
    if (heap) {
      const file = this.writeJson(`heap-${this.heapKind}-${this.name}.heapprofile`, heap)
      if (file) this.heapFiles[this.heapKind] = file
    }
    if (files.cpu || heap) {
      log.write({ type: 'profiles', time: Date.now(), ...files, ...(this.heapFiles.allocations ? { heapAllocations: this.heapFiles.allocations } : {}), ...(this.heapFiles.retained ? { heapRetained: this.heapFiles.retained } : {}) })
    }
  }

  /**
   * @param {string} name
   * @param {object} data
   * @returns {string | undefined} the file name, when written
   */
  writeJson (name, data) {
    try {
      writeFileSync(join(this.options.runDir, name), JSON.stringify(data))
      return name
    } catch {
      return undefined
    }
  }
}

/**
 * GC pauses as [start µs (monotonic), duration µs, index into GC_KINDS], the pauses only.
 * @param {{ ts: number, dur: number, name: string }[]} events
 * @returns {number[][]}
 */
function gcEvents (events) {
  const out = []
  for (const e of events) {
    const kind = traceEventKind(e.name)
    if (kind >= 0) out.push([e.ts, e.dur, kind])
  }
  return out
}
