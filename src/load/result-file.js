import { UsageError } from '../errors.js'
import { readJsonFile } from '../read-json.js'

/**
 * Reads a saved load result: the output of `hotpath load --json`, or the `load` section of a doctor result.
 * @param {string} file
 * @returns {Promise<import('./result.js').LoadResult>}
 */
export async function readResultFile (file) {
  const data = /** @type {any} */ (await readJsonFile(file))
  const result = data?.load?.hotpath ? data.load : data
  const shard = result?.hotpath?.shard
  if (!shard || typeof shard.histogram !== 'string' || !Array.isArray(shard.series) || typeof shard.counts !== 'object') {
    throw new UsageError(`'${file}' is not a hotpath load result (made by hotpath load --json, or hotpath doctor --json)`)
  }
  return result
}
