// Load results with chosen per-second latencies, written as `hotpath load -o` writes them: for the commands that read
// results (merge, compare), where a real run could not be made to give those seconds on demand.
import { writeFile } from 'node:fs/promises'
import { createHistogram, encodeHistogram } from '../../src/load/histogram.js'
import { buildResult } from '../../src/load/result.js'

/**
 * @typedef {object} Synthetic
 * @property {number[][]} seconds each second's latencies, in ms
 * @property {number} [start] epoch ms of the first second
 * @property {string} [url]
 * @property {number} [connections]
 * @property {number} [status] every response's status
 */

/**
 * @param {Synthetic} spec
 * @returns {import('../../src/load/result.js').LoadResult}
 */
export function syntheticResult ({ seconds, start = Date.UTC(2026, 0, 1, 10), url = 'http://127.0.0.1:3000/', connections = 10, status = 200 }) {
  const total = createHistogram()
  const series = seconds.map((latencies, i) => {
    const h = createHistogram()
    for (const ms of latencies) h.recordValue(Math.round(ms * 1000))
    total.add(h)
    const bin = { start: start + i * 1000, duration: 1000, requests: latencies.length, bytes: latencies.length * 100, errors: 0, histogram: encodeHistogram(h) }
    h.destroy()
    return bin
  })
  const completed = seconds.reduce((a, s) => a + s.length, 0)
  const shard = {
    start,
    finish: start + seconds.length * 1000,
    counts: { sent: completed, completed, bytes: completed * 100, errors: 0, timeouts: 0, resets: 0, reconnects: 0, missed: 0 },
    statusCodes: { [status]: completed },
    errorKinds: {},
    histogram: encodeHistogram(total),
    uncorrectedHistogram: null,
    series,
    maxNapUs: 0
  }
  total.destroy()
  return buildResult(shard, { url, connections, pipelining: 1, workers: 1, rate: 0, amount: 0, warmup: 0, timeout: 10, method: 'GET', machines: 1 })
}

/**
 * @param {string} file
 * @param {Synthetic} spec
 */
export async function writeSyntheticResult (file, spec) {
  await writeFile(file, JSON.stringify(syntheticResult(spec), null, 2) + '\n')
  return file
}

/**
 * `n` latencies: `fast` ms for most, `slow` ms for the last `slowCount`.
 * @param {number} n
 * @param {number} fast
 * @param {number} [slowCount]
 * @param {number} [slow]
 */
export function latencies (n, fast, slowCount = 0, slow = 100) {
  return Array.from({ length: n }, (_, i) => i >= n - slowCount ? slow : fast + (i % 7) * 0.005)
}
