// One line per thread that sampled in the window: what it is, how busy, and what it served.
import { weightedPercentile } from '../stats.js'
import { loopUtilization, tickWeights } from './signals-loop.js'

/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {ThreadRecord['samples'][number]} Sample */

/**
 * @typedef {object} ThreadSummary
 * @property {number} pid
 * @property {number} threadId
 * @property {string} role
 * @property {boolean} serving listens on the loaded port
 * @property {number} samples in the load window
 * @property {number} utilization mean event-loop utilisation
 * @property {number} delayP99 ms
 * @property {number} delayMax ms
 * @property {number | null} cpuPercent of one core, process-wide (main threads only)
 * @property {number} heapUsed bytes at the end of the window
 * @property {number} gcShare of the window spent in GC
 * @property {number} requests finished on the loaded port
 */

/**
 * The probe knows a cluster worker from inside; a primary is known by its workers.
 * @param {ThreadRecord} t
 * @param {ThreadRecord[]} all
 */
export function roleOf (t, all) {
  const role = String(t.hello.role ?? (t.threadId === 0 ? 'main' : 'worker-thread'))
  if (role === 'main' && all.some(o => o.hello.role === 'cluster-worker' && o.hello.ppid === t.pid)) return 'cluster-primary'
  return role
}

/**
 * @param {ThreadRecord} t
 * @param {Sample[]} samples
 * @param {boolean} serving
 * @param {number} port
 * @param {number} seconds
 * @param {string} role
 * @returns {ThreadSummary}
 */
export function summarizeThread (t, samples, serving, port, seconds, role) {
  const delays = samples.map(s => s.delay.max)
  const cpuMs = samples.reduce((a, s) => a + s.cpu.user + s.cpu.system, 0)
  return {
    pid: t.pid,
    threadId: t.threadId,
    role,
    serving,
    samples: samples.length,
    utilization: loopUtilization(samples),
    delayP99: weightedPercentile(delays, tickWeights(samples), 99),
    delayMax: delays.length > 0 ? Math.max(...delays) : 0,
    cpuPercent: t.threadId === 0 ? cpuMs / (seconds * 1000) : null,
    heapUsed: samples.at(-1)?.memory.heapUsed ?? 0,
    gcShare: samples.reduce((a, s) => a + s.gc.duration, 0) / (seconds * 1000),
    requests: samples.reduce((a, s) => a + (s.requests ?? []).filter(r => r.port === port).reduce((b, r) => b + r.finished, 0), 0)
  }
}
