import { decodeHistogram, encodeHistogram, mergeEncoded, summarize, summarizeSamples } from './histogram.js'
import { VERSION } from '../version.js'

/** @typedef {import('./recorder.js').Shard} Shard */
/** @typedef {import('./recorder.js').Bin} Bin */
/** @typedef {import('./histogram.js').Summary} Summary */

/**
 * How the load was asked for; carried in the result so a saved run says what it measured.
 * @typedef {object} LoadMeta
 * @property {string} url
 * @property {string} [socketPath]
 * @property {string} [title]
 * @property {number} connections
 * @property {number} pipelining
 * @property {number} workers
 * @property {number} rate asked requests per second, 0 for a closed loop
 * @property {number} amount
 * @property {number} warmup
 * @property {number} timeout
 * @property {string} method
 * @property {number} machines how many results were merged into this one
 * @property {boolean} [busyPoll] the generator polled without sleeping
 */

/**
 * autocannon's result shape (its common fields keep their names and units: latency in ms, requests and throughput
 * as per-second samples) plus `hotpath`, which holds what is needed to merge results exactly and re-analyse them.
 * @typedef {LoadResultFields & { '1xx': number, '2xx': number, '3xx': number, '4xx': number, '5xx': number }} LoadResult
 */

/**
 * @typedef {object} LoadResultFields
 * @property {string} [title]
 * @property {string} url
 * @property {string} [socketPath]
 * @property {number} connections
 * @property {number} pipelining
 * @property {number} workers
 * @property {number} duration seconds measured
 * @property {number} samples per-second samples behind `requests` and `throughput`
 * @property {string} start ISO time
 * @property {string} finish ISO time
 * @property {number} errors
 * @property {number} timeouts
 * @property {number} mismatches always 0: hotpath does not verify bodies
 * @property {number} non2xx
 * @property {number} resets
 * @property {Summary} latency ms
 * @property {Summary & { total: number, sent: number }} requests per second
 * @property {Summary & { total: number }} throughput bytes per second
 * @property {Record<string, { count: number }>} statusCodeStats
 * @property {HotpathSection} hotpath
 */

/**
 * @typedef {object} HotpathSection
 * @property {string} version
 * @property {LoadMeta} options
 * @property {{ asked: number, achieved: number, sent: number, missed: number, keptUp: boolean } | null} rate
 * @property {Summary | null} uncorrectedLatency under --rate, latency from actual send times (ms)
 * @property {number} reconnects
 * @property {Record<string, number>} errorKinds
 * @property {number} maxNapUs the longest the generator let responses gather between reads (µs): the most it added to
 *   any latency; 0 when it never did (see read-coalescer.js)
 * @property {Shard} shard everything measured, with encoded HDR histograms (µs) and the per-second series
 */

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
    series: mergeSeries(shards, start),
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
 * Per-second rates from the bins. A trailing bin shorter than half a second (an --amount run ending mid-second) would
 * be a noisy rate; it is left out unless it is all there is.
 * @param {Bin[]} series
 * @param {(bin: Bin) => number} pick
 */
function perSecond (series, pick) {
  const full = series.filter(b => b.duration >= 500)
  const bins = full.length > 0 ? full : series.filter(b => b.duration > 0)
  return bins.map(b => (pick(b) * 1000) / b.duration)
}

/**
 * @param {Shard} shard
 * @param {LoadMeta} meta
 * @returns {LoadResult}
 */
export function buildResult (shard, meta) {
  const latency = decodeHistogram(shard.histogram)
  const { counts } = shard
  const durationMs = Math.max(1, shard.finish - shard.start)
  /** @type {Record<string, number>} */
  const classes = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 }
  /** @type {Record<string, { count: number }>} */
  const statusCodeStats = {}
  for (const [code, count] of Object.entries(shard.statusCodes)) {
    classes[`${code[0]}xx`] += count
    statusCodeStats[code] = { count }
  }
  const uncorrected = shard.uncorrectedHistogram === null ? null : decodeHistogram(shard.uncorrectedHistogram)
  const askedRate = meta.rate
  const achieved = (counts.completed * 1000) / durationMs
  /** @type {LoadResult} */
  const result = {
    ...(meta.title ? { title: meta.title } : {}),
    url: meta.url,
    ...(meta.socketPath ? { socketPath: meta.socketPath } : {}),
    connections: meta.connections,
    pipelining: meta.pipelining,
    workers: meta.workers,
    duration: Math.round(durationMs) / 1000,
    samples: perSecond(shard.series, b => b.requests).length,
    start: new Date(shard.start).toISOString(),
    finish: new Date(shard.finish).toISOString(),
    errors: counts.errors,
    timeouts: counts.timeouts,
    mismatches: 0,
    non2xx: counts.completed - classes['2xx'],
    resets: counts.resets,
    '1xx': classes['1xx'],
    '2xx': classes['2xx'],
    '3xx': classes['3xx'],
    '4xx': classes['4xx'],
    '5xx': classes['5xx'],
    latency: summarize(latency),
    requests: { ...summarizeSamples(perSecond(shard.series, b => b.requests)), total: counts.completed, sent: counts.sent },
    throughput: { ...summarizeSamples(perSecond(shard.series, b => b.bytes)), total: counts.bytes },
    statusCodeStats,
    hotpath: {
      version: VERSION,
      options: meta,
      rate: askedRate > 0
        ? {
            asked: askedRate,
            achieved: Math.round(achieved * 10) / 10,
            sent: Math.round(((counts.sent * 1000) / durationMs) * 10) / 10,
            missed: counts.missed,
            // within 1% of the asked rate, allowing for the requests still in flight when the run ended
            keptUp: counts.completed + meta.connections * meta.pipelining >= 0.99 * askedRate * (durationMs / 1000)
          }
        : null,
      uncorrectedLatency: uncorrected === null ? null : summarize(uncorrected),
      reconnects: counts.reconnects,
      errorKinds: shard.errorKinds,
      maxNapUs: shard.maxNapUs ?? 0,
      shard
    }
  }
  latency.destroy()
  uncorrected?.destroy()
  return result
}

/**
 * Merges results of runs made at the same time from several machines (or several processes) into one. Counts and
 * latency percentiles are exact (HDR histograms add); requests per second add up second by second.
 * @param {LoadResult[]} results
 * @returns {LoadResult}
 */
export function mergeResults (results) {
  const shards = results.map(r => r.hotpath.shard)
  const first = results[0].hotpath.options
  /** @type {LoadMeta} */
  const meta = {
    ...first,
    connections: sum(results.map(r => r.connections)),
    workers: sum(results.map(r => r.workers)),
    rate: sum(results.map(r => r.hotpath.options.rate)),
    amount: sum(results.map(r => r.hotpath.options.amount)),
    machines: sum(results.map(r => r.hotpath.options.machines ?? 1))
  }
  return buildResult(mergeShards(shards), meta)
}

/** @param {number[]} xs */
const sum = (xs) => xs.reduce((a, b) => a + b, 0)

/**
 * Decoded latency histogram of a result, in µs. The caller owns it (call destroy()).
 * @param {LoadResult} result
 */
export function latencyHistogram (result) {
  return decodeHistogram(result.hotpath.shard.histogram)
}
