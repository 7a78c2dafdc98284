// Where a test's fixture says something: the line a culprit is expected at, found by its text rather than its number.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import { ROOT } from './cli.js'

/**
 * The 1-based line of the first line of a file that contains `text`.
 * @param {string} file absolute, or relative to the repository
 * @param {string} text
 */
export async function lineOf (file, text) {
  const lines = (await readFile(isAbsolute(file) ? file : join(ROOT, file), 'utf8')).split('\n')
  const i = lines.findIndex(l => l.includes(text))
  assert.ok(i !== -1, `${file} contains ${text}`)
  return i + 1
}
