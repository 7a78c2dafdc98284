import { writeFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { readResultFile } from '../load/result-file.js'
import { mergeResults } from '../load/result.js'
import { formatLoadResult } from '../report/load-text.js'

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'merge',
  usage: 'hotpath merge [options] <result.json> <result.json> [...]',
  summary: 'Merge load results taken at the same time on several machines (or processes) into one. Counts and latency\n' +
    'percentiles are exact (HDR histograms add); requests per second add up second by second.',
  options: {
    json: { type: 'boolean', description: 'print the merged result as JSON' },
    output: { type: 'string', short: 'o', value: 'file', description: 'also write the merged JSON to a file' }
  }
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 */
export async function run ({ values, positionals }, io) {
  if (positionals.length < 2) throw new UsageError('merge needs at least two result files')
  const results = await Promise.all(positionals.map(readResultFile))
  const merged = mergeResults(results)
  const json = JSON.stringify(merged, null, 2) + '\n'
  if (values.output) await writeFile(/** @type {string} */ (values.output), json)
  io.stdout.write(values.json ? json : formatLoadResult(merged))
  return 0
}
