// `hotpath compare`: the command. The same thing one layer down: the figures judged against noise
// (src/load/compare.js); the page is src/report/html/compare-page.js.
import { stat, mkdir, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { UsageError } from '../errors.js'
import { diagnose } from '../analysis/diagnose.js'
import { readRun } from '../analysis/run-data.js'
import { compareResults, settingDifferences } from '../load/compare.js'
import { isDoctorResult, loadResultProblem, readResultFile } from '../load/result-file.js'
import { loadFailure } from '../load/result.js'
import { damagedFiles, describeDifference, formatComparison, runWarnings } from '../report/compare-text.js'
import { openInBrowser, relativeChange, renderCompareReport, runFigures } from '../report/html/index.js'
import { wordDiagnosis } from '../report/words/diagnosis.js'
import { readJsonFile } from '../read-json.js'
import { VERSION } from '../version.js'
import { numberFlag } from './args.js'
import { LOAD_FAILED } from './exit-codes.js'
import { jsonFlag, jsonOutput, openFlag, writeJson } from './output-flags.js'

/** @typedef {import('../report/compare-text.js').Input} Input */

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'compare',
  usage: 'hotpath compare [options] <before> <after>',
  summary: 'Compare two runs side by side: the change in each figure, and whether it is beyond noise: a change of at\n' +
    'least 2% that Welch\'s t-test over the per-second samples of each run finds significant (p < 0.05), or that is at\n' +
    'least 5 times the spread of the steadier run\'s seconds with every second of one run beyond the other\'s. Says first\n' +
    'when the runs were loaded differently, and exits 3 when either load failed. Each run is a load result\n' +
    '(hotpath load --json), a doctor result (hotpath doctor --json) or a doctor run directory (.hotpath/<time>-doctor).',
  options: {
    json: jsonFlag('the comparison'),
    'max-regression': { type: 'string', value: 'percent', description: 'exit 1 if requests/s, p50 or p99 got worse by more than this, beyond noise' },
    report: { type: 'string', value: 'file', description: 'also write both runs\' figures and charts side by side as one HTML page' },
    open: openFlag('the HTML page (with --report)')
  },
  details: 'Examples:\n' +
    '  hotpath compare before.json after.json\n' +
    '  hotpath compare --report compare.html .hotpath/2026-01-01T10-00-00-000Z-doctor .hotpath/2026-01-01T10-05-00-000Z-doctor'
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 */
export async function run ({ values, positionals }, io) {
  if (positionals.length !== 2) throw new UsageError(`compare needs exactly two result files or run directories, got ${positionals.length}`)
  const maxRegression = numberFlag('max-regression', /** @type {string | undefined} */ (values['max-regression']), { allowZero: true })
  const reportFile = /** @type {string | undefined} */ (values.report)
  if (values.open && reportFile === undefined) throw new UsageError('--open needs --report <file>')
  const json = jsonOutput(values)
  const [a, b] = await Promise.all(positionals.map(readInput))
  const rows = a.load && b.load ? compareResults(a.load, b.load) : []
  const doctor = a.diagnosis || b.diagnosis ? doctorRows(a, b) : null
  if (maxRegression !== undefined && !(a.load && b.load)) {
    throw new UsageError(`--max-regression needs a load result in both runs; ${(a.load ? b : a).path} has none (its load came from --on-port)`)
  }
  const differences = a.load && b.load ? settingDifferences(a.load, b.load) : []
  const failed = [a, b].filter(x => x.load && loadFailure(x.load))
  const warnings = [
    ...[a, b].flatMap(x => runWarnings(x)),
    ...(differences.length > 0 ? [`warning: the runs were loaded differently (${differences.map(describeDifference).join(', ')}): their figures differ for that too`] : [])
  ].map(line => `hotpath compare: ${line}`)

  await writeJson(json, JSON.stringify({ tool: 'hotpath', version: VERSION, before: positionals[0], after: positionals[1], warnings, differences, figures: rows, ...(doctor ? { doctor } : {}) }, null, 2) + '\n', io)
  if (json.stdout) {
    for (const line of warnings) io.stderr.write(`${line}\n`)
  } else {
    io.stdout.write(formatComparison(positionals, a, b, { warnings, rows, doctor }))
  }
  if (reportFile !== undefined) await writeReport(reportFile, a, b, values, io)

  // A failed load measured its failures, not the server: no comparison with it passes. Nor does one with a run whose
  // damaged files cost its verdict or culprits (doctor --analyse exits 2 on it too).
  if (failed.length > 0) return LOAD_FAILED
  if ([a, b].some(x => damagedFiles(x).length > 0)) return 2
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

/**
 * Writes the HTML report of both runs, and says where.
 * @param {string} reportFile
 * @param {Input} a
 * @param {Input} b
 * @param {Record<string, unknown>} values
 * @param {import('./main.js').Io} io
 */
async function writeReport (reportFile, a, b, values, io) {
  const label = (/** @type {Input} */ x) => x.path
  const html = renderCompareReport([
    { label: label(a), diagnosis: a.diagnosis, runData: a.runData, load: a.load },
    { label: label(b), diagnosis: b.diagnosis, runData: b.runData, load: b.load }
  ])
  try {
    await mkdir(dirname(resolve(reportFile)), { recursive: true })
    await writeFile(reportFile, html)
  } catch (err) {
    throw new UsageError(`cannot write the report to '${reportFile}': ${/** @type {NodeJS.ErrnoException} */ (err).code ?? err}`)
  }
  const shown = relative(process.cwd(), resolve(reportFile))
  ;(values.json ? io.stderr : io.stdout).write(`Report: ${shown.startsWith('..') ? resolve(reportFile) : shown}\n`)
  if (values.open) {
    const opened = await openInBrowser(resolve(reportFile))
    if (!opened.ok) io.stderr.write(`hotpath compare: could not open a browser (${opened.reason}); open ${resolve(reportFile)} yourself\n`)
  }
}

/**
 * Reads one side: a doctor run directory (diagnosed again here), a doctor result (with its run directory's samples
 * when that is still there), or a load result. A load inside a run is checked like a load result file.
 * @param {string} path
 * @returns {Promise<Input>}
 */
async function readInput (path) {
  let isDir = false
  try {
    isDir = (await stat(path)).isDirectory()
  } catch {}
  if (isDir) {
    const runData = readRun(path)
    checkLoad(runData.run.load, join(path, 'run.json'), 'load.')
    return { path, load: runData.run.load, diagnosis: wordDiagnosis(diagnose(runData)), runData }
  }
  const data = /** @type {any} */ (await readJsonFile(path, 'a hotpath load or doctor result, or a doctor run directory'))
  if (isDoctorResult(data) && Array.isArray(data.evidence)) {
    const diagnosis = /** @type {import('../report/words/diagnosis.js').Diagnosis} */ (data)
    const load = data.load?.hotpath?.shard ? data.load : null
    checkLoad(load, path, 'load.')
    /** @type {import('../analysis/run-data.js').RunData | null} */
    let runData = null
    const dir = data.run?.dir
    if (typeof dir === 'string' && existsSync(join(dir, 'run.json'))) {
      try {
        runData = readRun(dir)
      } catch {}
    }
    return { path, load, diagnosis, runData }
  }
  // A load result; readResultFile says what is wrong with anything else.
  return { path, load: await readResultFile(path), diagnosis: null, runData: null }
}

/**
 * @param {unknown} load a load result inside a doctor result or run, or null
 * @param {string} file
 * @param {string} at where it sits in the file
 */
function checkLoad (load, file, at) {
  if (load === null || load === undefined) return
  const problem = loadResultProblem(load, at)
  if (problem !== null) throw new UsageError(`'${file}' holds an invalid load result: ${problem}`)
}

/**
 * The doctor's figures of both runs, with the relative change (NaN where it cannot be said).
 * @param {Input} a
 * @param {Input} b
 * @returns {import('../report/compare-text.js').DoctorRow[]}
 */
function doctorRows (a, b) {
  const fa = runFigures(a.diagnosis)
  const fb = runFigures(b.diagnosis)
  return [
    { figure: 'category', unit: '', before: a.diagnosis?.category ?? null, after: b.diagnosis?.category ?? null, change: null },
    ...fa.map((f, i) => {
      const change = relativeChange(f.value, fb[i].value)
      return { figure: f.figure, unit: f.unit, before: f.value, after: fb[i].value, change: Number.isFinite(change) ? change : null }
    }).filter(r => r.before !== null || r.after !== null)
  ]
}
