// The profiles of one load window in one thread: a CPU profile and, on the main thread, V8's GC trace events; stopped
// and written to the run directory when the load stops, or at once when the process exits during it. The heap is
// sampled after the window, in phases of its own (src/run/memory-phases.js), where its cost moves no figure.

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isMainThread } from 'node:worker_threads'
import { startCpuProfile, startGcTrace } from '../profile/capture.js'
import { traceEventKind } from '../sampling/gc.js'

/** @typedef {import('./probe.js').ProbeOptions} ProbeOptions */
/** @typedef {import('./probe.js').ProfileHandle} ProfileHandle */
/** @typedef {import('./event-log.js').EventLog} EventLog */

export class LoadProfiles {
  /** @type {ProfileHandle | null} */
  cpu = null
  /** @type {{ stop: () => Promise<import('../profile/capture.js').GcTrace> } | null} */
  gcTrace = null
  /** @type {number | null} ms of GC pauses in the last load window, from the trace (main thread only) */
  gcMs = null

  /**
   * @param {ProbeOptions} options
   * @param {string} name this process/thread's name in file names
   * @param {import('../sampling/sampler.js').Sampler} sampler told to read the thread's own time while the CPU profiler
   *   runs
   */
  constructor (options, name, sampler) {
    this.options = options
    this.name = name
    this.sampler = sampler
  }

  async start () {
    if (isMainThread && this.options.runtime !== false) this.gcTrace = await startGcTrace().catch(() => null)
    if (this.options.profileInterval > 0) this.cpu = await startCpuProfile({ interval: this.options.profileInterval }).catch(() => null)
    // The profiler makes libuv misread utilisation; the thread's own time corrects it (see profile-utilization.js).
    if (this.cpu) this.sampler.threadTime = true
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
    log.write({ type: 'profiles', time: Date.now(), ...files })
  }

  /**
   * Stops the profiler at once and writes what it holds: the process is exiting.
   * @param {EventLog} log
   */
  stopSync (log) {
    const cpu = this.cpu?.stopSync?.() ?? null
    this.cpu = null
    if (cpu) log.write({ type: 'profiles', time: Date.now(), cpu: this.writeJson(`cpu-${this.name}.cpuprofile`, cpu) })
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
