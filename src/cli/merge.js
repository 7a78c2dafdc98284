import { writeFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { readResultFile } from '../load/result-file.js'
import { assertMergeable, mergeResults } from '../load/merge.js'
import { headlines, loadTables } from '../report/load-text.js'

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'merge',
  usage: 'hotpath merge [options] <result.json> <result.json> [...]',
  summary: 'Merge load results taken at the same time on several machines (or processes) into one. Counts and latency\n' +
    'percentiles are exact (HDR histograms add); requests per second add up second by second. Refuses one result given\n' +
    'twice and results of different methods or URLs; results that did not run at the same time merge with a warning.',
  options: {
    json: { type: 'boolean', description: 'print the merged result as JSON' },
    output: { type: 'string', short: 'o', value: 'file', description: 'also write the merged JSON to a file' }
  }
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 * @returns {Promise<number>} 0, or 3 when the merged load failed
 */
export async function run ({ values, positionals }, io) {
  if (positionals.length < 2) throw new UsageError('merge needs at least two result files')
  const results = await Promise.all(positionals.map(readResultFile))
  assertMergeable(results, positionals)
  const merged = mergeResults(results)
  // Which result ran when, under the warning that they did not run together, so a reader sees which is out of step.
  const first = [...headlines(merged, 'merge'), ...(merged.merged?.together === false ? [`  ${timeRanges(results, positionals)}`] : [])]
  const json = JSON.stringify(merged, null, 2) + '\n'
  if (values.output) await writeFile(/** @type {string} */ (values.output), json)
  if (values.json) {
    io.stdout.write(json)
    for (const line of first) io.stderr.write(`${line}\n`)
  } else {
    io.stdout.write(first.map(line => `${line}\n`).join('') + loadTables(merged))
  }
  return merged.failed ? 3 : 0
}

/**
 * When each result ran: `a.json 10:00:01–10:00:05, b.json 10:07:12–10:07:16 UTC`.
 * @param {import('../load/result.js').LoadResult[]} results
 * @param {string[]} names
 */
function timeRanges (results, names) {
  const iso = (/** @type {number} */ ms) => new Date(ms).toISOString()
  const days = new Set(results.flatMap(r => [iso(r.hotpath.shard.start), iso(r.hotpath.shard.finish)].map(t => t.slice(0, 10))))
  const time = (/** @type {number} */ ms) => days.size === 1 ? iso(ms).slice(11, 19) : iso(ms).slice(0, 19).replace('T', ' ')
  return results.map((r, i) => `${names[i]} ${time(r.hotpath.shard.start)}–${time(r.hotpath.shard.finish)}`).join(', ') + ' UTC'
}
