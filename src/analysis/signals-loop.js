// How the serving threads' event loop fared over the window: how late it ran, how busy it was, how long it waited for
// a CPU, and the garbage collection pauses that held it.
import { mean, weightedPercentile } from '../stats.js'

/** @typedef {import('./run-data.js').ThreadRecord['samples'][number]} Sample */

/**
 * Event-loop utilisation over the samples' time: each sample's for the interval it stands for. A busy thread samples
 * seldom (its sampler's timer waits for the loop), so a plain mean of its samples counts the short idle intervals
 * between its long busy ones as often as those, and reads a thread busy 97% of the time as 64%.
 * @param {Sample[]} samples
 */
export function loopUtilization (samples) {
  let busy = 0
  let time = 0
  for (const s of samples) {
    const ms = Number.isFinite(s.interval) && s.interval > 0 ? s.interval : 0
    // The probe's own sampling runs on the loop, and libuv counts it busy: it is not the app's.
    busy += Math.max(0, s.utilization * ms - (s.own ?? 0))
    time += ms
  }
  return time > 0 ? busy / time : mean(samples.map(s => s.utilization))
}

/**
 * What each sample's delay weighs among the others: the ticks of the usual cadence it stands for. A sample's delay is
 * its tick's lateness, and a sampler that stretched its pace while the thread was busy (the probe does) took one tick
 * where it would have taken `pace`: so the busy stretch of a window weighs in its percentiles what it did at the usual
 * cadence.
 * @param {Sample[]} samples
 */
export function tickWeights (samples) {
  return samples.map(s => Number.isInteger(s.pace) && /** @type {number} */ (s.pace) > 1 ? /** @type {number} */ (s.pace) : 1)
}

/**
 * @param {Sample[]} samples the serving threads'
 * @returns {import('./signals.js').Signals['loop']}
 */
export function loopFigures (samples) {
  const delays = samples.map(s => s.delay.max)
  const weights = tickWeights(samples)
  let waited = 0
  let ran = 0
  let measured = 0
  // The probe's own sampling, counted over the same samples as the thread's time (a reading spans ten of them).
  let own = 0
  for (const s of samples) {
    own += s.own ?? 0
    if (s.thread === undefined) continue
    waited += s.thread.wait
    ran += s.thread.cpu
    // Runs before the thread's time was read with the CPU (every tenth sample) read it on every sample.
    measured += s.thread.span ?? s.interval
  }
  return {
    utilization: loopUtilization(samples),
    runQueue: measured > 0 ? waited / measured : null,
    threadCpu: measured > 0 ? Math.max(0, ran - own) / measured : null,
    delayP50: weightedPercentile(delays, weights, 50),
    delayP99: weightedPercentile(delays, weights, 99),
    delayMax: delays.length > 0 ? Math.max(...delays) : 0
  }
}

/**
 * @param {Sample[]} samples the serving threads'
 * @param {number} threadWallMs the window's length times the serving threads
 * @param {number} cpuMs the serving processes'
 * @returns {import('./signals.js').Signals['gc']}
 */
export function gcFigures (samples, threadWallMs, cpuMs) {
  let gcMs = 0
  let gcCount = 0
  /** @type {Record<string, { share: number, count: number }>} */
  const byKind = {}
  for (const s of samples) {
    gcMs += s.gc.duration
    gcCount += s.gc.count
    for (const [kind, k] of Object.entries(s.gc.byKind ?? {})) {
      const entry = byKind[kind] ?? (byKind[kind] = { share: 0, count: 0 })
      entry.share += k.duration
      entry.count += k.count
    }
  }
  for (const entry of Object.values(byKind)) entry.share /= threadWallMs
  return { share: gcMs / threadWallMs, cpuShare: cpuMs > 0 ? gcMs / cpuMs : 0, byKind, count: gcCount }
}
