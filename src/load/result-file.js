import { readFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'

/**
 * Reads a saved load result: the output of `hotpath load --json`, or the `load` section of a doctor result.
 * @param {string} file
 * @returns {Promise<import('./result.js').LoadResult>}
 */
export async function readResultFile (file) {
  let text
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read '${file}': ${/** @type {NodeJS.ErrnoException} */ (err).code ?? err}`)
  }
  /** @type {any} */
  let data
  try {
    data = JSON.parse(text)
  } catch {
    throw new UsageError(`'${file}' is not JSON`)
  }
  const result = data?.load?.hotpath ? data.load : data
  const shard = result?.hotpath?.shard
  if (!shard || typeof shard.histogram !== 'string' || !Array.isArray(shard.series) || typeof shard.counts !== 'object') {
    throw new UsageError(`'${file}' is not a hotpath load result (made by hotpath load --json, or hotpath doctor --json)`)
  }
  return result
}
