// Load results carried in a log: `hotpath load --markers` prints its JSON result between two marker lines, so that
// the logs of many pods, concatenated by `kubectl logs`, can be read back one result each by `hotpath merge -`.
import { UsageError } from '../errors.js'
import { loadResultProblem } from './result-file.js'

const BEGIN = '----- hotpath result begin'
const END = '----- hotpath result end -----'
const BEGIN_LINE = /----- hotpath result begin(?:: (.*?))? -----\s*$/
const END_LINE = /----- hotpath result end -----\s*$/

/**
 * The result framed for a log.
 * @param {string} json the result as JSON text, ending with a newline
 * @param {string} [label] what the result is, on the begin line: `segment 2/4 of run 3f2a…`
 * @returns {string}
 */
export function framed (json, label) {
  return `${BEGIN}${label ? `: ${label}` : ''} -----\n${json}${END}\n`
}

/**
 * Every result framed in a log, in order. Lines outside the markers (stderr of the pods, kubectl's own) are skipped;
 * a log line prefix (kubectl logs --prefix: `[pod/x/hotpath] `) is taken off the lines of the result it opens, and
 * results whose lines interleave under different prefixes are kept apart.
 * @param {string} text
 * @returns {{ name: string, result: import('./result.js').LoadResult }[]}
 */
export function resultsInLog (text) {
  /** @type {Map<string, { name: string, lines: string[] }>} */
  const open = new Map()
  /** @type {{ name: string, result: import('./result.js').LoadResult }[]} */
  const found = []
  const lines = text.split('\n')
  lines.forEach((line, i) => {
    const begin = BEGIN_LINE.exec(line)
    if (begin) {
      const prefix = line.slice(0, begin.index)
      const name = begin[1] ? `${begin[1]} (log line ${i + 1})` : `the result at log line ${i + 1}`
      const cut = open.get(prefix)
      if (cut) throw new UsageError(`${cut.name} is cut short: another result begins at line ${i + 1} before its end marker`)
      open.set(prefix, { name, lines: [] })
      return
    }
    const end = END_LINE.exec(line)
    const prefix = end ? line.slice(0, end.index) : longestPrefix(open, line)
    const block = prefix === null ? undefined : open.get(prefix)
    if (block === undefined || prefix === null) return
    if (end) {
      open.delete(prefix)
      found.push({ name: block.name, result: parse(block) })
    } else {
      block.lines.push(line.slice(prefix.length))
    }
  })
  const cut = [...open.values()][0]
  if (cut) throw new UsageError(`${cut.name} is cut short: the log ends before its end marker (did the pod finish?)`)
  if (found.length === 0) {
    throw new UsageError('no hotpath result in the log read from stdin: each part prints one between "' + BEGIN +
      ' …" and "' + END + '" (hotpath load --markers; for pods, kubectl logs needs --tail=-1)')
  }
  return found
}

/**
 * @param {Map<string, unknown>} open
 * @param {string} line
 * @returns {string | null}
 */
function longestPrefix (open, line) {
  let best = null
  for (const prefix of open.keys()) if (line.startsWith(prefix) && (best === null || prefix.length > best.length)) best = prefix
  return best
}

/**
 * @param {{ name: string, lines: string[] }} block
 * @returns {import('./result.js').LoadResult}
 */
function parse (block) {
  let data
  try {
    data = JSON.parse(block.lines.join('\n'))
  } catch (err) {
    throw new UsageError(`${block.name} is not valid JSON: ${/** @type {Error} */ (err).message}`)
  }
  const problem = loadResultProblem(data)
  if (problem !== null) throw new UsageError(`${block.name} is not a valid hotpath load result: ${problem}`)
  return data
}
