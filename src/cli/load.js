// `hotpath load`: the command and its flags. The same thing one layer down, as the load generator: src/load/load.js.
import { writeFile } from 'node:fs/promises'
import { TargetError, UsageError } from '../errors.js'
import { load, preparePlan } from '../load/load.js'
import { requestsHash } from '../load/requests.js'
import { loadFailure, withMarks } from '../load/result.js'
import { framed } from '../load/result-log.js'
import { formatLoadResult, headlines } from '../report/load-text.js'
import { Progress } from '../report/progress.js'
import { otherPortsSentence } from '../report/words/ports.js'
import { describeExit, TargetProcess } from '../run/target/target-process.js'
import { otherHttpPorts } from '../other-ports.js'
import { parseTarget } from '../load/target.js'
import { durationFlag, numberFlag } from './args.js'
import { LOAD_FLAGS, loadOptionsFromFlags } from './load-options.js'
import { LOAD_FAILED, signalExit, TARGET_FAILED } from './exit-codes.js'
import { jsonFlag, jsonOutput, NO_PROGRESS, writeJson } from './output-flags.js'

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'load',
  usage: 'hotpath load [options] <url>\n       hotpath load [options] -- <command...>',
  summary: 'Load an HTTP server and measure latency (µs resolution), throughput and errors. With -- <command>, start the\n' +
    'server first, wait until it listens, load it, then stop it.',
  options: {
    ...LOAD_FLAGS,
    json: jsonFlag('the result (autocannon\'s shape plus a mergeable HDR histogram)'),
    output: { type: 'string', short: 'o', value: 'file', description: 'also write the JSON result to a file (as --json=<file>)' },
    title: { type: 'string', value: 'text', description: 'a title stored in the result' },
    'no-progress': NO_PROGRESS,
    path: { type: 'string', value: 'path', description: 'with -- <command>: the path to load', default: '/' },
    port: { type: 'string', value: 'N', description: 'with -- <command>: load this port (default: the first one it listens on)' },
    'listen-timeout': { type: 'string', value: 'time', description: 'with -- <command>: how long to wait for it to listen', default: '30s' },
    segment: { type: 'string', value: 'K/N', description: 'run the K-th of N equal parts of this load (connections, rate, --amount split exactly; auto/N: K from JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it)' },
    'start-at': { type: 'string', value: 'time', description: 'wait, and begin the load at this instant: ISO time with its zone or unix ms (segments on several machines start together)' },
    'run-id': { type: 'string', value: 'id', description: 'with --segment: the id the segments of one load share (default: derived from the flags, N and --start-at)' },
    markers: { type: 'boolean', description: 'print the JSON result between marker lines, so that hotpath merge - finds it in logs (kubectl logs … | hotpath merge -)' }
  },
  details: 'Examples:\n' +
    '  hotpath load -c 100 -d 30 http://127.0.0.1:3000/\n' +
    '  hotpath load -R 2000 -d 60 --json=run.json http://127.0.0.1:3000/api\n' +
    '  hotpath load -- node server.js\n' +
    '  hotpath load --segment 2/4 --start-at 2026-01-31T12:00:00Z -c 100 -R 8000 -d 60 -o part-2.json http://10.0.0.5/\n' +
    'Results from several machines merge exactly: hotpath merge a.json b.json. The segments of one load are checked\n' +
    'to be all there, once each, with the same flags and started together (hotpath kube writes the Kubernetes Job).'
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 * @returns {Promise<number>} exit code: 0 measured as asked, 3 the load failed, 4 the target failed (however the run
 *   ended), else 130/143 stopped by SIGINT/SIGTERM (the partial result still written)
 */
export async function run ({ values, positionals, command }, io) {
  const options = await loadOptionsFromFlags(values)
  const flags = commandFlags(values, positionals, command)
  const quiet = jsonOutput(values).stdout
  const stop = stopOnSignal(io)
  /** @type {TargetProcess | null} */
  let target = null
  let url = positionals[0]
  if (command.length > 0) {
    const started = await startTarget(command, flags, io, stop, quiet)
    if (started.target === null) return started.exit
    target = started.target
    url = started.url
  }

  // Validate everything before the run, so a bad flag never costs a started server.
  const loadOptions = { ...options, url, ...(flags.title ? { title: flags.title } : {}), ...segmentFlags(values) }
  const { plan, segment, startAt } = preparePlan(loadOptions)
  const waiting = sayWait(startAt, segment, io)
  let result = await measure(loadOptions, plan, Boolean(values['no-progress']) || waiting, io, stop, target)
  result = withSettings(result, plan)
  // Stopped early, the load is judged on the requests that ended (failure.js): stopped while it waited for --start-at,
  // or before any answer came, says nothing of the server; 404 for every request that ended does.
  if (stop.signalled !== null) result = withMarks(result, { interrupted: true })
  if (stop.signalled !== null) result.failed = result.hotpath.shard.began ? loadFailure(result, { interrupted: true }) : null
  return report(result, values, io, stop, target)
}

