import { performance } from 'node:perf_hooks'

/** the longest nap, in ms: 100 µs naps cost as much CPU per request as 50 µs ones against a hello server at -c 100 */
const MAX_NAP = 0.05
/** a nap shorter than this (ms) gathers too little to pay for its own wake-up */
const MIN_NAP = 0.01
/** a nap is at most this share of the recent median latency: the most it can add to a typical response */
const NAP_SHARE = 0.06
/** above this share of its time spent working, the thread naps no more: a nap would then cost it throughput */
const MAX_BUSY = 0.8
/** ms between two decisions on the nap's length (ReadCoalescer.adjust) */
export const COALESCE_ADJUST_MS = 100

/**
 * Lets responses gather for a few microseconds between reads, so that one wake-up reads many of them.
 *
 * A generator much faster than its server sleeps in epoll after nearly every read and is woken for the next response;
 * each wake-up costs the generator a context switch and, on one machine, costs the server's core the cross-CPU wake.
 * Napping (a timed futex wait, no CPU) once per event-loop turn after reading lets the responses that arrive meanwhile
 * be read in one turn. Against a node:http server on the next core at -c 100 (bench/load.js), naps cut the generator's
 * CPU per request from 6.96 to 6.33 µs at -p 1 and from 4.85 to 2.79 µs at -p 10, and the server, no longer paying to
 * wake the generator, answered 15% and 38% more requests/s.
 *
 * The price is that a response arriving during a nap is read up to a nap later. So a nap is at most 6% of the median
 * latency of the last 100 ms and at most 50 µs, and there is none when that is under 10 µs: a generator whose
 * responses take under ~170 µs never naps. Nor does a thread busy more than 80% of its time: its responses are
 * already waiting, and a nap would be lost work.
 */
export class ReadCoalescer {
  constructor () {
    /** current nap in ms; 0 while napping is off */
    this.napMs = 0
    /** the longest nap set so far, in ms */
    this.maxNapMs = 0
    this.pending = false
    /** ms spent napping since the last decision; the loop counts them as busy, they are not work */
    this.napped = 0
    /** latencies of the last window by octave of µs: octaves[k] counts 2^k ≤ µs < 2^(k+1) */
    this.octaves = new Uint32Array(32)
    this.observed = 0
    this.cell = new Int32Array(new SharedArrayBuffer(4))
    this.elu = performance.eventLoopUtilization()
    this.nap = () => {
      this.pending = false
      const before = performance.now()
      Atomics.wait(this.cell, 0, 0, this.napMs)
      this.napped += performance.now() - before
    }
  }

  /** Called after a read that completed responses: nap once, at the end of this turn of the event loop. */
  afterRead () {
    if (this.napMs === 0 || this.pending) return
    this.pending = true
    setImmediate(this.nap)
  }

  /** @param {number} ms a response's latency from its actual send */
  observe (ms) {
    this.octaves[31 - Math.clz32((ms * 1000) | 1)]++
    this.observed++
  }

  /** Sets the nap for the next window from the last one's latencies and the thread's load. */
  adjust () {
    const elu = performance.eventLoopUtilization(this.elu)
    this.elu = performance.eventLoopUtilization()
    const busy = elu.idle + elu.active > 0 ? (elu.active - this.napped) / (elu.idle + elu.active) : 0
    const nap = Math.min(MAX_NAP, NAP_SHARE * this.median())
    this.napMs = nap >= MIN_NAP && busy < MAX_BUSY ? nap : 0
    if (this.napMs > this.maxNapMs) this.maxNapMs = this.napMs
    this.octaves.fill(0)
    this.observed = 0
    this.napped = 0
  }

  /**
   * The window's median latency, placed within its octave as if that octave's latencies were spread evenly.
   * @returns {number} ms; 0 with no responses
   */
  median () {
    const half = this.observed / 2
    let below = 0
    for (let k = 0; k < 32; k++) {
      const n = this.octaves[k]
      if (n > 0 && below + n >= half) return (2 ** k * (1 + (half - below) / n)) / 1000
      below += n
    }
    return 0
  }
}
