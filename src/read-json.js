import { readFile } from 'node:fs/promises'
import { UsageError } from './errors.js'

/**
 * Reads a JSON file a user pointed at, failing with one clear line: the file cannot be read, or is not JSON.
 * @param {string} file
 * @param {string} [expected] what it should hold, for the message, e.g. 'a .cpuprofile or .heapprofile'
 * @returns {Promise<unknown>}
 */
export async function readJsonFile (file, expected) {
  let text
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read '${file}': ${/** @type {NodeJS.ErrnoException} */ (err).code ?? err}`)
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new UsageError(`'${file}' is not JSON${expected ? ` (expected ${expected})` : ''}`)
  }
}
