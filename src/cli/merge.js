// `hotpath merge`: the command. The same thing one layer down, adding results up: src/load/merge.js.
import { writeFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { readResultFile } from '../load/result-file.js'
import { resultsInLog } from '../load/result-log.js'
import { assertMergeable, mergeResults } from '../load/merge.js'
import { headlines, loadTables } from '../report/load-text.js'
import { LOAD_FAILED } from './exit-codes.js'
import { jsonFlag, jsonOutput, writeJson } from './output-flags.js'

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'merge',
  usage: 'hotpath merge [options] <result.json> <result.json> [...]\n       kubectl logs -l job-name=<job> --tail=-1 | hotpath merge [options] -',
  summary: 'Merge load results taken at the same time on several machines (or processes) into one. Counts and latency\n' +
    'percentiles are exact (HDR histograms add); requests per second add up second by second. Refuses one result given\n' +
    'twice and results of different methods or URLs; results that did not run at the same time merge with a warning.\n' +
    '- reads the results from stdin, framed by hotpath load --markers (the logs of the pods hotpath kube starts).\n' +
    'The segments of one load (hotpath load --segment) must all be there, once each, of one run and the same flags;\n' +
    'segments that began more than 1 s apart are merged and marked failed (exit 3).',
  options: {
    json: jsonFlag('the merged result'),
    output: { type: 'string', short: 'o', value: 'file', description: 'also write the merged JSON to a file (as --json=<file>)' }
  }
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 * @returns {Promise<number>} 0; 2 for input that is not one load (a missing or doubled segment, …); 3 when the merged
 *   load failed or its segments did not start together
 */
export async function run ({ values, positionals }, io) {
  if (positionals.filter(p => p === '-').length > 1) throw new UsageError("give '-' (stdin) once")
  const where = jsonOutput(values)
  if (positionals.length < 2 && !positionals.includes('-')) throw new UsageError('merge needs at least two result files, or - to read them from a log on stdin')
  const parts = (await Promise.all(positionals.map(readPart))).flat()
  const results = parts.map(p => p.result)
  const names = parts.map(p => p.name)
  if (results.length < 2 && !results.some(r => r.hotpath.segment)) throw new UsageError(`merge needs at least two results, stdin held ${results.length}`)
  const merged = mergeResults(results, names)
  assertMergeable(results, names)
  // Which result ran when, under the warning that they did not run together, so a reader sees which is out of step.
  const first = [
    ...headlines(merged, 'merge'),
    ...(merged.merged?.together === false ? [`  ${timeRanges(results, names)}`] : []),
    ...segmentsLine(merged)
  ]
  const json = JSON.stringify(merged, null, 2) + '\n'
  if (values.output) await writeFile(/** @type {string} */ (values.output), json)
  await writeJson(where, json, io)
  if (where.stdout) {
    for (const line of first) io.stderr.write(`${line}\n`)
  } else {
    io.stdout.write(first.map(line => `${line}\n`).join('') + loadTables(merged))
  }
  return merged.failed ? LOAD_FAILED : 0
}

/**
 * The results of one argument: a file, or every result framed in the log on stdin.
 * @param {string} arg
 * @returns {Promise<{ name: string, result: import('../load/result.js').LoadResult }[]>}
 */
async function readPart (arg) {
  if (arg !== '-') return [{ name: arg, result: await readResultFile(arg) }]
  if (process.stdin.isTTY) throw new UsageError('merge - reads results from stdin: pipe the logs in (kubectl logs -l job-name=<job> --tail=-1 | hotpath merge -)')
  let text = ''
  process.stdin.setEncoding('utf8')
  for await (const chunk of process.stdin) text += chunk
  return resultsInLog(text)
}

/**
 * What the segments of a split load were, and how together they ran.
 * @param {import('../load/result.js').LoadResult} merged
 * @returns {string[]}
 */
function segmentsLine (merged) {
  const s = merged.merged?.segments
  if (!s) return []
  const asked = s.startAt === null ? '' : `, asked for ${new Date(s.startAt).toISOString()}`
  const rate = s.rate === null ? '' : `; rate ${fmt(s.rate.achieved)} req/s together, of ${fmt(s.rate.intended)} intended`
  return [`Segments: all ${s.count} of run ${s.run}, began within ${s.startSkew.toFixed(3)} s of each other${asked}${rate}`]
}

/** @param {number} n */
const fmt = (n) => n.toLocaleString('en-US', { maximumFractionDigits: 1 })

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
