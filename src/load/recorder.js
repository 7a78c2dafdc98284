import { createHistogram, encodeHistogram, LatencyHistogram } from './histogram.js'

/**
 * One second (or less, for the last) of the run as recorded by one thread.
 * @typedef {object} Bin
 * @property {number} start epoch ms
 * @property {number} duration ms
 * @property {number} requests responses completed
 * @property {number} bytes response bytes received
 * @property {number} errors
 * @property {string} histogram latency in µs, encoded (see histogram.js)
 */

/**
 * What one thread (or one machine, after merging) measured; the unit `hotpath merge` adds up.
 * @typedef {object} Shard
 * @property {number} start epoch ms when measurement began
 * @property {number} finish epoch ms when it ended
 * @property {Counts} counts
 * @property {Record<string, number>} statusCodes
 * @property {Record<string, number>} errorKinds errors by cause: socket error code, 'timeout', 'reset', or a parse error
 * @property {string} histogram latency in µs; under --rate measured from each request's intended send time
 * @property {string | null} uncorrectedHistogram under --rate, latency from the actual send time
 * @property {Bin[]} series
 * @property {string | null} [latenessHistogram] under --rate, each send's lateness in µs: actual − intended send time
 * @property {number} [began] epoch ms the load began, warm-up included (a --start-at run records when it really did)
 * @property {number} [maxNapUs] the longest nap between reads (see read-coalescer.js): the most it added to a latency
 */

/**
 * @typedef {object} Counts
 * @property {number} sent
 * @property {number} completed
 * @property {number} bytes
 * @property {number} errors every failure, timeouts and resets included (as autocannon counts them)
 * @property {number} timeouts
 * @property {number} resets the server closed or reset a connection with requests in flight
 * @property {number} reconnects connections opened again after a close
 * @property {number} missed under --rate, requests due before the end that no free connection could send
 */

/**
 * Records one thread's responses. The hot path is `record()`: one histogram write and a few integer adds.
 * The run's total histogram is built from the per-second ones as each second closes, so a response is recorded once.
 */
export class Recorder {
  /** @param {{ rateMode: boolean }} opts */
  constructor ({ rateMode }) {
    this.rateMode = rateMode
    this.statusCounts = new Uint32Array(600)
    /** @type {Map<string, number>} */
    this.errorKinds = new Map()
    this.second = new LatencyHistogram()
    this.total = createHistogram()
    this.uncorrected = rateMode ? new LatencyHistogram() : null
    this.lateness = rateMode ? new LatencyHistogram() : null
    this.start = Date.now()
    this.binStart = this.start
    this.sent = 0
    this.completed = 0
    this.bytes = 0
    this.errors = 0
    this.timeouts = 0
    this.resets = 0
    this.reconnects = 0
    this.missed = 0
    this.binRequests = 0
    this.binBytes = 0
    this.binErrors = 0
    /** @type {Bin[]} */
    this.series = []
  }

  /**
   * Starts measuring afresh (after warm-up): drops what was recorded so far.
   * @param {number} epochNow
   */
  reset (epochNow) {
    this.start = epochNow
    this.binStart = epochNow
    this.sent = 0
    this.completed = 0
    this.bytes = 0
    this.errors = 0
    this.timeouts = 0
    this.resets = 0
    this.reconnects = 0
    this.missed = 0
    this.binRequests = 0
    this.binBytes = 0
    this.binErrors = 0
    this.statusCounts.fill(0)
    this.errorKinds.clear()
    this.second.reset()
    this.total.reset()
    this.uncorrected?.reset()
    this.lateness?.reset()
    this.series = []
  }

  /**
   * @param {number} latencyMs from the intended send time (the actual one outside --rate)
   * @param {number} uncorrectedMs from the actual send time
   * @param {number} status
   */
  record (latencyMs, uncorrectedMs, status) {
    this.second.record(Math.round(latencyMs * 1000))
    if (this.uncorrected !== null) this.uncorrected.record(Math.round(uncorrectedMs * 1000))
    this.statusCounts[status]++
    this.completed++
    this.binRequests++
  }

  /**
   * Under --rate: how late a request went out, from when it was due. Negative lateness cannot be (a request is sent
   * once due), but the clocks are read at different places, so it is clamped.
   * @param {number} ms
   */
  late (ms) {
    /** @type {LatencyHistogram} */ (this.lateness).record(ms > 0 ? Math.round(ms * 1000) : 0)
  }

  /** @param {number} n */
  addBytes (n) {
    this.bytes += n
    this.binBytes += n
  }

  /**
   * @param {string} kind
   * @param {{ timeout?: boolean, reset?: boolean }} [flags]
   */
  error (kind, flags) {
    this.errors++
    this.binErrors++
    this.errorKinds.set(kind, (this.errorKinds.get(kind) ?? 0) + 1)
    if (flags?.timeout) this.timeouts++
    if (flags?.reset) this.resets++
  }

  /**
   * Closes the current bin (called about once a second, and at the end).
   * @param {number} epochNow
   * @returns {Bin}
   */
  roll (epochNow) {
    /** @type {Bin} */
    const bin = {
      start: Math.round(this.binStart),
      duration: Math.round(epochNow - this.binStart),
      requests: this.binRequests,
      bytes: this.binBytes,
      errors: this.binErrors,
      histogram: encodeHistogram(this.second.flush())
    }
    this.series.push(bin)
    this.total.add(this.second.histogram)
    this.second.reset()
    this.binStart = epochNow
    this.binRequests = 0
    this.binBytes = 0
    this.binErrors = 0
    return bin
  }

  /**
   * @param {number} epochNow
   * @returns {Shard}
   */
  finish (epochNow) {
    if (epochNow - this.binStart >= 1 || this.binRequests > 0 || this.series.length === 0) this.roll(epochNow)
    /** @type {Record<string, number>} */
    const statusCodes = {}
    for (let s = 0; s < this.statusCounts.length; s++) if (this.statusCounts[s] > 0) statusCodes[s] = this.statusCounts[s]
    return {
      start: Math.round(this.start),
      finish: Math.round(epochNow),
      counts: {
        sent: this.sent,
        completed: this.completed,
        bytes: this.bytes,
        errors: this.errors,
        timeouts: this.timeouts,
        resets: this.resets,
        reconnects: this.reconnects,
        missed: this.missed
      },
      statusCodes,
      errorKinds: Object.fromEntries(this.errorKinds),
      histogram: encodeHistogram(this.total),
      uncorrectedHistogram: this.uncorrected === null ? null : encodeHistogram(this.uncorrected.flush()),
      latenessHistogram: this.lateness === null ? null : encodeHistogram(this.lateness.flush()),
      series: this.series
    }
  }
}
