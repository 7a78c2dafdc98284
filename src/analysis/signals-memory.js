// The serving threads' memory over the window: the heap's trend, what it held at the end and per request, and what
// heap snapshots after the load found keeping it.
import { displayPath } from './paths.js'
import { combineTrends, heapTrend } from './signals-heap.js'

/** @typedef {import('./run-data.js').RunData} RunData */
/** @typedef {import('./signals-heap.js').HeapTrend} HeapTrend */

/**
 * @param {RunData} data
 * @param {import('./signals-serving.js').Serving} serving
 * @param {number} start
 * @param {number} rate requests per second
 * @returns {import('./signals.js').Signals['memory']}
 */
export function memoryFigures (data, serving, start, rate) {
  // The heap a moment after the load, read for the loaded process's main thread when the load left megabytes alive.
  const later = data.run.released?.heapUsed
  const mainOf = (/** @type {import('./run-data.js').ThreadRecord} */ t) => t.pid === data.run.listening?.pid && t.threadId === 0
  const trends = serving.threads
    .map(t => heapTrend(serving.of(t), start, typeof later === 'number' && mainOf(t) ? { ...t.settled, later } : t.settled))
    .filter(t => t !== null)
  const trend = combineTrends(/** @type {HeapTrend[]} */ (trends))
  const last = serving.threads.map(t => serving.of(t).at(-1)).filter(s => s !== undefined)
  return {
    trend,
    heapUsed: last.reduce((a, s) => a + s.memory.heapUsed, 0),
    // How near the heap comes to its limit is read at its highest: the last sample alone falls before or after a full
    // collection, and a heap refilled to its limit many times a second read 52% or 75% of it from one run to the next.
    heapPeak: serving.threads.reduce((a, t) => a + serving.of(t).reduce((m, s) => Math.max(m, s.memory.heapUsed), 0), 0),
    heapLimit: serving.threads.reduce((a, t) => a + (Number(t.hello.heapLimit) || 0), 0),
    rss: last.reduce((a, s) => a + s.memory.rss, 0),
    perRequest: trend && rate > 0 ? trend.slope / rate : null,
    retained: retainedAsSeen(data)
  }
}

/**
 * What the heap snapshots after the load found, its holders' files as the target sees them.
 * @param {RunData} data
 */
function retainedAsSeen (data) {
  const r = data.retainers
  if (!r) return null
  // The snapshots are of the loaded process's main thread: its working directory is the one its paths are seen from.
  const main = data.threads.find(t => t.pid === data.run.listening.pid && t.threadId === 0)
  const cwd = String(main?.hello.cwd ?? data.run.cwd)
  return { ...r, culprits: r.culprits.map(c => ({ ...c, file: c.file ? displayPath(c.file, cwd) : c.file })) }
}
