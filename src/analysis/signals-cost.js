// Whether each request costs more than the last at the same load: state that grows with every request served (an
// array scanned or serialised whole, a list searched one by one) makes the CPU per request climb through the run
// while the heap grows only by an entry per request — a verdict filed under the event loop, with the heap "flat",
// tells the symptom and misses the cause.
import { linearFit, slopeT } from '../stats.js'
import { THRESHOLDS } from './thresholds.js'

/**
 * @typedef {object} CostTrend
 * @property {number} firstMs CPU per request at the start of the window, on the fitted line
 * @property {number} lastMs at its end
 * @property {number} requests requests served over the fitted seconds
 * @property {number} r2
 * @property {number} t slope ÷ its standard error
 * @property {boolean} rising whether the cost climbs as a growing state makes it (see THRESHOLDS.costRise)
 */

/** What a rise must pass to be told (docs/diagnosis.md). */
export const COST_LIMITS = { minPoints: 6, rise: THRESHOLDS.costRise, minRiseMs: THRESHOLDS.costRiseMs, r2: THRESHOLDS.costR2, t: THRESHOLDS.costT }

/** Seconds per point of the fit: enough requests in each for a stable CPU per request. */
const BIN_MS = 500
/**
 * Requests a point must hold. A point of a few requests is the process's own CPU (a collection, a compilation, a
 * timer) spread over them: a server waiting on Redis at 20 requests/s read "rising" in one run of three, 2.7 to 4.0 ms
 * over 50 requests, with no state kept. A trend over so few requests is not one a growing state makes.
 */
const MIN_REQUESTS = 30

/**
 * The CPU per request of the serving processes, half-second by half-second, against the requests served until then.
 * The first second is left out: code still being compiled costs the first requests more, which is the opposite trend.
 * Each half second's cost is read from the samples of the part measured alone (`measured`: the probe's costly parts
 * off, its own sampling taken out), when there is one: the CPU profiler and the wait tracer running in the middle of
 * the window would make a hump of their own there; the requests served until then count all of them.
 * @param {import('./signals-serving.js').Sample[]} serving the serving threads' samples in the window
 * @param {{ serving: import('./signals-serving.js').Sample[], processes: import('./signals-serving.js').Sample[] }} measured
 *   the samples the cost is read from: the serving threads', and the serving processes' main threads' (CPU is
 *   process-wide: counted once per process)
 * @param {number} port
 * @param {number} start window start, epoch ms
 * @param {{ minPoints: number, rise: number, minRiseMs: number, r2: number, t: number }} limits
 * @returns {CostTrend | null}
 */
export function costTrend (serving, measured, port, start, limits) {
  /** @type {Map<number, { finished: number, measuredFinished: number, cpu: number }>} */
  const bins = new Map()
  const bin = (/** @type {number} */ time) => {
    const k = Math.floor((time - start) / BIN_MS)
    let b = bins.get(k)
    if (b === undefined) {
      b = { finished: 0, measuredFinished: 0, cpu: 0 }
      bins.set(k, b)
    }
    return b
  }
  const finishedIn = (/** @type {import('./signals-serving.js').Sample} */ s) => {
    let n = 0
    for (const r of s.requests ?? []) if (r.port === port) n += r.finished
    return n
  }
  for (const s of serving) bin(s.time).finished += finishedIn(s)
  for (const s of measured.serving) bin(s.time).measuredFinished += finishedIn(s)
  for (const s of measured.processes) bin(s.time).cpu += s.cpu.user + s.cpu.system - (s.own ?? 0)
  const keys = [...bins.keys()].sort((a, b) => a - b)
  const skip = Math.ceil(1000 / BIN_MS)
  /** @type {number[]} */
  const xs = []
  /** @type {number[]} */
  const ys = []
  let served = 0
  for (const k of keys) {
    const b = /** @type {{ finished: number, measuredFinished: number, cpu: number }} */ (bins.get(k))
    const before = served
    served += b.finished
    // The last bin is cut short by the window's end, and a bin of few requests has no cost per request to trust.
    if (k < skip || k === keys[keys.length - 1] || b.measuredFinished < MIN_REQUESTS) continue
    xs.push(before + b.finished / 2)
    ys.push(Math.max(0, b.cpu) / b.measuredFinished)
  }
  if (xs.length < limits.minPoints) return null
  const fit = linearFit(xs, ys)
  const firstMs = fit.intercept + fit.slope * xs[0]
  const lastMs = fit.intercept + fit.slope * xs[xs.length - 1]
  const t = slopeT(fit)
  const rising = fit.slope > 0 && fit.r2 >= limits.r2 && t >= limits.t && firstMs > 0 &&
    lastMs >= limits.rise * firstMs && lastMs - firstMs >= limits.minRiseMs
  return { firstMs, lastMs, requests: xs[xs.length - 1] - xs[0], r2: fit.r2, t, rising }
}
