// `hotpath compare` for a terminal: the load figures with their verdicts against noise, the doctor's figures of both
// runs, and the warnings that say when either run's figures need a caveat. The comparison itself is load/compare.js;
// the command, cli/compare.js.
import { formatBytes, formatCount, formatMs, formatPercent, table } from './format.js'
import { formatChange } from './html/run-figures.js'
import { loadFailure } from '../load/result.js'

/**
 * @typedef {object} Input
 * @property {string} path
 * @property {import('../load/result.js').LoadResult | null} load
 * @property {import('./words/diagnosis.js').Diagnosis | null} diagnosis
 * @property {import('../analysis/run-data.js').RunData | null} runData
 */

/**
 * @typedef {{ figure: string, unit: string, before: number | string | null, after: number | string | null, change: number | null }} DoctorRow
 */

/**
 * The comparison for a terminal: the load figures with their verdicts, then the doctor's figures of both runs.
 * @param {string[]} positionals the two inputs as given
 * @param {Input} a
 * @param {Input} b
 * @param {{ warnings: string[], rows: import('../load/compare.js').Comparison[], doctor: DoctorRow[] | null }} found
 * @returns {string}
 */
export function formatComparison (positionals, a, b, { warnings, rows, doctor }) {
  /** @type {string[]} */
  const out = []
  for (const line of warnings) out.push(`${line}\n`)
  if (a.load && b.load) {
    const fmt = (/** @type {number} */ v, /** @type {string} */ unit) =>
      unit === 'ms' ? formatMs(v) : unit === 'B/s' ? formatBytes(v, '/s') : formatCount(v)
    const verdictText = {
      better: 'better',
      worse: 'WORSE',
      same: 'within noise',
      unknown: 'too few seconds to judge'
    }
    out.push(table([
      ['', 'before', 'after', 'change', 'verdict'],
      ...rows.map(r => [
        r.figure,
        fmt(r.a, r.unit),
        fmt(r.b, r.unit),
        Number.isFinite(r.change) ? `${r.change >= 0 ? '+' : '−'}${Math.abs(r.change * 100).toFixed(1)}%` : r.b > r.a ? 'new' : '',
        verdictText[r.verdict] + verdictBasis(r)
      ])
    ]) + '\n')
    out.push(`before: ${positionals[0]} (${a.load.duration} s, ${a.load.connections} connections)\nafter:  ${positionals[1]} (${b.load.duration} s, ${b.load.connections} connections)\n`)
  } else if (a.load || b.load) {
    out.push(`No load figures to compare: ${(a.load ? b : a).path} has no load result (its load came from --on-port).\n`)
  }
  if (doctor) {
    out.push(`\nDiagnosis (one value per run, no noise estimate)\n${table([
      ['', 'before', 'after', 'change'],
      ...doctor.map(r => [r.figure, formatFigure(r.before, r.unit), formatFigure(r.after, r.unit),
        r.change === null ? (typeof r.before === 'number' && typeof r.after === 'number' && r.before === 0 && r.after !== 0 ? 'new' : '') : formatChange(r.change)])
    ])}\n`)
  }
  return out.join('')
}

/**
 * Why the figures of one run need a caveat: its load failed, or was interrupted.
 * @param {Input} x
 * @returns {string[]}
 */
export function runWarnings (x) {
  const damaged = damagedFiles(x).map(w => `${x.path} is unreliable, files of the run are damaged: ${w.message}`)
  if (!x.load) return damaged
  const failure = loadFailure(x.load)
  return [
    ...(failure ? [`${x.path}: ${failure.detail}`] : []),
    ...damaged,
    ...(x.load.interrupted ? [`${x.path} was interrupted after ${x.load.duration.toFixed(1)} s: its figures cover the run until then`] : [])
  ]
}

/**
 * The damaged files of a doctor run that cost its verdict or culprits, as doctor names them.
 * @param {Input} x
 */
export function damagedFiles (x) {
  return (x.diagnosis?.warnings ?? []).filter(w => w.affects !== 'nothing')
}

/** @param {import('../load/compare.js').SettingDifference} d */
export function describeDifference (d) {
  if (d.setting === 'requests') return 'the requests\' headers or body'
  const value = (/** @type {string | number} */ v) => typeof v === 'number' ? formatCount(v) : v
  return `${d.setting} ${value(d.before)} → ${value(d.after)}`
}

/**
 * Why a verdict was reached: the t-test's p, or how far beyond the spread of the seconds the change is.
 * @param {import('../load/compare.js').Comparison} r
 */
function verdictBasis (r) {
  if (r.verdict === 'same' || r.verdict === 'unknown') return ''
  if (r.times !== undefined) return r.times === Infinity ? ' (beyond any spread)' : ` (${formatCount(r.times)}× the spread)`
  return Number.isFinite(r.p) ? ` (p=${r.p < 0.001 ? '<0.001' : r.p.toFixed(3)})` : ''
}

/**
 * @param {number | string | null} v
 * @param {string} unit
 */
function formatFigure (v, unit) {
  if (v === null) return '–'
  if (typeof v === 'string') return v
  switch (unit) {
    case 'ms': return formatMs(v)
    case 'ratio': return formatPercent(v, v < 0.1 ? 1 : 0)
    case 'B': return formatBytes(v)
    case 'B/s': return formatBytes(v, '/s')
    default: return formatCount(v)
  }
}
