import { performance } from 'node:perf_hooks'
import v8 from 'node:v8'
import { DelayHistogram, resolutionFor } from './delay.js'
import { GcTally, NO_GC_STATS } from './gc.js'
import { MemoryReader } from './memory.js'
import { ThreadTimeReader } from './thread-time.js'
import { callSafely, positiveOption } from './warn.js'

/** @typedef {import('./delay.js').DelayStats} DelayStats */
/** @typedef {import('./gc.js').GcStats} GcStats */
/** @typedef {import('./gc.js').GcKind} GcKind */

/**
 * @typedef {object} Sample one interval of the thread's life
 * @property {number} time epoch ms at the end of the interval
 * @property {number} interval ms the interval actually lasted
 * @property {number} [pace] the sampler's pace when it was more than 1 (see `Sampler.pace`): the sample stands for
 *   that many intervals, and weighs as many where samples are counted (delay percentiles)
 * @property {DelayStats} delay event-loop delay over this interval (zeros when no tick was recorded)
 * @property {number} utilization event-loop utilisation over the interval, 0..1
 * @property {{ user: number, system: number, span?: number }} cpu CPU ms the whole process used during the interval.
 *   With `cpuEvery` > 1 the CPU is read on every cpuEvery-th sample only: that sample carries what was used since the
 *   last read and `span`, the ms it covers; the samples between carry zeros and `span: 0` (see run-data.js, which
 *   spreads each read over the samples it covers)
 * @property {{ rss: number, heapUsed: number, heapTotal: number, external: number, arrayBuffers: number }} memory bytes
 *   at the end of the interval; rss is the whole process's, the rest this thread's heap. rss and arrayBuffers are read
 *   on every 10th sample of a running sampler and repeated between (see memory.js)
 * @property {GcStats} gc this thread's GCs that ended in the interval
 * @property {number} [own] ms the sampler's timer spent in the samples before this one (taking them and handling them:
 *   `onSample`), and whatever its owner added (`addOwn`): the measuring's own work, which the thread's figures (CPU,
 *   utilisation) include and the analysis takes out of them. Only on samples whose timer had that time to report
 * @property {{ cpu: number, wait: number, span: number }} [thread] ms this thread spent on a CPU and waiting in the run
 *   queue for one (Linux only), read with the CPU: on the samples that read it, over the `span` ms since the last read
 * @property {Record<string, number>} [resources] active resources by type (process.getActiveResourcesInfo()), only on
 *   samples where `slowInterval` elapsed
 * @property {Record<string, number>} [heapSpaces] used bytes per V8 heap space, same cadence
 */

/**
 * @typedef {object} SamplerOptions
 * @property {number} [interval] ms between samples (default 10)
 * @property {number} [slowInterval] ms between the costlier measures: resources and heap spaces (default 1000)
 * @property {number} [resolution] ms between event-loop delay ticks (default: a tenth of the interval, 1..10). At
 *   the interval or more, Node's delay monitor would tick once a sample, as the sampler's own timer does: the delay is
 *   then that timer's lateness, one tick a sample, and no monitor is made (see `start`)
 * @property {(sample: Sample) => void} [onSample] called with each sample the timer takes
 * @property {number} [cpuEvery] read the process's CPU time on every n-th sample only (default 1, every sample): a
 *   read is a getrusage() system call, ~30 µs in the sample of a busy server
 * @property {boolean} [exactDelay] compute the delay percentiles and mean of every sample (default true); false
 *   bounds them by max while every tick is under a millisecond late, which saves walking the histogram's buckets
 *   (~35 µs in the sample of a busy server; see DelayHistogram)
 * @property {boolean} [threadTime] add the thread's own CPU and run-queue time to each sample (default false; see
 *   the `threadTime` property)
 * @property {boolean} [gc] count GCs with a PerformanceObserver (default true); the doctor's probe reads them from
 *   V8's trace events instead, which cost the thread nothing per GC, and leaves `gc` at zeros
 */

