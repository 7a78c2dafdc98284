import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { UsageError } from '../errors.js'
import { diagnose } from '../analysis/diagnose.js'
import { dirSources, readRun } from '../analysis/run-data.js'
import { THRESHOLDS } from '../analysis/thresholds.js'
import { analyseRetainers } from '../heap/run-retainers.js'
import { costRoseDuringLoad } from '../analysis/cost-check.js'
import { formatDiagnosis, formatUpdate } from '../report/doctor-text.js'
import { wordDiagnosis } from '../report/words/diagnosis.js'
import { openInBrowser, renderReport } from '../report/html/index.js'
import { durationFlag, numberFlag } from './args.js'
import { recordFromFlags, TARGET_FLAGS } from './target-run.js'
import { jsonFlag, jsonOutput, openFlag, writeJson } from './output-flags.js'
import { outcomeExit } from './exit-codes.js'
import { EXPERIMENT_FLAGS, experimentFlags, measureSettings, planSettings, savedExperiments } from './doctor-experiments.js'
import { withExperiments } from '../analysis/recommendations.js'
import { withRetry } from '../analysis/heap-retry.js'
import { planHeapRetry, retryHeapLimit, savedHeapRetry } from './doctor-heap-retry.js'

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'doctor',
  usage: 'hotpath doctor [options] -- <command...>\n       hotpath doctor [options] --attach <pid>\n       hotpath doctor --attach <pid> --observe <time>\n       hotpath doctor --analyse <run-dir>',
  summary: 'Start a server with hotpath\'s probe, load it, and say which class of problem it has — event-loop, io, gc,\n' +
    'memory-leak or healthy — with the evidence, the function, file and line to blame, and what to do. Works for any\n' +
    'command that runs node (node app.js, npm start, node --import tsx app.ts), cluster workers and worker threads.',
  options: {
    ...TARGET_FLAGS,
    json: jsonFlag('the diagnosis', { spaced: true }),
    report: { type: 'string', value: 'file', description: 'write the HTML report (verdict, charts, flame graph) here', default: '<run-dir>/report.html' },
    open: openFlag('the HTML report'),
    'report-profile': { type: 'boolean', description: 'embed the raw CPU profiles in the HTML report, to save from it as .cpuprofile files' },
    save: { type: 'string', value: 'dir', description: 'where to record the run', default: '.hotpath/<time>-doctor' },
    analyse: { type: 'string', value: 'dir', description: 're-analyse a recorded run without running anything' },
    interval: { type: 'string', value: 'ms', description: 'runtime sampling interval in the target', default: '10' },
    'profile-interval': { type: 'string', value: 'µs', description: 'CPU profile sampling interval', default: 'about 1,000 samples over what is profiled, 1000–10000' },
    'profile-all': { type: 'boolean', description: 'CPU-profile the whole load window (default: its middle third, at least 3 s, where the window is longer than 4.5 s)' },
    'no-profile': { type: 'boolean', description: 'do not CPU-profile the target (no culprits from CPU time)' },
    'heap-interval': { type: 'string', value: 'bytes', description: 'heap sampling interval for allocation culprits, sampled after the load when GC or what it left alive asks (0: off)', default: '262144' },
    'no-retainers': { type: 'boolean', description: 'when the load leaves megabytes alive, do not load twice more between heap snapshots to see what keeps them' },
    'snapshot-time': { type: 'string', value: 'time', description: 'the most the heap snapshots after the verdict may take (a heap too big for it is not snapshotted: hotpath heap is advised)', default: `${30}s` },
    'fail-on-problem': { type: 'boolean', description: 'exit 1 unless the verdict is healthy' },
    ...EXPERIMENT_FLAGS
  },
  details: 'Examples:\n' +
    '  hotpath doctor -- node server.js\n' +
    '  hotpath doctor -c 50 -d 20 --path /api/items --json diagnosis.json -- npm start\n' +
    '  hotpath doctor -- node --import tsx server.ts   # TypeScript: lines of the .ts files (docs/source-maps.md)\n' +
    '  hotpath doctor --on-port \'hotpath load -R 500 -d 30 http://127.0.0.1:$PORT/\' -- node server.js\n' +
    '  hotpath doctor --attach 4242       # a server already running, started without hotpath (Linux)\n' +
    '  hotpath doctor --attach 4242 --observe 60s   # production: no load sent, its own traffic, by route\n' +
    'The rules behind each verdict: docs/diagnosis.md'
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 * @returns {Promise<number>}
 */
