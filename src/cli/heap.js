import { readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { UsageError } from '../errors.js'
import { preparePlan } from '../load/load.js'
import { recordHeapRun } from '../run/heap-run.js'
import { allocationFlame } from './heap-allocations.js'
import { dirSources } from '../analysis/run-data.js'
import { sourceMapMessages } from '../report/words/warnings.js'
import { fileURLToPath } from 'node:url'
import { buildHeapReport } from '../heap/report-data.js'
import { formatHeapReport, verdictLine } from '../report/heap-text.js'
import { renderHeapPage } from '../report/html/heap-page.js'
import { otherPortsNote } from '../report/words/ports.js'
import { durationFlag, numberFlag } from './args.js'
import { LOAD_FLAGS, loadOptionsFromFlags } from './load-options.js'
import { attachFromFlags, TARGET_FLAGS } from './target-run.js'
import { outcomeExit } from './exit-codes.js'
import { jsonFlag, jsonOutput, openFlag, writeJson } from './output-flags.js'
import { Progress } from '../report/progress.js'
import { openInBrowser } from '../report/html/index.js'

/** Seconds each phase loads unless -d or -a says otherwise. */
const PHASE_SECONDS = 5

// The phases are hotpath's own loads, between snapshots it takes: a user's --on-port load cannot be split into them.
const UNSUPPORTED = new Set(['on-port', 'observe'])
const targetFlags = Object.fromEntries(Object.entries(TARGET_FLAGS).filter(([name]) => !UNSUPPORTED.has(name)))

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'heap',
  usage: 'hotpath heap [options] -- <command...>\n       hotpath heap [options] --attach <pid>\n       hotpath heap --analyse <run-dir>',
  summary: 'Start a server with hotpath\'s probe and load it in three phases — warm-up, growth, settle — with a heap\n' +
    'snapshot after a full GC at the end of each. Objects made during the growth phase that are still alive after the\n' +
    'settle phase are what the load leaves behind: they are grouped by what holds them, and each group is shown with\n' +
    'its count, bytes, bytes per request and its shortest retainer path, down to the variable or property (file:line)\n' +
    'that keeps it.',
  options: {
    ...targetFlags,
    duration: { ...LOAD_FLAGS.duration, description: 'how long each of the three phases loads', default: `${PHASE_SECONDS}s` },
    amount: { ...LOAD_FLAGS.amount, description: 'complete N requests in each phase instead of loading for a duration' },
    json: jsonFlag('the result', { spaced: true }),
    report: { type: 'string', value: 'file', description: 'write the HTML page (verdict, retainer paths, phases) here', default: '<run-dir>/heap.html' },
    open: openFlag('the HTML page'),
    save: { type: 'string', value: 'dir', description: 'where to record the run (the three snapshots and heap.json)', default: '.hotpath/<time>-heap' },
    analyse: { type: 'string', value: 'dir', description: 're-analyse a recorded run without running anything' },
    'snapshot-timeout': { type: 'string', value: 'time', description: 'how long one heap snapshot may take', default: '5m' },
    'fail-on-leak': { type: 'boolean', description: 'exit 1 when a group of objects grows with load' }
  },
  details: 'Examples:\n' +
    '  hotpath heap -- node server.js\n' +
    '  hotpath heap -c 20 -a 5000 --path /api/items --json heap.json -- npm start\n' +
    '  hotpath heap --attach 4242        # a server already running, started without hotpath (Linux)\n' +
    'A group "grows with load" when the growth phase left at least 5 of its objects per 100 requests (and 50 in all).\n' +
    'The snapshots stay in the run directory: open them in Chrome DevTools (Memory tab) to dig further.'
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 * @returns {Promise<number>}
 */
export async function run ({ values, positionals, command }, io) {
  const str = (/** @type {string} */ k) => /** @type {string | undefined} */ (values[k])
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}': put the server command after -- (hotpath heap -- node server.js)`)
  const jsonFile = jsonOutput(values)
  const analyse = str('analyse')
  if (analyse !== undefined) {
    if (command.length > 0 || values.attach !== undefined) throw new UsageError(`give either --analyse <dir> or ${command.length > 0 ? '-- <command>' : '--attach <pid>'}, not both`)
    const saved = readSaved(analyse)
    const sources = dirSources(saved.runDir)
    const report = await buildHeapReport({ command: saved.target, run: { ...saved, runDir: saved.runDir }, sources })
    report.allocations = await allocationFlame(saved.runDir, saved.allocations, sources)
    report.warnings = mapWarnings(report, sources)
    return finish(report, values, jsonFile, io, null)
  }
  const attach = attachFromFlags(values, command)
  if (command.length === 0 && attach === undefined) throw new UsageError('heap needs the server command after -- (e.g. hotpath heap -- node server.js), or --attach <pid>')

  const path = str('path') ?? '/'
  if (!path.startsWith('/')) throw new UsageError(`--path must start with '/', got '${path}'`)
  const loadOptions = await loadOptionsFromFlags(/** @type {any} */ (values))
  if (loadOptions.duration === undefined && loadOptions.amount === undefined) loadOptions.duration = PHASE_SECONDS
  // Validate the load before starting anything, so a bad flag never costs a started server.
  const { plan } = preparePlan({ ...loadOptions, url: `http://127.0.0.1:1${path}` })
  const port = numberFlag('port', str('port'), { integer: true })
  const listenTimeout = /** @type {number} */ (durationFlag('listen-timeout', str('listen-timeout') ?? '30s'))
  const snapshotTimeout = /** @type {number} */ (durationFlag('snapshot-timeout', str('snapshot-timeout') ?? '5m'))
  const runDir = str('save') ?? join('.hotpath', `${new Date().toISOString().replace(/[:.]/g, '-')}-heap`)

  const abort = new AbortController()
  /** @type {NodeJS.Signals | null} */
  let interruptedBy = null
  io.stopOnSignal((signal) => {
    interruptedBy ??= signal ?? 'SIGINT'
    abort.abort()
  })
  const record = await recordHeapRun({
    command,
    attach,
    runDir,
    load: loadOptions,
    path,
    port,
    listenTimeout,
    snapshotTimeout,
    signal: abort.signal,
    status: (line) => io.stderr.write(`${line}\n`),
    progress: () => {
      const progress = new Progress(io.stderr, { duration: plan.duration, amount: plan.amount, warmup: plan.warmup })
      if (values['no-progress']) progress.enabled = false
      return progress
    }
  })
  if (record.snapshots.length === 3 && record.failure === null) io.stderr.write('Analysing the snapshots…\n')
  const sources = dirSources(record.runDir)
  const report = await buildHeapReport({ command, run: record, sources })
  report.allocations = await allocationFlame(record.runDir, record.allocations, sources)
  report.warnings = mapWarnings(report, sources)
  // What --analyse needs to redo the analysis, next to the snapshots.
  await writeFile(join(record.runDir, 'heap.json'), JSON.stringify(report, null, 2) + '\n')
  return finish(report, values, jsonFile, io, record.interrupted ? interruptedBy ?? 'SIGINT' : null)
}

