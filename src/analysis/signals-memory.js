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
    ...oldGeneration(serving),
    rss: last.reduce((a, s) => a + s.memory.rss, 0),
    perRequest: trend && rate > 0 ? trend.slope / rate : null,
    retained: retainedAsSeen(data)
  }
}

/**
 * The old generation's highest reading in the window and the limit it was set (each serving thread's where it was set,
 * else its whole heap's and V8's heap_size_limit). How near it comes to its limit is read at its highest: the last
 * sample alone falls before or after a full collection, and a heap refilled to its limit many times a second read 52%
 * or 75% of it from one run to the next. The heap's spaces are read once a second, so the old generation is also read
 * at every sample as the heap less the most the young one held in the window, which is never more than it held.
 * @param {import('./signals-serving.js').Serving} serving
 * @returns {{ oldPeak: number, oldLimit: number }}
 */
function oldGeneration (serving) {
  let oldPeak = 0
  let oldLimit = 0
  for (const t of serving.threads) {
    const samples = serving.of(t)
    const set = Number(t.hello.oldGenerationLimit)
    if (!(set > 0)) {
      oldPeak += samples.reduce((m, s) => Math.max(m, s.memory.heapUsed), 0)
      oldLimit += Number(t.hello.heapLimit) || 0
      continue
    }
    let young = 0
    let old = 0
    for (const s of samples) {
      if (!s.heapSpaces) continue
      const spaces = Object.entries(s.heapSpaces)
      young = Math.max(young, spaces.reduce((a, [name, used]) => YOUNG_SPACES.has(name) ? a + used : a, 0))
      old = Math.max(old, spaces.reduce((a, [name, used]) => YOUNG_SPACES.has(name) || name === 'read_only_space' ? a : a + used, 0))
    }
    for (const s of samples) old = Math.max(old, s.memory.heapUsed - young)
    oldPeak += old
    oldLimit += set
  }
  return { oldPeak, oldLimit }
}

const YOUNG_SPACES = new Set(['new_space', 'new_large_object_space'])

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