export async function run ({ values, positionals, command, flags }, io) {
  const str = (/** @type {string} */ k) => /** @type {string | undefined} */ (values[k])
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}': put the server command after -- (hotpath doctor -- node server.js)`)
  const jsonFile = jsonOutput(values)

  if (str('analyse') !== undefined) {
    if (command.length > 0 || values.attach !== undefined) throw new UsageError(`give either --analyse <dir> or ${command.length > 0 ? '-- <command>' : '--attach <pid>'}, not both`)
    await analyseRetainers(/** @type {string} */ (str('analyse')), () => dirSources(/** @type {string} */ (str('analyse'))))
    const dir = /** @type {string} */ (str('analyse'))
    const diagnosis = wordDiagnosis(measured(diagnose(readRun(dir)), savedExperiments(dir), savedHeapRetry(dir)))
    return exitCode(diagnosis, await report(diagnosis, jsonFile, values, io))
  }
  if (command.length === 0 && values.attach === undefined) throw new UsageError('doctor needs the server command after -- (e.g. hotpath doctor -- node server.js), or --attach <pid>')

  const experiments = experimentFlags(values)
  const snapshotSeconds = /** @type {number} */ (durationFlag('snapshot-time', str('snapshot-time') ?? `${SNAPSHOT_SECONDS}s`))
  const runDir = str('save') ?? join('.hotpath', `${new Date().toISOString().replace(/[:.]/g, '-')}-doctor`)
  /** @type {Printed | null} the verdict as printed before the heap snapshots, when they were taken after it */
  let early = null
  const record = await recordFromFlags(values, command, io, {
    runDir,
    interval: /** @type {number} */ (numberFlag('interval', str('interval') ?? '10')),
    profileInterval: values['no-profile'] ? 0 : str('profile-interval') === undefined ? 'auto' : /** @type {number} */ (numberFlag('profile-interval', str('profile-interval'), { integer: true })),
    profileSlice: values['profile-all'] !== true,
    heapInterval: /** @type {number} */ (numberFlag('heap-interval', str('heap-interval') ?? '262144', { integer: true, allowZero: true })),
    // The heap phases after the window: allocation samples from half the GC share that makes a gc verdict (so that
    // one never lacks them), survivors and snapshots from what makes a leak's or a cost per request that climbed
    // (docs/diagnosis.md).
    memory: {
      minGcShare: THRESHOLDS.gcShare / 2,
      minKeptBytes: THRESHOLDS.leakBytes,
      minKeptRatio: THRESHOLDS.leakRatio,
      snapshots: !values['no-retainers'] && snapshotSeconds > 0,
      snapshotBudgetMs: snapshotSeconds * 1000,
      costRose: window => costRoseDuringLoad(runDir, window)
    },
    // The heap snapshots come after the verdict: it is printed (and written) from the window, then updated.
    onVerdict: async () => {
      io.stderr.write('Analysing…\n')
      const diagnosis = wordDiagnosis(diagnose(readRun(runDir, { live: true })))
      if (!jsonFile.stdout) early = { diagnosis, code: await report(diagnosis, jsonFile, values, io) }
    }
  })
  // (set in the callback: read through a cast, which flow analysis cannot see into)
  const first = /** @type {Printed | null} */ (early)
  if (first === null) io.stderr.write('Analysing…\n')
  await analyseRetainers(runDir, () => dirSources(runDir))
  const data = readRun(runDir)
  const facts = diagnose(data)
  // A setting the verdict names as its remedy is measured before it is advised, when asked: after the verdict, each
  // phase a restart of the server (docs/diagnosis.md, Experiments); otherwise the command that measures it is advised.
  const planned = await planSettings(facts, data, values, command, experiments, flags)
  // A crash on heap exhaustion: the larger limit the advice proposes is loaded once, after the verdict.
  const retryPlan = planHeapRetry(facts, data, values, command, experiments)
  const retrying = retryPlan !== null && retryPlan.record === null
  // One that cannot be tried (--attach, --on-port, no memory free) says why with the verdict.
  let heapRetry = retryPlan !== null && !retrying ? (await retryHeapLimit(retryPlan, runDir, values, command, io)).retry : null
  const later = planned.plans.length > 0 || retrying
  let diagnosis = wordDiagnosis(measured(facts, planned.records, heapRetry))
  /** @type {Printed | null} */
  let printed = first
  if (printed !== null) printed = { diagnosis, code: await update(printed.diagnosis, diagnosis, snapshotsDid(diagnosis), jsonFile, values, io) }
  else if (!later || !jsonFile.stdout) printed = { diagnosis, code: await report(diagnosis, jsonFile, values, io) }
  const tried = await measureSettings(planned, data, values, command, experiments, io, flags)
  if (planned.plans.length > 0) {
    diagnosis = wordDiagnosis(measured(facts, tried.experiments, heapRetry))
    printed = printed === null
      ? { diagnosis, code: await report(diagnosis, jsonFile, values, io) }
      : { diagnosis, code: await update(printed.diagnosis, diagnosis, 'after the experiments', jsonFile, values, io) }
  }
  const retried = retrying ? await retryHeapLimit(retryPlan, runDir, values, command, io) : null
  if (retried !== null) {
    heapRetry = retried.retry
    diagnosis = wordDiagnosis(measured(facts, tried.experiments, heapRetry))
    printed = printed === null
      ? { diagnosis, code: await report(diagnosis, jsonFile, values, io) }
      : { diagnosis, code: await update(printed.diagnosis, diagnosis, `after loading it again with ${heapRetry.flag}`, jsonFile, values, io) }
  }
  // A signal after the load window skipped what came after it: the verdict stands (SIGTERM still says it stopped).
  const skipped = record.skippedBy ?? tried.interruptedBy ?? retried?.interruptedBy ?? null
  return exitCode(diagnosis, printed?.code ?? 0, record.interruptedBy ?? (skipped === 'SIGTERM' ? skipped : null))
}

