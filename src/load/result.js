import { createHash } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import { UsageError } from '../errors.js'
import { decodeHistogram, encodeHistogram, mergeEncoded, summarize, summarizeSamples } from './histogram.js'
import { NOT_HTTP } from './response-parser.js'
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
 * @property {'no-connection' | 'no-http' | 'no-response' | 'non-2xx' | 'errors'} reason
 * @property {string} detail one line, for a person: `the load failed: 132,566 of 132,600 responses were 404 Not Found`
 * @property {number} bad requests that ended without a 2xx (or 304) response: other responses, and errors
 * @property {number} total requests that ended: responses and errors
 */

/**
 * @typedef {object} MergeInfo
 * @property {number} overlap seconds during which every merged result was running
 * @property {number} span seconds from the first start to the last finish
 * @property {boolean} together the results ran at the same time: the overlap is at least half the shortest of them
 */

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
  // What the parts did not all share, the merged result cannot claim.
  for (const key of /** @type {const} */ (['duration', 'requestsHash'])) {
    if (!results.every(r => r.hotpath.options[key] === first[key])) delete meta[key]
  }
  const merged = buildResult(mergeShards(shards), meta)
  return withMarks(merged, {
    ...(results.some(r => r.interrupted) ? { interrupted: true } : {}),
    merged: mergeInfo(results)
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
 * Digest of the requests a load sends, but for their Host line (servers started for a run listen on a new port each
 * time): two runs with equal digests sent the same methods, paths, headers and bodies.
 * @param {import('./requests.js').WireRequest[]} requests
 * @returns {string}
 */
export function requestsHash (requests) {
  const hash = createHash('sha256')
  for (const r of requests) hash.update(r.bytes.toString('latin1').replace(/\r\nhost:[^\r]*/i, ''))
  return hash.digest('hex').slice(0, 16)
}

/** Statuses that answer a request as asked: 2xx, and 304 (unchanged: the answer to a conditional request). */
const answered = (/** @type {string} */ code) => code[0] === '2' || code === '304'

/**
 * Why a load did not measure what was asked, or null when it did. Pure, so every command that runs or reads a load
 * judges it alike. The load failed when:
 * - no connection was ever made (`no-connection`), no request got an HTTP response because what came back was not
 *   HTTP (`no-http`), or nothing came back at all (`no-response`);
 * - or more than half of the requests that ended did not get a 2xx (or 304) response: other statuses (`non-2xx`) or
 *   errors — timeouts, resets, refused connections, responses that were not HTTP, each counted once (`errors`),
 *   whichever there were more of.
 * @param {LoadResult} result
 * @returns {LoadFailure | null}
 */
export function loadFailure (result) {
  const completed = result.requests.total
  const errors = result.errors
  const statuses = Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => ({ code, count: s.count }))
  const badResponses = statuses.filter(s => !answered(s.code)).reduce((a, s) => a + s.count, 0)
  const bad = badResponses + errors
  const total = completed + errors
  const where = `the server at ${result.socketPath ?? hostOf(result.url)}`
  const kinds = Object.entries(result.hotpath.errorKinds ?? {}).sort((a, b) => b[1] - a[1])
  const failure = (/** @type {LoadFailure['reason']} */ reason, /** @type {string} */ detail) => ({ reason, detail, bad, total })
  if (completed === 0) {
    const notHttp = kinds.filter(([kind]) => NOT_HTTP.has(kind))
    if (result.requests.sent === 0) {
      return failure('no-connection', `${where} accepted no connection${errors > 0 ? ` (${listKinds(kinds)})` : ` in ${result.duration.toFixed(1)} s`}`)
    }
    if (notHttp.length > 0) {
      const n = notHttp.reduce((a, [, c]) => a + c, 0)
      return failure('no-http', `${where} spoke no HTTP: ${count(n)} ${n === 1 ? 'response was' : 'responses were'} not HTTP (${listKinds(notHttp)})` +
        (errors > n ? `, and ${count(errors - n)} requests failed otherwise` : ''))
    }
    const sent = result.requests.sent
    return failure('no-response', `${where} answered none of the ${count(sent)} requests sent in ${result.duration.toFixed(1)} s` +
      (errors > 0 ? ` (${listKinds(kinds)})` : ` (they were still waiting when the run ended; -t allows ${result.hotpath.options.timeout} s)`))
  }
  if (bad * 2 <= total) return null
  const failing = statuses.filter(s => !answered(s.code)).sort((a, b) => b.count - a.count)
  const responsesPart = failing.length === 1
    ? `${count(badResponses)} of ${count(completed)} responses were ${statusName(failing[0].code)}`
    : `${count(badResponses)} of ${count(completed)} responses were not 2xx (${failing.slice(0, 3).map(s => `${statusName(s.code)} ×${count(s.count)}`).join(', ')}${failing.length > 3 ? ', …' : ''})`
  const errorsPart = `${count(errors)} of ${count(total)} requests ended in errors (${listKinds(kinds)})`
  if (badResponses >= errors) {
    return failure('non-2xx', `the load failed: ${responsesPart}${errors > 0 ? `; ${count(errors)} more requests ended in errors (${listKinds(kinds)})` : ''}`)
  }
  return failure('errors', `the load failed: ${errorsPart}${badResponses > 0 ? `; ${responsesPart}` : ''}`)
}

/** @param {string} url */
function hostOf (url) {
  try {
    return new URL(url).host
  } catch {
    return url
  }
}

/** @param {string} code */
function statusName (code) {
  const name = STATUS_CODES[code]
  return name ? `${code} ${name}` : code
}

/** @param {[string, number][]} kinds sorted, most first */
function listKinds (kinds) {
  return kinds.slice(0, 3).map(([kind, n]) => `${kind} ×${count(n)}`).join(', ') + (kinds.length > 3 ? ', …' : '')
}

/** @param {number} n */
const count = (n) => Math.round(n).toLocaleString('en-US')

/** @param {number[]} xs */
const sum = (xs) => xs.reduce((a, b) => a + b, 0)

/**
 * Decoded latency histogram of a result, in µs. The caller owns it (call destroy()).
 * @param {LoadResult} result
 */
export function latencyHistogram (result) {
  return decodeHistogram(result.hotpath.shard.histogram)
}
