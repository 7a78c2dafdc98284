// The profiles of one load window in one thread: a CPU profile (of all the window, or of the slice hotpath asks for)
// and, on the main thread, V8's GC trace events; written to the run directory when the load stops, or at once when the
// process exits during it. The heap is sampled after the window, in phases of its own (src/run/phases/memory-phases.js), where
// its cost moves no figure.

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isMainThread } from 'node:worker_threads'
import { startCpuProfile, startGcTrace } from '../profile/capture.js'
import { traceEventKind } from '../sampling/gc.js'
import { RECORD } from '../probe-protocol.js'

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
  /** whether the load window is open: a slice's profiler starts only then */
  active = false
  /** @type {NodeJS.Timeout | null} starts or ends the CPU profile's slice */
  sliceTimer = null
  /** @type {Promise<object | null> | null} the CPU profile of a slice that ended, until it is written */
  ended = null
  /** @type {object | null} the same, once it arrived (what an exit writes, synchronously) */
  endedProfile = null
  /** @type {((on: boolean) => void) | null} told as the CPU profiler begins to start and once it has stopped */
  onToggle = null

  /**
   * @param {ProbeOptions} options
   * @param {string} name this process/thread's name in file names
   */
  constructor (options, name) {
    this.options = options
    this.name = name
  }

  /**
   * @param {{ from: number, to: number } | null} [slice] epoch ms: the CPU profiler runs between them only (see
   *   src/run/profile-interval.js for why); null: from now until the load stops
   */
  async start (slice = null) {
    this.active = true
    if (isMainThread && this.options.runtime !== false) this.gcTrace = await startGcTrace().catch(() => null)
    if (!(this.options.profileInterval > 0)) return
    // A worker thread busy from its first task may not return to its event loop, where the slice's timers run, before
    // the load ends (Node handles a port's queued messages in a batch, and the load keeps queueing more): all the window.
    if (slice === null || !isMainThread) return await this.startCpu()
    const now = Date.now()
    // A thread that joins after the slice (a cluster worker forked late in the load) has nothing to profile.
    if (now >= slice.to) return
    const begin = () => {
      this.sliceTimer = null
      this.startCpu().then(() => {
        if (this.cpu === null) return
        // The load stopped while the profiler started: it must not run on.
        if (!this.active) return this.endCpu()
        this.sliceTimer = setTimeout(() => {
          this.sliceTimer = null
          this.endCpu()
        }, Math.max(0, slice.to - Date.now()))
        this.sliceTimer.unref()
      }, () => {})
    }
    if (slice.from <= now) begin()
    else {
      this.sliceTimer = setTimeout(begin, slice.from - now)
      this.sliceTimer.unref()
    }
  }

  async startCpu () {
    // Said before it starts: starting it costs the thread time (V8 logs the code it has compiled).
    this.#toggled(true)
    this.cpu = await startCpuProfile({ interval: this.options.profileInterval }).catch(() => null)
    if (this.cpu === null) this.#toggled(false)
  }

  /** @param {boolean} on */
  #toggled (on) {
    try { this.onToggle?.(on) } catch {}
  }

  /** Stops the CPU profiler (its slice is over, or the load); the profile is written when the load stops. */
  endCpu () {
    const cpu = this.cpu
    if (cpu === null) return
    this.cpu = null
    // Said once it has stopped: the profile is serialised on the thread before the promise settles.
    this.ended = cpu.stop().then((profile) => (this.endedProfile = profile), () => null).finally(() => this.#toggled(false))
  }

  /** The window closed: no slice starts or ends by its timer any more. */
  endSlice () {
    this.active = false
    if (this.sliceTimer !== null) clearTimeout(this.sliceTimer)
    this.sliceTimer = null
  }

  /**
   * Stops the profilers and writes them, then their event.
   * @param {EventLog} log
   */
  async stop (log) {
    this.endSlice()
    if (this.gcTrace) {
      const trace = await this.gcTrace.stop().catch(() => null)
      this.gcTrace = null
      this.gcMs = null
      if (trace) {
        const events = gcEvents(trace.events)
        log.write({ type: RECORD.GC_TRACE, tid: trace.tid, events })
        let us = 0
        for (const e of events) us += e[1]
        this.gcMs = us / 1000
      }
    }
    /** @type {{ cpu?: string }} */
    const files = {}
    this.endCpu()
    const profile = await this.ended
    this.ended = null
    this.endedProfile = null
    if (profile) files.cpu = this.writeJson(`cpu-${this.name}.cpuprofile`, profile)
    log.write({ type: RECORD.PROFILES, time: Date.now(), ...files })
  }

  /**
   * Stops the profiler at once and writes what it holds: the process is exiting.
   * @param {EventLog} log
   */
  stopSync (log) {
    this.endSlice()
    // A slice that ended before the exit left its profile; one still running is stopped now.
    const cpu = this.cpu?.stopSync?.() ?? this.endedProfile
    this.cpu = null
    this.endedProfile = null
    if (!cpu) return
    // What the thread recorded is flushed before the profile is written: a worker thread ended by its process's exit
    // can be cut off at any point of its own exit, and writing a profile takes a while. If the file is then left
    // short, the analysis says so.
    const name = `cpu-${this.name}.cpuprofile`
    log.write({ type: RECORD.PROFILES, time: Date.now(), cpu: name })
    log.flush()
    this.writeJson(name, cpu)
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