/**
 * The flags of `load` itself, beyond the load's own (load-options.js), checked.
 * @param {Record<string, unknown>} values
 * @param {string[]} positionals
 * @param {string[]} command
 */
function commandFlags (values, positionals, command) {
  if (positionals.length > 1) {
    // `--json <file>` reads as --json and two URLs: say how to give the file.
    const file = positionals.filter(p => !/^\w+:\/\//.test(p))
    const hint = values.json === '-' ? `; to write the JSON to a file, give --json=${file.length === 1 ? file[0] : '<file>'}` : ''
    throw new UsageError(`load takes one URL, got ${positionals.length}: ${positionals.join(' ')}${hint}`)
  }
  if (command.length > 0 && positionals.length > 0) throw new UsageError('give either a URL or -- <command>, not both')
  if (command.length === 0 && positionals.length === 0) throw new UsageError('load needs a URL or -- <command> (see hotpath load --help)')
  const path = /** @type {string | undefined} */ (values.path) ?? '/'
  if (!path.startsWith('/')) throw new UsageError(`--path must start with '/', got '${path}'`)
  return {
    path,
    port: numberFlag('port', /** @type {string | undefined} */ (values.port), { integer: true }),
    listenTimeout: /** @type {number} */ (durationFlag('listen-timeout', /** @type {string | undefined} */ (values['listen-timeout']) ?? '30s')),
    title: /** @type {string | undefined} */ (values.title)
  }
}

/**
 * --segment, --start-at and --run-id, as load() takes them (it checks them).
 * @param {Record<string, unknown>} values
 */
function segmentFlags (values) {
  const str = (/** @type {string} */ k) => /** @type {string | undefined} */ (values[k])
  if (str('run-id') !== undefined && str('segment') === undefined) throw new UsageError('--run-id names the segments of one load: give --segment too')
  return {
    ...(str('segment') !== undefined ? { segment: str('segment') } : {}),
    ...(str('start-at') !== undefined ? { startAt: str('start-at') } : {}),
    ...(str('run-id') !== undefined ? { runId: str('run-id') } : {})
  }
}

/**
 * Says on stderr that the load waits for its start instant (or that the instant has passed), since a process that
 * prints nothing for a minute looks hung.
 * @param {number | null} at --start-at, epoch ms
 * @param {{ index: number, count: number, run: string } | null} segment
 * @param {import('./main.js').Io} io
 * @returns {boolean} whether it waits
 */
function sayWait (at, segment, io) {
  if (at === null) return false
  const who = segment ? `segment ${segment.index}/${segment.count} of run ${segment.run}` : 'the load'
  const ahead = (at - Date.now()) / 1000
  if (ahead > 0) io.stderr.write(`hotpath load: ${who} waits until ${new Date(at).toISOString()} to start (in ${ahead.toFixed(1)} s)\n`)
  else io.stderr.write(`hotpath load: the start time ${new Date(at).toISOString()} passed ${(-ahead).toFixed(1)} s ago: ${who} starts now, late\n`)
  return ahead > 0
}

/**
 * @typedef {object} Stop
 * @property {AbortController} abort aborted on the first signal, and when the target dies
 * @property {NodeJS.Signals | null} signalled
 */

/**
 * @param {import('./main.js').Io} io
 * @returns {Stop}
 */
function stopOnSignal (io) {
  /** @type {Stop} */
  const stop = { abort: new AbortController(), signalled: null }
  // The signal's name, when the caller passes it, tells SIGTERM (exit 143) from Ctrl-C (exit 130).
  io.stopOnSignal((/** @type {NodeJS.Signals} */ signal) => {
    stop.signalled = signal ?? 'SIGINT'
    stop.abort.abort()
  })
  return stop
}

/**
 * Starts the command and waits until it listens.
 * @param {string[]} command
 * @param {ReturnType<typeof commandFlags>} flags
 * @param {import('./main.js').Io} io
 * @param {Stop} stop
 * @param {boolean} quiet
 * @returns {Promise<{ target: TargetProcess, url: string } | { target: null, exit: number }>} the exit code when a
 *   signal came first
 */
async function startTarget (command, flags, io, stop, quiet) {
  const target = await new TargetProcess(command).start()
  io.stopOnSignal(() => target.stop())
  try {
    const l = await target.waitForListening({ timeout: flags.listenTimeout, port: flags.port })
    const url = `${l.tls ? 'https' : 'http'}://${l.host.includes(':') ? `[${l.host}]` : l.host}:${l.port}${flags.path}`
    if (!quiet) io.stderr.write(`Target listening on ${url} (pid ${l.pid})\n`)
    return { target, url }
  } catch (err) {
    await target.stop()
    if (stop.signalled === null) throw err
    io.stderr.write('hotpath load: interrupted before the load began\n')
    return { target: null, exit: signalExit(stop.signalled) }
  }
}

/**
 * Runs the load with a progress bar, and stops the target after it.
 * @param {import('../load/load.js').LoadOptions} loadOptions
 * @param {import('../load/runner.js').Plan} plan
 * @param {boolean} noProgress
 * @param {import('./main.js').Io} io
 * @param {Stop} stop
 * @param {TargetProcess | null} target
 */
async function measure (loadOptions, plan, noProgress, io, stop, target) {
  const progress = new Progress(io.stderr, {
    duration: plan.duration,
    amount: plan.amount,
    warmup: plan.warmup
  })
  if (noProgress) progress.enabled = false
  // A target that dies mid-run ends the run at once; what was measured until then is still reported.
  target?.exited.then((exit) => { if (!exit.stoppedByUs) stop.abort.abort() })
  progress.start()
  try {
    return await load({ ...loadOptions, signal: stop.abort.signal, onBin: (bin) => progress.onBin(bin) })
  } catch (err) {
    const exit = await target?.exitsWithin(1000)
    if (exit && target) throw new TargetError(`the target exited ${describeExit(exit)} as the load started`, { exitCode: TARGET_FAILED, stderr: target.tail() })
    // The options were checked above, so a usage error now can only say that nothing answers at the target: the
    // command line was fine, the load failed.
    if (err instanceof UsageError) throw new UsageError(err.message, 3)
    throw err
  } finally {
    progress.stop()
    await target?.stop()
  }
}

/**
 * Writes the result (JSON or text, and the file asked for) and says how the run ended.
 * @param {import('../load/result.js').LoadResult} result
 * @param {Record<string, unknown>} values
 * @param {import('./main.js').Io} io
 * @param {Stop} stop
 * @param {TargetProcess | null} target
 * @returns {Promise<number>} the exit code
 */
async function report (result, values, io, stop, target) {
  const crashed = target?.exitInfo && !target.exitInfo.stoppedByUs ? target.exitInfo : null
  const notes = crashed ? [`hotpath load: the target exited ${describeExit(crashed)} during the run, after ${result.duration.toFixed(1)} s; the figures cover the run until then`] : []
  const segment = result.hotpath.segment
  if (segment?.startAt && segment.started - segment.startAt > 1000 && !result.interrupted) {
    notes.push(`hotpath load: segment ${segment.index}/${segment.count} began ${((segment.started - segment.startAt) / 1000).toFixed(1)} s after --start-at: hotpath merge will call it out of step with segments that began on time`)
  }

  const json = JSON.stringify(result, null, 2) + '\n'
  const where = jsonOutput(values)
  if (values.output) await writeFile(/** @type {string} */ (values.output), json)
  await writeJson({ stdout: false, file: where.file }, json, io)
  if (where.stdout || values.markers) {
    io.stdout.write(values.markers ? framed(json, segment ? `segment ${segment.index}/${segment.count} of run ${segment.run}` : undefined) : json)
    // stdout is the result; what a reader must know first goes where a person still sees it.
    for (const line of [...notes, ...headlines(result, 'load')]) io.stderr.write(`${line}\n`)
  } else {
    io.stdout.write(formatLoadResult(result, { command: 'load', notes }))
  }
  if (crashed && target) for (const line of target.tail()) io.stderr.write(`  | ${line}\n`)
  // After the result: a run that failed says so first; this only says where it went.
  const others = target ? otherHttpPorts(target.listening, parseTarget(result.url).port) : []
  if (others.length > 0) io.stderr.write(`hotpath load: the load went to ${result.url} only:${otherPortsSentence(others)}\n`)
  // A run that did not measure what was asked says so in its code however it ended (as outcomeExit orders it).
  if (crashed) return TARGET_FAILED
  if (result.failed) return LOAD_FAILED
  if (stop.signalled !== null) return signalExit(stop.signalled)
  return 0
}

/**
 * The asked duration and a digest of the requests, so that `compare` can tell runs of different loads apart.
 * @param {import('../load/result.js').LoadResult} result
 * @param {import('../load/runner.js').Plan} plan
 */
function withSettings (result, plan) {
  const options = result.hotpath.options
  options.duration ??= Number.isFinite(plan.duration) ? plan.duration : 0
  options.requestsHash ??= requestsHash(plan.requests)
  return result
}