/**
 * The scripts named in the report whose source map is missing or unreadable, in words.
 * @param {import('../heap/report-data.js').HeapReport} report
 * @param {import('../profile/sources.js').SourceCache} sources
 */
function mapWarnings (report, sources) {
  const alloc = report.allocations
  const files = [...report.culprits, ...report.others].flatMap(c => [c.file, ...c.retainers.map(r => r.file)])
  if (alloc && 'sites' in alloc) files.push(...alloc.sites.map(s => s.file))
  return sourceMapMessages(sources.mapper(), files.map(f => f?.startsWith('file://') ? fileURLToPath(f) : f), process.cwd())
}

/**
 * Prints the report (and writes its JSON), and says the exit code.
 * @param {import('../heap/report-data.js').HeapReport} report
 * @param {Record<string, unknown>} values
 * @param {ReturnType<typeof jsonOutput>} jsonFile
 * @param {import('./main.js').Io} io
 * @param {NodeJS.Signals | null} interruptedBy
 */
async function finish (report, values, jsonFile, io, interruptedBy) {
  report.verdict = verdictLine(report, process.cwd()) + otherPortsNote(report.url, report.otherPorts, { hint: true })
  await writeJson(jsonFile, JSON.stringify(report, null, 2) + '\n', io)
  const out = jsonFile.stdout ? io.stderr : io.stdout
  out.write(formatHeapReport(report, process.cwd()))
  for (const w of report.warnings ?? []) out.write(`  ! ${w}\n`)
  await writePage(report, values, out, io)
  const failed = outcomeExit({ failure: report.failure, interruptedBy })
  if (failed !== 0) return failed
  return values['fail-on-leak'] && report.culprits.length > 0 ? 1 : 0
}

