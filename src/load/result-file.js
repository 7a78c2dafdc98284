import { UsageError } from '../errors.js'
import { readJsonFile } from '../read-json.js'
import { decodeHistogram } from './histogram.js'

/**
 * Reads a saved load result (the output of `hotpath load --json` or `-o`), checked as far as merge, compare and the
 * reports read it: a bad file is refused in one line that names it and says what is wrong, never an internal error.
 * @param {string} file
 * @returns {Promise<import('./result.js').LoadResult>}
 */
export async function readResultFile (file) {
  const data = /** @type {any} */ (await readJsonFile(file, 'a hotpath load result'))
  if (isDoctorResult(data)) {
    throw new UsageError(`'${file}' is a hotpath doctor result, not a load result (hotpath load --json or -o writes one)`)
  }
  if (!isObject(data?.hotpath?.shard)) {
    throw new UsageError(`'${file}' is not a hotpath load result (made by hotpath load --json or -o)`)
  }
  const problem = loadResultProblem(data)
  if (problem !== null) throw new UsageError(`'${file}' is not a valid hotpath load result: ${problem}`)
  return data
}

/**
 * A doctor result: `hotpath doctor --json`, which holds a load result (under `load`) among much else.
 * @param {unknown} data
 */
export function isDoctorResult (data) {
  const d = /** @type {any} */ (data)
  return d?.tool === 'hotpath' && typeof d.category === 'string'
}

/**
 * What is wrong with a load result, or null: the fields the commands read, and every encoded histogram, which must
 * decode and hold as many latencies as the counts beside it say.
 * @param {unknown} result
 * @param {string} [at] where the result sits in its file, for the message (e.g. 'load.')
 * @returns {string | null}
 */
export function loadResultProblem (result, at = '') {
  try {
    checkResult(/** @type {any} */ (result))
    return null
  } catch (err) {
    if (!(err instanceof Invalid)) throw err
    return `${at}${err.path} ${err.message}`
  }
}

class Invalid extends Error {
  /**
   * @param {string} path
   * @param {string} message
   */
  constructor (path, message) {
    super(message)
    this.path = path
  }
}

/** @param {unknown} v */
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * @param {any} parent
 * @param {string} path dotted, from the result's root; its last part is the key in `parent`
 * @returns {any}
 */
function object (parent, path) {
  const v = parent[/** @type {string} */ (path.split('.').at(-1))]
  if (!isObject(v)) throw new Invalid(path, 'is missing or not an object')
  return v
}

/**
 * @param {any} parent
 * @param {string} path
 * @param {string[]} keys
 */
function numbers (parent, path, keys) {
  for (const key of keys) {
    const v = parent[key]
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      throw new Invalid(path === '' ? key : `${path}.${key}`, v === undefined ? 'is missing' : `is not a count or a time (${JSON.stringify(v)})`)
    }
  }
}

/**
 * @param {any} map
 * @param {string} path
 */
function countsOf (map, path) {
  for (const [key, v] of Object.entries(map)) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new Invalid(`${path}.${key}`, `is not a count (${JSON.stringify(v)})`)
  }
}

/**
 * @param {unknown} encoded
 * @param {string} path
 * @param {number} [expected] latencies it must hold, when the counts beside it say
 */
function histogram (encoded, path, expected) {
  if (typeof encoded !== 'string') throw new Invalid(path, 'is missing or not an encoded histogram')
  let h
  try {
    h = decodeHistogram(encoded)
  } catch (err) {
    throw new Invalid(path, `is not a valid HDR histogram (${/** @type {Error} */ (err).message})`)
  }
  const total = h.totalCount
  h.destroy()
  if (expected !== undefined && total !== expected) throw new Invalid(path, `holds ${total} latencies where the counts say ${expected}`)
}

const SUMMARY = ['mean', 'stddev', 'min', 'max', 'p50', 'p90', 'p99']

/** @param {any} r */
function checkResult (r) {
  if (!isObject(r)) throw new Invalid('the result', 'is not an object')
  if (typeof r.url !== 'string') throw new Invalid('url', 'is missing or not a string')
  numbers(r, '', ['connections', 'pipelining', 'workers', 'duration', 'errors', 'timeouts', 'non2xx'])
  numbers(object(r, 'latency'), 'latency', [...SUMMARY, 'p99_9'])
  numbers(object(r, 'requests'), 'requests', [...SUMMARY, 'total', 'sent'])
  numbers(object(r, 'throughput'), 'throughput', [...SUMMARY, 'total'])
  const stats = object(r, 'statusCodeStats')
  for (const code of Object.keys(stats)) numbers(object(stats, `statusCodeStats.${code}`), `statusCodeStats.${code}`, ['count'])
  const hotpath = object(r, 'hotpath')
  const options = object(hotpath, 'hotpath.options')
  if (typeof options.method !== 'string') throw new Invalid('hotpath.options.method', 'is missing or not a string')
  numbers(options, 'hotpath.options', ['rate'])
  countsOf(object(hotpath, 'hotpath.errorKinds'), 'hotpath.errorKinds')

  const shard = object(hotpath, 'hotpath.shard')
  numbers(shard, 'hotpath.shard', ['start', 'finish'])
  if (shard.finish < shard.start) throw new Invalid('hotpath.shard.finish', 'is before its start')
  const counts = object(shard, 'hotpath.shard.counts')
  numbers(counts, 'hotpath.shard.counts', ['sent', 'completed', 'bytes', 'errors', 'timeouts', 'resets'])
  countsOf(object(shard, 'hotpath.shard.statusCodes'), 'hotpath.shard.statusCodes')
  countsOf(object(shard, 'hotpath.shard.errorKinds'), 'hotpath.shard.errorKinds')
  histogram(shard.histogram, 'hotpath.shard.histogram', counts.completed)
  if (shard.uncorrectedHistogram !== null && shard.uncorrectedHistogram !== undefined) {
    histogram(shard.uncorrectedHistogram, 'hotpath.shard.uncorrectedHistogram', counts.completed)
  }
  // Send lateness counts sends, which no count beside it records (requests lost with a connection were sent too).
  if (shard.latenessHistogram !== null && shard.latenessHistogram !== undefined) histogram(shard.latenessHistogram, 'hotpath.shard.latenessHistogram')
  if (!Array.isArray(shard.series)) throw new Invalid('hotpath.shard.series', 'is missing or not a list')
  shard.series.forEach((/** @type {any} */ bin, /** @type {number} */ i) => {
    const path = `hotpath.shard.series[${i}]`
    if (!isObject(bin)) throw new Invalid(path, 'is not an object')
    numbers(bin, path, ['start', 'duration', 'requests', 'bytes', 'errors'])
    histogram(bin.histogram, `${path}.histogram`, bin.requests)
  })
}