/**
 * Measures the thread it runs in: event-loop delay and utilisation, CPU, memory, GC and active resources, one Sample
 * per interval. The doctor's probe and hotpath/runtime's monitor both sample through this class.
 *
 * In a worker thread it measures that thread's loop, heap and GCs; CPU time and RSS are always the whole process's.
 * Its timer is unref'd, and nothing here throws into the host: a throwing `onSample` becomes a process warning.
 */
export class Sampler {
  #interval
  #pace = 1
  #slowInterval
  #countGc
  #exactDelay
  #cpuEvery
  #cpuCountdown = 0
  #lastCpuAt = performance.now()
  #wantThreadTime
  #resolution
  /** @type {((sample: Sample) => void) | undefined} */
  #onSample
  /** @type {DelayHistogram | null} */
  #delay = null
  #cleanReads = 0
  #gc = new GcTally()
  /** @type {ReturnType<typeof setInterval> | null} */
  #timer = null
  #last = performance.now()
  #lastSlow = -Infinity
  #lastCpu = process.cpuUsage()
  #lastElu = performance.eventLoopUtilization()
  /** @type {ThreadTimeReader | null} */
  #threadTime = null
  /** @type {MemoryReader | null} */
  #memory = null
  /** @type {import('./thread-time.js').ThreadTime | null} */
  #lastThread = null
  /** ms of the sampler's own work not yet reported in a sample */
  #own = 0

  /** @param {SamplerOptions} [opts] */
  constructor (opts = {}) {
    const o = opts !== null && typeof opts === 'object' ? opts : {}
    this.#interval = positiveOption(o.interval, 10, 'Sampler interval')
    this.#slowInterval = positiveOption(o.slowInterval, 1000, 'Sampler slowInterval')
    this.#resolution = Math.max(1, Math.round(positiveOption(o.resolution, resolutionFor(this.#interval), 'Sampler resolution')))
    this.#onSample = typeof o.onSample === 'function' ? o.onSample : undefined
    this.#countGc = o.gc !== false
    this.#exactDelay = o.exactDelay !== false
    this.#cpuEvery = Math.max(1, Math.round(positiveOption(o.cpuEvery, 1, 'Sampler cpuEvery')))
    this.#wantThreadTime = o.threadTime === true
  }

