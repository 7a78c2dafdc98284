// A load's result: its shape (autocannon's, plus the `hotpath` section), built from what the threads measured.
import { decodeHistogram, summarize, summarizeSamples } from './histogram.js'
import { loadFailure } from './failure.js'
import { VERSION } from '../version.js'

// Judging a result lives in failure.js, adding results up in merge.js; loadFailure stays importable from here.
export { loadFailure }

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
 * @property {boolean} [coalesce] the generator napped between reads to read responses in batches (--coalesce): its
 *   latencies include up to `hotpath.maxNapUs` of waiting
 * @property {number} [duration] seconds of measurement asked (-d); 0 when only --amount bounded the run. Absent from
 *   results that do not record it (then the measured duration stands in).
 * @property {string} [requestsHash] digest of every request's bytes but its Host line (method, path, headers, body):
 *   equal when two runs sent the same requests (see requestsHash())
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
 * @property {LoadFailure | null} failed why the load did not measure what was asked (see loadFailure()), or null
 * @property {boolean} [interrupted] stopped early by a signal (Ctrl-C): the figures cover the run until then
 * @property {MergeInfo} [merged] how the results merged into this one lay in time
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
 * Why a load did not measure what was asked: the first thing to say about it, whatever its figures look like.
 * @typedef {object} LoadFailure
 * @property {'no-connection' | 'no-http' | 'no-response' | 'non-2xx' | 'errors' | 'out-of-step'} reason
 *   (`out-of-step`: merged segments of one load that did not start together, see SegmentsInfo)
 * @property {string} detail one line, for a person: `the load failed: 132,566 of 132,600 responses were 404 Not Found`
 * @property {number} bad requests that ended without a 2xx (or 304) response: other responses, and errors
 * @property {number} total requests that ended: responses and errors
 */

/**
 * @typedef {object} MergeInfo
 * @property {number} overlap seconds during which every merged result was running
 * @property {number} span seconds from the first start to the last finish
 * @property {boolean} together the results ran at the same time: the overlap is at least half the shortest of them
 * @property {SegmentsInfo} [segments] when the results were the segments of one split load (hotpath load --segment)
 */

/**
 * How the segments of one split load merged: all of them, once each, with the same settings (else merge refuses),
 * and whether they started together.
 * @typedef {object} SegmentsInfo
 * @property {string} run the run id they share
 * @property {number} count N
 * @property {number | null} startAt epoch ms they were asked to begin at, or null
 * @property {number} startSkew seconds between the first and the last segment's start
 * @property {{ index: number, started: number, late: number | null }[]} starts each segment's actual start (epoch ms)
 *   and how many seconds after `startAt` it came (null without one)
 * @property {number[]} outOfStep segments that began more than a second after the first: the parts did not load
 *   together, and the merged result is marked failed (reason 'out-of-step')
 * @property {{ intended: number, achieved: number } | null} rate under --rate, the whole load's rate and what the
 *   segments achieved together (req/s)

/**
 * @typedef {object} HotpathSection
 * @property {string} version
 * @property {LoadMeta} options
 * @property {{ asked: number, achieved: number, sent: number, missed: number, keptUp: boolean } | null} rate
 * @property {Summary | null} uncorrectedLatency under --rate, latency from actual send times (ms)
 * @property {SendLateness | null} sendLateness under --rate, how late the generator sent requests, from when they were
 *   due (ms): what it adds to every corrected latency
 * @property {number} reconnects
 * @property {Record<string, number>} errorKinds
 * @property {number} maxNapUs the longest the generator let responses gather between reads (µs): the most it added to
 *   any latency; 0 when it never did (see read-coalescer.js)
 * @property {import('./segment.js').SegmentInfo} [segment] a segment of a split load (hotpath load --segment): which
 *   part, of which run, of what whole load, and when it was asked to start and did
 * @property {Shard} shard everything measured, with encoded HDR histograms (µs) and the per-second series
 */

/**
 * @typedef {object} SendLateness
 * @property {number} p50
 * @property {number} p99
 * @property {number} max
 * @property {number} mean
 */

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
 * @param {import('./segment.js').SegmentInfo} [segment]
 * @returns {LoadResult}
 */
export function buildResult (shard, meta, segment) {
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
  const lateness = typeof shard.latenessHistogram === 'string' ? decodeHistogram(shard.latenessHistogram) : null
  const askedRate = meta.rate
  const achieved = (counts.completed * 1000) / durationMs
  /** @type {LoadResult} */
  const result = {
    ...(meta.title ? { title: meta.title } : {}),
    url: meta.url,
    ...(meta.socketPath ? { socketPath: meta.socketPath } : {}),
    failed: null,
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
      sendLateness: lateness === null ? null : sendLateness(lateness),
      reconnects: counts.reconnects,
      errorKinds: shard.errorKinds,
      maxNapUs: shard.maxNapUs ?? 0,
      ...(segment ? { segment } : {}),
      shard
    }
  }
  latency.destroy()
  uncorrected?.destroy()
  lateness?.destroy()
  result.failed = loadFailure(result)
  return result
}

/**
 * @param {import('hdr-histogram-js').Histogram} h send lateness, µs
 * @returns {SendLateness}
 */
function sendLateness (h) {
  const { p50, p99, max, mean } = summarize(h)
  return { p50, p99, max, mean }
}

/**
 * The result with marks that say how to read it (`interrupted`, `merged`) beside `failed`, near the top of the JSON
 * where a reader looks first rather than after the histograms.
 * @param {LoadResult} result
 * @param {{ interrupted?: boolean, merged?: MergeInfo }} marks
 * @returns {LoadResult}
 */
export function withMarks (result, marks) {
  /** @type {Record<string, unknown>} */
  const out = {}
  for (const [key, value] of Object.entries(result)) {
    if (key in marks) continue
    out[key] = value
    if (key === 'failed') Object.assign(out, marks)
  }
  return /** @type {LoadResult} */ (out)
}

/**
 * Decoded latency histogram of a result, in µs. The caller owns it (call destroy()).
 * @param {LoadResult} result
 */
export function latencyHistogram (result) {
  return decodeHistogram(result.hotpath.shard.histogram)
}
