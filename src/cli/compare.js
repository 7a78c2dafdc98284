import { UsageError } from '../errors.js'
import { compareResults } from '../load/compare.js'
import { readResultFile } from '../load/result-file.js'
import { formatBytes, formatCount, formatMs, table } from '../report/format.js'
import { numberFlag } from './args.js'

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'compare',
  usage: 'hotpath compare [options] <before.json> <after.json>',
  summary: 'Compare two load results side by side: the change in each figure, and whether it is beyond noise\n' +
    '(Welch\'s t-test over the per-second samples of each run, p < 0.05, and a change of at least 2%).',
  options: {
    json: { type: 'boolean', description: 'print the comparison as JSON' },
    'max-regression': { type: 'string', value: 'percent', description: 'exit 1 if requests/s, p50 or p99 got worse by more than this, beyond noise' }
  }
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 */
export async function run ({ values, positionals }, io) {
  if (positionals.length !== 2) throw new UsageError(`compare needs exactly two result files, got ${positionals.length}`)
  const maxRegression = numberFlag('max-regression', /** @type {string | undefined} */ (values['max-regression']), { allowZero: true })
  const [a, b] = await Promise.all(positionals.map(readResultFile))
  const rows = compareResults(a, b)
  if (values.json) {
    io.stdout.write(JSON.stringify({ before: positionals[0], after: positionals[1], figures: rows }, null, 2) + '\n')
  } else {
    const fmt = (/** @type {number} */ v, /** @type {string} */ unit) =>
      unit === 'ms' ? formatMs(v) : unit === 'B/s' ? formatBytes(v, '/s') : formatCount(v)
    const verdictText = {
      better: 'better',
      worse: 'WORSE',
      same: 'within noise',
      unknown: 'too few seconds to judge'
    }
    io.stdout.write(table([
      ['', 'before', 'after', 'change', 'verdict'],
      ...rows.map(r => [
        r.figure,
        fmt(r.a, r.unit),
        fmt(r.b, r.unit),
        Number.isFinite(r.change) ? `${r.change >= 0 ? '+' : '−'}${Math.abs(r.change * 100).toFixed(1)}%` : r.b > r.a ? 'new' : '',
        verdictText[r.verdict] + (Number.isFinite(r.p) && r.verdict !== 'same' ? ` (p=${r.p < 0.001 ? '<0.001' : r.p.toFixed(3)})` : '')
      ])
    ]) + '\n')
    io.stdout.write(`before: ${positionals[0]} (${a.duration} s, ${a.connections} connections)\nafter:  ${positionals[1]} (${b.duration} s, ${b.connections} connections)\n`)
  }
  if (maxRegression !== undefined) {
    const gate = rows.filter(r => ['Requests/s', 'Latency p50', 'Latency p99'].includes(r.figure))
    const failed = gate.filter(r => r.verdict === 'worse' && Math.abs(r.change) * 100 > maxRegression)
    if (failed.length > 0) {
      io.stderr.write(`hotpath compare: regression beyond ${maxRegression}%: ${failed.map(r => `${r.figure} ${(r.change * 100).toFixed(1)}%`).join(', ')}\n`)
      return 1
    }
  }
  return 0
}