/** @typedef {{ diagnosis: import('../report/words/diagnosis.js').Diagnosis, code: number }} Printed */

/**
 * What the heap snapshots after the verdict did, for the line that updates it.
 * @param {import('../report/words/diagnosis.js').Diagnosis} d
 */
function snapshotsDid (d) {
  const s = d.measured.facts.snapshots
  if (s?.state === 'taken' && d.culprits.some(c => c.measure === 'retained')) return d.category === 'memory-leak' ? 'confirmed by heap snapshots' : 'after heap snapshots'
  if (s?.state === 'skipped') return s.why === 'interrupted' ? 'heap snapshots skipped' : 'heap snapshots not taken'
  return 'after heap snapshots'
}

/** Seconds the heap snapshots after the verdict may take by default (--snapshot-time). */
const SNAPSHOT_SECONDS = 30

/**
 * The diagnosis with the experiments it led to (and the larger heap limit tried after a crash), and its advice as
 * they measured it.
 * @param {import('../analysis/diagnose.js').Diagnosis} facts
 * @param {import('../analysis/experiments.js').Experiment[]} experiments
 * @param {import('../analysis/heap-retry.js').HeapRetry | null} [heapRetry]
 * @returns {import('../analysis/diagnose.js').Diagnosis}
 */
function measured (facts, experiments, heapRetry = null) {
  const out = experiments.length === 0 ? facts : { ...facts, recommendations: withExperiments(facts.recommendations, experiments), experiments }
  return heapRetry === null ? out : { ...out, recommendations: withRetry(out.recommendations, heapRetry), heapRetry }
}

/**
 * 0 only when the run measured what was asked: 4 when the target failed, 3 when the load did, 130 when the load was
 * interrupted (143 by SIGTERM, at any time), 2 when files of the run are damaged or unwritten and the verdict or its culprits rest on less than was recorded (an input file
 * that is invalid, which one said first), else what --fail-on-problem says.
 * @param {import('../report/words/diagnosis.js').Diagnosis} diagnosis
 * @param {number} code
 * @param {NodeJS.Signals | null} [interruptedBy] the signal that stopped a live run (a saved run only knows it was)
 */