  /** ms between samples at pace 1. */
  get interval () { return this.#interval }

  /**
   * How many intervals the timer lets pass between samples (1: every interval). A thread that is busy all the time
   * has the same figures every 10 ms, and pays for each sample in throughput: ~100 µs of its core on a 2-core VM, with
   * the caches cold each time — 2% of a saturated server held to half a core at 100 samples a second. Its owner (the
   * doctor's probe) stretches the cadence while the thread is saturated and puts it back as soon as it is not. The
   * delay stays what it was: each sample's is its tick's lateness, whatever the cadence. With a delay monitor (a
   * resolution under the interval) the monitor's ticks stay as they were; the samples only come less often.
   */
  get pace () { return this.#pace }

  set pace (n) {
    const pace = Math.max(1, Math.round(Number(n) || 1))
    if (pace === this.#pace) return
    this.#pace = pace
    // The CPU is read about as often in time as before; a countdown already under the new spacing keeps counting.
    this.#cpuCountdown = Math.min(this.#cpuCountdown, this.#cpuSpacing())
    if (this.#timer !== null) this.#arm()
  }

  /** Whether the timer runs. */
  get running () { return this.#timer !== null }

  /**
   * Counts `ms` of the owner's measuring work (writing samples out, say) as the sampler's own, reported with the next
   * sample's `own`.
   * @param {number} ms
   */
  addOwn (ms) {
    if (ms > 0) this.#own += ms
  }

  /**
   * Whether samples carry the thread's own CPU and run-queue time (`thread`; Linux). Off by default: only the doctor
   * needs it, to correct utilisation while the CPU profiler runs, and a read is a system call and a parse per sample.
   */
  get threadTime () { return this.#threadTime !== null }

  set threadTime (on) {
    if (on === (this.#threadTime !== null)) return
    if (on) {
      this.#threadTime = new ThreadTimeReader()
      // Read first at the next read of the CPU, so that each reading spans what the CPU's does.
      this.#lastThread = null
    } else {
      this.#threadTime?.close()
      this.#threadTime = null
      this.#lastThread = null
    }
  }

  /**
   * Begins measuring; the first sample covers the time from now.
   *
   * With a resolution under the interval, Node's delay monitor records several ticks a sample. At the interval or
   * more it would record one, the same lateness as the sampler's own timer, for the price of a second timer (a second
   * wake-up of an idle loop) and a histogram of ~0.5 MB cleared at every late tick — which is every tick of a
   * saturated server, and evicts the server's own data from the CPU cache. So the sampler's timer is the tick then.
   */
  start () {
    if (this.#timer !== null) return
    if (this.#resolution < this.#interval) {
      this.#delay = new DelayHistogram(this.#resolution, { exact: this.#exactDelay })
      this.#delay.enable()
    }
    this.#memory = new MemoryReader()
    if (this.#countGc) this.#gc.start()
    if (this.#wantThreadTime) this.threadTime = true
    this.#rebase()
    this.#arm()
  }

  /**
   * (Re)starts the timer at the current pace. Called from within a tick (the owner sets the pace as it reads a sample)
   * the next tick is due one period after this one, which is what its lateness is measured against.
   */
  #arm () {
    if (this.#timer !== null) clearInterval(this.#timer)
    this.#timer = setInterval(() => {
      const sample = this.#take(true)
      callSafely('Sampler onSample', this.#onSample, sample)
      // The sample's own cost goes into the next one: this one is written. Wall time is CPU time here (synchronous
      // work), but for a sample a busy machine preempted: capped, so that a preemption is not taken for the app's time.
      this.#own += Math.min(OWN_CAP_MS, performance.now() - this.#last)
    }, this.#interval * this.#pace)
    this.#timer.unref()
  }

  /** Samples between reads of the CPU at the current pace. */
  #cpuSpacing () {
    return Math.max(1, Math.round(this.#cpuEvery / this.#pace))
  }

  /** Stops measuring and releases the histogram and the GC observer. */
  stop () {
    if (this.#timer === null) return
    clearInterval(this.#timer)
    this.#timer = null
    this.#delay?.disable()
    this.#delay = null
    this.#memory = null
    this.#gc.stop()
    this.#gc.take()
    this.threadTime = false
  }

  /**
   * Closes the current interval and returns its sample; the next interval starts now. Works when stopped too
   * (delay and GC are then zeros: nothing records them).
   * @returns {Sample}
   */
  sample () {
    return this.#take(false)
  }

  /** @param {boolean} onTime whether the interval timer called: its lateness then measures the loop too */
  #take (onTime) {
    const now = performance.now()
    const elu = performance.eventLoopUtilization()
    const utilization = performance.eventLoopUtilization(elu, this.#lastElu).utilization
    this.#lastElu = elu
    const memory = this.#memory !== null ? this.#memory.read() : process.memoryUsage()
    /** @type {Sample} */
    const sample = {
      time: Date.now(),
      interval: Math.round((now - this.#last) * 1000) / 1000,
      delay: this.#readDelay(onTime ? now - this.#last - this.#interval * this.#pace : 0),
      utilization: utilization > 0 ? Math.min(1, utilization) : 0,
      cpu: this.#readCpu(now, onTime),
      memory: {
        rss: memory.rss,
        heapUsed: memory.heapUsed,
        heapTotal: memory.heapTotal,
        external: memory.external,
        arrayBuffers: memory.arrayBuffers
      },
      gc: this.#countGc ? this.#gc.take() : NO_GC_STATS
    }
    if (onTime && this.#pace > 1) sample.pace = this.#pace
    if (this.#own > 0) {
      sample.own = round3(this.#own)
      this.#own = 0
    }
    // On the samples that read the CPU: each read is a system call and a parse, ~25 µs in the sample of a busy server
    // (its code is out of the cache by the next sample), and both uses add the figures up over many samples.
    if (this.#threadTime !== null && sample.cpu.span !== 0) {
      const thread = this.#threadTime.read()
      if (thread !== null && this.#lastThread !== null) {
        sample.thread = { cpu: round3(thread.cpu - this.#lastThread.cpu), wait: round3(thread.wait - this.#lastThread.wait), span: sample.cpu.span ?? sample.interval }
      }
      this.#lastThread = thread
    }
    if (now - this.#lastSlow >= this.#slowInterval - 1) {
      this.#lastSlow = now
      sample.resources = activeResources()
      sample.heapSpaces = heapSpaces()
    }
    this.#last = now
    return sample
  }

  /**
   * @param {number} now
   * @param {boolean} onTime a sample taken on demand always reads, so that it closes the span
   * @returns {Sample['cpu']}
   */
  #readCpu (now, onTime) {
    const every = this.#cpuSpacing()
    if (every > 1 && onTime && --this.#cpuCountdown > 0) return { user: 0, system: 0, span: 0 }
    this.#cpuCountdown = every
    const cpuNow = process.cpuUsage()
    const last = this.#lastCpu
    this.#lastCpu = cpuNow
    /** @type {Sample['cpu']} */
    const cpu = { user: (cpuNow.user - last.user) / 1000, system: (cpuNow.system - last.system) / 1000 }
    // A sampler that reads the CPU on fewer than every sample says what each read spans, at whatever pace.
    if (this.#cpuEvery > 1) cpu.span = round3(now - this.#lastCpuAt)
    this.#lastCpuAt = now
    return cpu
  }

  /** @param {number} lateness ms the interval timer fired late, 0 when unknown */
  #readDelay (lateness) {
    const delay = this.#delay
    if (delay === null) {
      const d = this.#timer !== null && lateness > 0 ? round3(lateness) : 0
      return { min: d, mean: d, p50: d, p90: d, p99: d, max: d }
    }
    // Lateness under a resolution is timer granularity, not a busy loop.
    const stats = delay.read(lateness > this.#resolution ? lateness : 0)
    // Node's delay histogram spans 1 ns to 2^63 ns, so a reset clears ~0.5 MB, which also evicts the host's own data
    // from the CPU cache: the biggest single cost of a sample. While the loop keeps its ticks on time it is reset only
    // every CLEAN_RESETS-th sample — a few on-time ticks from the samples before do not change what a sample says (max
    // under 1 ms) — and as soon as a tick comes late, so that the late tick is counted in exactly one sample.
    if (stats.max >= 1 || ++this.#cleanReads >= CLEAN_RESETS) {
      delay.reset()
      this.#cleanReads = 0
    }
    return stats
  }

  #rebase () {
    this.#last = performance.now()
    this.#lastSlow = -Infinity
    this.#lastCpu = process.cpuUsage()
    this.#lastCpuAt = this.#last
    this.#cpuCountdown = this.#cpuSpacing()
    this.#lastElu = performance.eventLoopUtilization()
    this.#lastThread = this.#threadTime?.read() ?? null
    this.#gc.take()
  }
}

/** ms of one sample's work counted as the sampler's own at most: a sample takes ~0.1 ms. */
const OWN_CAP_MS = 2

/** Samples between resets of the delay histogram while every tick is on time. */
const CLEAN_RESETS = 10

/** @returns {Record<string, number>} */
function activeResources () {
  /** @type {Record<string, number>} */
  const counts = {}
  try {
    for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1
  } catch {}
  return counts
}

/** @returns {Record<string, number>} */
function heapSpaces () {
  /** @type {Record<string, number>} */
  const used = {}
  try {
    for (const space of v8.getHeapSpaceStatistics()) used[space.space_name] = space.space_used_size
  } catch {}
  return used
}

/** ms to the µs. @param {number} ms */
function round3 (ms) {
  return Math.round(ms * 1000) / 1000
}
