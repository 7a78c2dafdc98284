// Adding results up: the shards of one run's threads, and results of runs made at the same time on several machines,
// with the checks that refuse what must not be added. The same thing one layer up, as the command: src/cli/merge.js.
import { UsageError } from '../errors.js'
import { encodeHistogram, mergeEncoded } from './histogram.js'
import { buildResult, withMarks } from './result.js'
import { checkSegments, outOfStepDetail } from './segments.js'

/** @typedef {import('./recorder.js').Shard} Shard */
/** @typedef {import('./recorder.js').Bin} Bin */
/** @typedef {import('./result.js').LoadResult} LoadResult */
/** @typedef {import('./result.js').LoadMeta} LoadMeta */
/** @typedef {import('./result.js').MergeInfo} MergeInfo */

/**
 * Adds shards together: counts add, histograms add (exact), per-second bins line up by their start time.
 * @param {Shard[]} shards
 * @returns {Shard}
 */
export function mergeShards (shards) {
  if (shards.length === 1) return shards[0]
  const start = Math.min(...shards.map(s => s.start))
  const finish = Math.max(...shards.map(s => s.finish))
  /** @type {Shard['counts']} */
  const counts = { sent: 0, completed: 0, bytes: 0, errors: 0, timeouts: 0, resets: 0, reconnects: 0, missed: 0 }
  /** @type {Record<string, number>} */
  const statusCodes = {}
  /** @type {Record<string, number>} */
  const errorKinds = {}
  for (const s of shards) {
    for (const key of /** @type {(keyof Shard['counts'])[]} */ (Object.keys(counts))) counts[key] += s.counts[key] ?? 0
    addInto(statusCodes, s.statusCodes)
    addInto(errorKinds, s.errorKinds)
  }
  const uncorrected = shards.filter(s => s.uncorrectedHistogram !== null)
  const lateness = shards.filter(s => typeof s.latenessHistogram === 'string')
  return {
    start,
    finish,
    counts,
    statusCodes,
    errorKinds,
    histogram: encodeAndFree(mergeEncoded(shards.map(s => s.histogram))),
    uncorrectedHistogram: uncorrected.length === 0
      ? null
      : encodeAndFree(mergeEncoded(uncorrected.map(s => /** @type {string} */ (s.uncorrectedHistogram)))),
    // results saved before send lateness was measured have none: the merge states it only when every part did
    latenessHistogram: lateness.length === 0 || lateness.length < uncorrected.length
      ? null
      : encodeAndFree(mergeEncoded(lateness.map(s => /** @type {string} */ (s.latenessHistogram)))),
    series: mergeSeries(shards, start),
    ...(shards.some(s => s.began) ? { began: Math.min(...shards.map(s => s.began || Infinity)) } : {}),
    maxNapUs: Math.max(...shards.map(s => s.maxNapUs ?? 0))
  }
}

/**
 * Bins of different shards are the same second when they start within half a second of each other: threads of one
 * run start together; machines started by a job runner are aligned to the nearest second.
 * @param {Shard[]} shards
 * @param {number} start
 * @returns {Bin[]}
 */
function mergeSeries (shards, start) {
  /** @type {Map<number, Bin[]>} */
  const bySecond = new Map()
  for (const s of shards) {
    for (const bin of s.series) {
      const key = Math.round((bin.start - start) / 1000)
      const list = bySecond.get(key)
      if (list) list.push(bin)
      else bySecond.set(key, [bin])
    }
  }
  return [...bySecond.entries()].sort((a, b) => a[0] - b[0]).map(([, bins]) => bins.length === 1
    ? bins[0]
    : {
        start: Math.min(...bins.map(b => b.start)),
        duration: Math.max(...bins.map(b => b.duration)),
        requests: bins.reduce((a, b) => a + b.requests, 0),
        bytes: bins.reduce((a, b) => a + b.bytes, 0),
        errors: bins.reduce((a, b) => a + b.errors, 0),
        histogram: encodeAndFree(mergeEncoded(bins.map(b => b.histogram)))
      })
}

/**
 * @param {Record<string, number>} into
 * @param {Record<string, number>} from
 */
function addInto (into, from) {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v
}

/** @param {import('hdr-histogram-js').Histogram} h */
function encodeAndFree (h) {
  const encoded = encodeHistogram(h)
  h.destroy()
  return encoded
}