function exitCode (diagnosis, code, interruptedBy = null) {
  // Ctrl-C after the load window skips what comes after it (snapshots, experiments): only the load's is an interruption.
  const stopped = diagnosis.run.aborted ? interruptedBy ?? 'SIGINT' : interruptedBy
  const failed = outcomeExit({ failure: diagnosis.failure, interruptedBy: stopped })
  if (failed !== 0) return failed
  if (diagnosis.warnings.some(w => w.affects !== 'nothing')) return 2
  return code
}

/**
 * Prints the diagnosis (and writes it as JSON), then writes the HTML report — into the run directory unless --report
 * says where — and prints its path last.
 * @param {import('../report/words/diagnosis.js').Diagnosis} diagnosis
 * @param {ReturnType<typeof jsonOutput>} jsonFile
 * @param {Record<string, unknown>} values
 * @param {import('./main.js').Io} io
 */
async function report (diagnosis, jsonFile, values, io) {
  if (jsonFile.stdout || jsonFile.file !== null) await writeJson(jsonFile, JSON.stringify(diagnosis, null, 2) + '\n', io)
  if (!jsonFile.stdout) io.stdout.write(formatDiagnosis(diagnosis, { cwd: process.cwd() }))
  await writeHtml(diagnosis, jsonFile.stdout ? io.stderr : io.stdout, values, io)
  return failOnProblem(diagnosis, values)
}

/**
 * After a verdict already printed, what the phases after it changed (heap snapshots, experiments): the terminal gets
 * what changed, the JSON file and the HTML report are written again whole.
 * @param {import('../report/words/diagnosis.js').Diagnosis} before
 * @param {import('../report/words/diagnosis.js').Diagnosis} diagnosis
 * @param {string} after what ran since
 * @param {ReturnType<typeof jsonOutput>} jsonFile
 * @param {Record<string, unknown>} values
 * @param {import('./main.js').Io} io
 */
async function update (before, diagnosis, after, jsonFile, values, io) {
  if (jsonFile.stdout || jsonFile.file !== null) await writeJson(jsonFile, JSON.stringify(diagnosis, null, 2) + '\n', io)
  io.stdout.write(formatUpdate(diagnosis, before, { cwd: process.cwd(), after }))
  await writeHtml(diagnosis, io.stdout, values, io, ' (updated)')
  return failOnProblem(diagnosis, values)
}

/**
 * @param {import('../report/words/diagnosis.js').Diagnosis} diagnosis
 * @param {Record<string, unknown>} values
 */
function failOnProblem (diagnosis, values) {
  return values['fail-on-problem'] && diagnosis.category !== 'healthy' ? 1 : 0
}

/**
 * Writes the HTML report and says where. It is a by-product: when it cannot be written (a read-only run directory),
 * say so and carry on.
 * @param {import('../report/words/diagnosis.js').Diagnosis} diagnosis
 * @param {NodeJS.WritableStream} out
 * @param {Record<string, unknown>} values
 * @param {import('./main.js').Io} io
 * @param {string} [note] after its path
 */
async function writeHtml (diagnosis, out, values, io, note = '') {
  const reportFile = typeof values.report === 'string' ? values.report : join(diagnosis.run.dir, 'report.html')
  try {
    const html = renderReport(diagnosis, readRun(diagnosis.run.dir), { embedProfiles: values['report-profile'] === true })
    await mkdir(dirname(resolve(reportFile)), { recursive: true })
    await writeFile(reportFile, html)
    const shown = relative(process.cwd(), resolve(reportFile))
    out.write(`Report: ${shown.startsWith('..') ? resolve(reportFile) : shown}${note}\n`)
    // Opened once, when it is final or first written: an update reloads in the page's own tab.
    if (values.open && note === '') {
      const opened = await openInBrowser(resolve(reportFile))
      if (!opened.ok) io.stderr.write(`hotpath doctor: could not open a browser (${opened.reason}); open ${resolve(reportFile)} yourself\n`)
    }
  } catch (err) {
    if (typeof values.report === 'string') throw new UsageError(`cannot write the report to '${reportFile}': ${/** @type {NodeJS.ErrnoException} */ (err).code ?? /** @type {Error} */ (err).message}`)
    io.stderr.write(`hotpath doctor: no HTML report (${/** @type {NodeJS.ErrnoException} */ (err).code ?? /** @type {Error} */ (err).message})\n`)
  }
}
