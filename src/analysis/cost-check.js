// Whether each request cost more CPU than the last, read from a run still in progress: doctor asks it the moment the
// load stops, while the target still runs, to decide whether heap snapshots should find the state that grows — the
// cause the verdict then names. Only the loaded process's event logs are read (the probe flushes them before it
// acknowledges the stop); the judgment is the one the diagnosis makes (signals-cost.js).
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { readThread } from './run-events.js'
import { COST_LIMITS, costTrend } from './signals-cost.js'
import { measuredPart } from './signals-quiet.js'
import { inWindow } from './signals-serving.js'

/**
 * @param {string} dir the run directory
 * @param {{ pid: number, port: number, start: number, end: number }} window the loaded process and port, and the load
 *   window (epoch ms)
 * @returns {boolean}
 */
export function costRoseDuringLoad (dir, { pid, port, start, end }) {
  /** @type {import('./run-data.js').RunDamage[]} */
  const damage = []
  let names
  try {
    names = readdirSync(dir)
  } catch {
    return false
  }
  const threads = names
    .filter(f => f.startsWith(`events-${pid}-`) && f.endsWith('.ndjson'))
    .map(f => readThread(join(dir, f), damage))
    .filter(t => t !== null)
  const windowed = new Map(threads.map(t => [t, t.samples.filter(s => inWindow(s, start, end))]))
  const of = (/** @type {import('./run-data.js').ThreadRecord} */ t) => windowed.get(t) ?? []
  const main = threads.filter(t => t.threadId === 0)
  const measured = measuredPart({ threads, of }, main, port, (end - start) / 1000)
  const serving = threads.flatMap(of)
  return costTrend(serving, { serving: threads.flatMap(measured.of), processes: main.flatMap(measured.of) }, port, start, COST_LIMITS)?.rising === true
}
