import { basename, dirname, extname, join, resolve } from 'node:path'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { TargetError, UsageError } from '../errors.js'
import { appRootOf } from '../analysis/paths.js'
import { readRun, readRunProfile, runSources } from '../analysis/run-data.js'
import { readProfileFile } from '../profile/cpuprofile.js'
import { writeProfileFiles } from './flame-files.js'
import { SOURCES } from '../profile/model.js'
import { sourceMapMessages } from '../report/words/warnings.js'
import { formatCulprits } from '../report/flame/culprits-text.js'
import { runFailure } from '../analysis/run-failure.js'
import { recordedOtherPorts } from '../analysis/signals-serving.js'
import { otherPortsSentence } from '../report/words/ports.js'
import { excerpt } from '../report/doctor-text.js'
import { VERSION } from '../version.js'
import { numberFlag } from './args.js'
import { recordFromFlags, TARGET_FLAGS } from './target-run.js'
import { outcomeExit } from './exit-codes.js'
import { jsonFlag, jsonOutput, openFlag, writeJson } from './output-flags.js'
import { openInBrowser } from '../report/html/index.js'

// µs between CPU samples. Each sample costs the profiled server ~60–90 µs of its core on a small VM (V8's profiler
// thread wakes and signals the main thread: context switches and cache misses, perf shows), so at 1 ms a saturated
// server loses 7–9% of its throughput, at 2 ms 4–5% (bench/overhead.js), and a 10 s load still gives 5,000 samples.
// Production profilers sample every 10 ms; the doctor keeps 1 ms, for culprits from short runs.
const DEFAULT_INTERVAL = 2000

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'flame',
  usage: 'hotpath flame --from <file.cpuprofile> [options]\n       hotpath flame [load options] -- <command...>\n       hotpath flame [load options] --attach <pid>',
  summary: 'Profile a server under load, or render a profile already recorded, into a self-contained interactive flame\n' +
    'graph (.html), pprof (.pb.gz: go tool pprof, Pyroscope, speedscope) and collapsed stacks (.txt: flamegraph.pl),\n' +
    'and name the functions to blame with their file and line.',
  options: {
    from: { type: 'string', multiple: true, value: 'file', description: 'render this profile: a .cpuprofile (node --cpu-prof, Chrome DevTools, hotpath) or a .heapprofile; repeat to put several processes in one graph' },
    output: { type: 'string', short: 'o', value: 'path', description: 'write <path>.html, <path>.pb.gz and <path>.txt (default: next to the first --from file, named after it)' },
    title: { type: 'string', value: 'text', description: 'title of the flame graph page' },
    'app-root': { type: 'string', value: 'dir', description: 'only files under this directory are your code (default: every file outside node_modules)' },
    'no-source-maps': { type: 'boolean', description: 'show the JavaScript that ran, not the sources its source maps point to' },
    top: { type: 'string', value: 'N', description: 'culprits to print', default: '5' },
    json: jsonFlag('the files written, the culprits and how the run went'),
    open: openFlag('the flame graph'),
    interval: { type: 'string', value: 'µs', description: 'with -- <command>: sampling interval', default: String(DEFAULT_INTERVAL) },
    ...TARGET_FLAGS
  },
  details: 'Examples:\n' +
    '  node --cpu-prof server.js            # writes CPU.<date>.<pid>.cpuprofile on exit\n' +
    '  hotpath flame --from CPU.20260101.120000.4242.0.001.cpuprofile -o flame\n' +
    '  hotpath flame --from profiles/cpu-4242.cpuprofile   # written by hotpath/runtime on SIGUSR2\n' +
    '  hotpath flame -d 20 --attach 4242    # a server already running, started without hotpath (Linux)\n' +
    'The .html opens from disk in any browser, without network.'
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 * @returns {Promise<number>} exit code
 */