/**
 * Writes the HTML page, into the run directory unless --report says where, and prints its path last. The page is a
 * by-product: when it cannot be written where nobody asked for it (a read-only run directory), that is said, and the
 * exit code stays what the run found.
 * @param {import('../heap/report-data.js').HeapReport} report
 * @param {Record<string, unknown>} values
 * @param {NodeJS.WritableStream} out
 * @param {import('./main.js').Io} io
 */
async function writePage (report, values, out, io) {
  const asked = typeof values.report === 'string'
  const file = asked ? /** @type {string} */ (values.report) : join(report.runDir, 'heap.html')
  try {
    await mkdir(dirname(resolve(file)), { recursive: true })
    await writeFile(file, renderHeapPage(report, process.cwd()))
  } catch (err) {
    const why = /** @type {NodeJS.ErrnoException} */ (err).code ?? /** @type {Error} */ (err).message
    if (asked) throw new UsageError(`cannot write the report to '${file}': ${why}`)
    io.stderr.write(`hotpath heap: no HTML page (${why})\n`)
    return
  }
  const shown = relative(process.cwd(), resolve(file))
  out.write(`Report: ${shown.startsWith('..') ? resolve(file) : shown}\n`)
  if (values.open) {
    const opened = await openInBrowser(resolve(file))
    if (!opened.ok) io.stderr.write(`hotpath heap: could not open a browser (${opened.reason}); open ${resolve(file)} yourself\n`)
  }
}

/**
 * The record of an earlier run, from its heap.json.
 * @param {string} dir
 */
function readSaved (dir) {
  /** @type {any} */
  let saved
  try {
    saved = JSON.parse(readFileSync(join(dir, 'heap.json'), 'utf8'))
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err)
    throw new UsageError(`'${dir}' is not a hotpath heap run: ${e.code === 'ENOENT' ? 'it has no heap.json' : `its heap.json is not JSON (${e.message})`}`)
  }
  if (saved?.command !== 'heap' || !Array.isArray(saved.snapshots) || !Array.isArray(saved.load?.phases)) {
    throw new UsageError(`'${dir}' is not a hotpath heap run: its heap.json holds no snapshots and phases`)
  }
  return {
    target: /** @type {string[]} */ (saved.target ?? []),
    runDir: resolve(dir),
    url: String(saved.url ?? ''),
    pid: Number(saved.pid) || 0,
    otherPorts: Array.isArray(saved.otherPorts) ? saved.otherPorts.filter((/** @type {unknown} */ p) => Number.isInteger(p)) : [],
    phases: saved.load.phases,
    // Files are found where the run directory is now, wherever it was recorded.
    snapshots: saved.snapshots.map((/** @type {any} */ s) => ({ ...s, file: join(dir, s.name) })),
    failure: saved.failure ?? null,
    // The profile is looked for where the run directory is now; an error recorded then is said again.
    allocations: saved.allocations && typeof saved.allocations.error === 'string' ? { error: String(saved.allocations.error) } : null,
    interrupted: Boolean(saved.interrupted)
  }
}