/**
 * Merges results of runs made at the same time from several machines (or several processes) into one. Counts and
 * latency percentiles are exact (HDR histograms add); requests per second add up second by second. The segments of
 * one split load (hotpath load --segment) are checked to be all there, once each, with the same flags (else a
 * UsageError names the one at fault); segments that began more than a second apart make a result marked failed
 * (`out-of-step`).
 * @param {LoadResult[]} results
 * @param {string[]} [names] what to call each result in messages (default: 'result 1', 'result 2', …)
 * @returns {LoadResult}
 */
export function mergeResults (results, names = results.map((_, i) => `result ${i + 1}`)) {
  if (!Array.isArray(results) || results.length === 0) throw new UsageError('mergeResults() needs a non-empty list of load results')
  const segments = checkSegments(results, names)
  const shards = results.map(r => r.hotpath.shard)
  const first = results[0].hotpath.options
  /** @type {LoadMeta} */
  const meta = {
    ...first,
    connections: sum(results.map(r => r.connections)),
    workers: sum(results.map(r => r.workers)),
    // segments split the rate in thousandths of a request/s: their sum is the whole's rate, less float noise
    rate: Math.round(sum(results.map(r => r.hotpath.options.rate)) * 1000) / 1000,
    amount: sum(results.map(r => r.hotpath.options.amount)),
    machines: sum(results.map(r => r.hotpath.options.machines ?? 1))
  }
  // What the parts did not all share, the merged result cannot claim.
  for (const key of /** @type {const} */ (['duration', 'requestsHash'])) {
    if (!results.every(r => r.hotpath.options[key] === first[key])) delete meta[key]
  }
  const merged = buildResult(mergeShards(shards), meta)
  const info = mergeInfo(results)
  if (segments !== null) {
    const rate = merged.hotpath.rate
    info.segments = { ...segments, rate: rate === null ? null : { intended: rate.asked, achieved: rate.achieved } }
    if (segments.outOfStep.length > 0 && merged.failed === null) {
      const late = results.filter(r => segments.outOfStep.includes(/** @type {import('./segment.js').SegmentInfo} */ (r.hotpath.segment).index))
      const ended = (/** @type {LoadResult} */ r) => r.requests.total + r.errors
      merged.failed = { reason: 'out-of-step', detail: outOfStepDetail(segments), bad: sum(late.map(ended)), total: ended(merged) }
    }
  }
  return withMarks(merged, {
    ...(results.some(r => r.interrupted) ? { interrupted: true } : {}),
    merged: info
  })
}

/**
 * How results lay in time. Merging adds up runs made at the same time on several machines; runs made one after the
 * other add up to figures no load had (requests/s of two different minutes, a duration that spans the gap), so a merge
 * says whether its parts ran together.
 * @param {LoadResult[]} results
 * @returns {MergeInfo}
 */
export function mergeInfo (results) {
  const ranges = results.map(r => ({ start: r.hotpath.shard.start, finish: r.hotpath.shard.finish }))
  const overlap = Math.max(0, Math.min(...ranges.map(r => r.finish)) - Math.max(...ranges.map(r => r.start)))
  const span = Math.max(...ranges.map(r => r.finish)) - Math.min(...ranges.map(r => r.start))
  const shortest = Math.min(...ranges.map(r => r.finish - r.start))
  return {
    overlap: Math.round(overlap) / 1000,
    span: Math.round(span) / 1000,
    together: overlap >= shortest / 2 && results.every(r => r.merged?.together !== false)
  }
}

/**
 * Refuses results that must not be added up, naming the file: one result twice (its requests would count twice), or
 * loads of different requests (their sum describes no load).
 * @param {LoadResult[]} results
 * @param {string[]} names the files they were read from
 */
export function assertMergeable (results, names) {
  for (let j = 1; j < results.length; j++) {
    for (let i = 0; i < j; i++) {
      const a = results[i].hotpath.shard
      const b = results[j].hotpath.shard
      if (a.start === b.start && a.histogram === b.histogram) {
        throw new UsageError(`'${names[j]}' is the same result as '${names[i]}' (same start and latency histogram): merging it would count its requests twice`)
      }
    }
  }
  const what = (/** @type {LoadResult} */ r) => `${r.hotpath.options.method} ${r.url}${r.socketPath ? ` (socket ${r.socketPath})` : ''}`
  for (let j = 1; j < results.length; j++) {
    if (what(results[j]) !== what(results[0])) {
      throw new UsageError(`'${names[j]}' loaded ${what(results[j])}, '${names[0]}' ${what(results[0])}: merge adds up parts of one load, of the same method and URL`)
    }
  }
}

/** @param {number[]} xs */
const sum = (xs) => xs.reduce((a, b) => a + b, 0)