export async function run (args, io) {
  const { values, positionals, command } = args
  const from = /** @type {string[] | undefined} */ (values.from) ?? []
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}' (profiles are given with --from)`)
  const attach = values.attach !== undefined
  if (from.length > 0 && (command.length > 0 || attach)) throw new UsageError(`give either --from <file> or ${attach ? '--attach <pid>' : '-- <command>'}, not both`)
  if (from.length === 0 && command.length === 0 && !attach) throw new UsageError('flame needs --from <file.cpuprofile>, -- <command> or --attach <pid> (see hotpath flame --help)')
  const top = Number(values.top ?? 5)
  if (!Number.isInteger(top) || top < 0) throw new UsageError(`--top must be a non-negative integer, got '${values.top}'`)
  const json = jsonOutput(values)
  const live = from.length > 0 ? null : await captureLive(values, command, io)
  const { appRoot: liveRoot, sources, ...captured } = live ? live.captured : { ...(await readInputs(from)), appRoot: undefined, sources: undefined }
  const appRoot = typeof values['app-root'] === 'string' ? resolve(values['app-root']) : liveRoot
  const output = await outputBase(/** @type {string | undefined} */ (values.output), from[0])
  const title = /** @type {string | undefined} */ (values.title) ??
    (from.length > 0 ? from.map(f => basename(f)).join(', ') : live?.command.join(' ') ?? command.join(' '))
  const result = await writeProfileFiles(captured, {
    output,
    title,
    appRoot,
    sourceMaps: values['no-source-maps'] !== true,
    sources,
    saveProfiles: from.length === 0,
    culprits: Math.max(top, 1)
  })
  // A run that did not measure what was asked says so first, before the files that show what it did measure.
  const outcome = live?.outcome ?? { failure: null, interruptedBy: null, stderr: [] }
  const headline = outcomeHeadline(outcome)
  if (headline !== null) {
    io.stderr.write(`hotpath flame: ${headline}\n`)
    if (outcome.failure?.category === 'target-failed') {
      for (const line of excerpt(outcome.stderr, outcome.failure.error?.message)) io.stderr.write(`  | ${line}\n`)
    }
  }
  if (live && live.otherPorts.length > 0) io.stderr.write(`hotpath flame: the load went to port ${live.port} only:${otherPortsSentence(live.otherPorts)}\n`)
  // A culprit whose script's map is missing or unreadable: its line is not the source's, and that is said.
  const mapper = /** @type {any} */ (result.model)[SOURCES]?.mapper
  const warnings = sourceMapMessages(mapper, result.culprits.slice(0, Math.max(top, 1)).map(c => c.file), process.cwd())
  for (const w of warnings) io.stderr.write(`hotpath flame: ${w}\n`)
  await report(result, { json, top, outcome, warnings }, io)
  if (values.open) {
    const page = result.files.find(f => f.format === 'html')
    const opened = page ? await openInBrowser(resolve(page.path)) : { ok: false, reason: 'no page was written' }
    if (!opened.ok) io.stderr.write(`hotpath flame: could not open a browser (${opened.reason}); open ${page ? resolve(page.path) : 'the .html file'} yourself\n`)
  }
  return outcomeExit(outcome)
}

/**
 * How a live run ended, when it did not measure what was asked: the target failed, the load failed, or the user
 * stopped it.
 * @typedef {object} Outcome
 * @property {import('../analysis/run-failure.js').RunFailure | null} failure
 * @property {NodeJS.Signals | null} interruptedBy
 * @property {number} [at] seconds into the load when it was interrupted
 * @property {string[]} stderr the target's last lines of stderr
 */

/**
 * @param {Outcome} outcome
 * @returns {string | null} what went wrong, in one line; null when the run measured what was asked
 */
function outcomeHeadline ({ failure, interruptedBy, at }) {
  if (failure?.category === 'target-failed') {
    return `${failure.what}${failure.at === null ? '' : `, ${failure.at.toFixed(1)} s into the load`}; the flame graph covers the run until then`
  }
  if (failure?.category === 'load-failed') return `the load failed (${failure.what}); the flame graph shows the server giving those answers`
  if (interruptedBy !== null) return `interrupted (${interruptedBy})${at === undefined ? '' : ` after ${at.toFixed(1)} s of load`}; the flame graph covers the run until then`
  return null
}

/**
 * Starts the target under the probe, loads it, and returns the CPU profiles of its serving processes and their threads
 * over exactly the load window. The probe records only the profile: a flame graph needs nothing else, and request
 * counting and listener watching cost a fast server a few percent.
 * @param {Record<string, unknown>} values
 * @param {string[]} command
 * @param {import('./main.js').Io} io
 * @returns {Promise<{ captured: Parameters<typeof writeProfileFiles>[0] & { appRoot?: string, sources?: import('../profile/sources.js').SourceCache }, outcome: Outcome, command: string[], port: number, otherPorts: number[] }>}
 */
async function captureLive (values, command, io) {
  const profileInterval = /** @type {number} */ (numberFlag('interval', /** @type {string | undefined} */ (values.interval) ?? String(DEFAULT_INTERVAL), { integer: true }))
  const runDir = await mkdtemp(join(tmpdir(), 'hotpath-flame-'))
  try {
    const record = await recordFromFlags(values, command, io, { runDir, interval: 100, runtime: false, profileInterval, heapInterval: 0 })
    const data = readRun(runDir)
    const port = record.listening.port
    // Judged as the doctor judges a run (a crash, cluster workers that died, a load that got no answers or errors):
    // a flame graph of 404 pages or of two seconds out of six is not what was asked for.
    const failure = runFailure(data, /** @type {import('../analysis/signals.js').Signals} */ (/** @type {unknown} */ ({ port })))
    /** @type {Outcome} */
    const outcome = { failure, interruptedBy: record.interruptedBy, at: (record.loadWindow.end - record.loadWindow.start) / 1000, stderr: record.stderr }
    const serving = new Set(data.threads.filter(t => t.listening.some(l => l.port === port)).map(t => t.pid))
    const profiles = data.threads
      .filter(t => t.profiles.cpu && (serving.size === 0 || serving.has(t.pid)))
      .map(t => ({ profile: readRunProfile(data, t.profiles.cpu), label: t.threadId ? `pid ${t.pid} thread ${t.threadId}` : `pid ${t.pid}` }))
      .filter(p => p.profile !== null)
    if (profiles.length === 0) {
      const headline = outcomeHeadline(outcome)?.replace(/; the flame graph .*$/, '')
      const message = `${headline ?? 'the target did not profile itself (do its processes run node?)'}; no CPU profile was recorded`
      if (failure === null && record.interruptedBy !== null) throw new UsageError(message, outcomeExit(outcome))
      throw new TargetError(message, { exitCode: failure ? outcomeExit(outcome) : 4, stderr: record.stderr })
    }
    const main = data.threads.find(t => serving.has(t.pid)) ?? data.threads[0]
    const otherPorts = recordedOtherPorts(data, port, record.loadWindow.end)
    // The code loaders compiled in memory is in the run directory, which goes when this returns.
    const sources = runSources(data)
    sources.readAll()
    return { captured: { type: 'cpu', profiles, appRoot: main ? appRootOf(main.hello, data.run.cwd) : undefined, sources }, outcome, command: record.command, port, otherPorts }
  } finally {
    await rm(runDir, { recursive: true, force: true })
  }
}

/**
 * @param {string[]} files
 * @returns {Promise<Parameters<typeof writeProfileFiles>[0]>}
 */
async function readInputs (files) {
  const read = await Promise.all(files.map(readProfileFile))
  const heap = read.filter(r => r.type === 'heap')
  if (heap.length > 0) {
    if (read.length > 1) throw new UsageError('a heap profile is rendered on its own: give one --from <file.heapprofile>')
    return { type: 'heap', profile: /** @type {import('../profile/cpuprofile.js').SamplingHeapProfile} */ (heap[0].profile) }
  }
  /** @type {Set<string>} */
  const labels = new Set()
  return {
    type: 'cpu',
    profiles: read.map((r, i) => {
      // Each input is a node of its own in the graph, named after its file (numbered if two share a name).
      let label = basename(files[i])
      for (let n = 2; labels.has(label); n++) label = `${basename(files[i])} (${n})`
      labels.add(label)
      return { profile: /** @type {import('../profile/cpuprofile.js').CpuProfile} */ (r.profile), label }
    })
  }
}

/**
 * The path every output is named from: `-o` without its extension (a directory gets the input's name inside it), or
 * the first input without its extension.
 * @param {string | undefined} output
 * @param {string | undefined} input
 */
async function outputBase (output, input) {
  const name = input ? stripExtension(basename(input)) : `flame-${new Date().toISOString().replace(/[:.]/g, '-')}`
  if (output === undefined) return input ? join(dirname(input), name) : name
  let isDir = output.endsWith('/')
  if (!isDir) {
    try {
      isDir = (await stat(output)).isDirectory()
    } catch {}
  }
  return isDir ? join(output, name) : stripExtension(output)
}

/** @param {string} file */
function stripExtension (file) {
  const known = ['.cpuprofile', '.heapprofile', '.json', '.html', '.gz', '.txt']
  let f = file
  if (f.endsWith('.pb.gz')) return f.slice(0, -6)
  const ext = extname(f)
  if (known.includes(ext)) f = f.slice(0, -ext.length)
  return f
}

/**
 * @param {Awaited<ReturnType<typeof writeProfileFiles>>} result
 * @param {{ json: ReturnType<typeof jsonOutput>, top: number, outcome: Outcome, warnings: string[] }} opts
 * @param {import('./main.js').Io} io
 */
async function report ({ files, model, culprits }, opts, io) {
  const shown = culprits.slice(0, opts.top)
  if (opts.json.stdout || opts.json.file !== null) {
    const { failure, interruptedBy } = opts.outcome
    await writeJson(opts.json, JSON.stringify({
      tool: 'hotpath',
      version: VERSION,
      // What went wrong with a live run, when it did not measure what was asked (null / false when it did).
      failure: failure && { category: failure.category, what: failure.what, at: failure.at, error: failure.error },
      interrupted: interruptedBy !== null,
      ...(interruptedBy !== null ? { signal: interruptedBy } : {}),
      files: files.map(f => ({ path: f.path, format: f.format })),
      // The culprits' scripts whose source map is missing or unreadable, in words.
      warnings: opts.warnings,
      type: model.type,
      unit: model.unit,
      total: model.total,
      byKind: model.byKind,
      culprits: shown
    }, null, 2) + '\n', io)
    if (opts.json.stdout) return
  }
  const describe = {
    html: 'flame graph: open it in a browser',
    pprof: 'pprof: go tool pprof -http=: <file>, Pyroscope, speedscope',
    collapsed: 'collapsed stacks: flamegraph.pl, speedscope',
    cpuprofile: 'CPU profile: Chrome DevTools, VS Code',
    heapprofile: 'heap profile: Chrome DevTools'
  }
  const width = Math.max(...files.map(f => f.path.length))
  io.stdout.write('Wrote\n' + files.map(f => `  ${f.path.padEnd(width)}  ${describe[f.format]}`).join('\n') + '\n\n')
  if (opts.top > 0) io.stdout.write(formatCulprits(shown, { total: model.total, unit: model.unit }))
}
