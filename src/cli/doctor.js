import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { UsageError } from '../errors.js'
import { diagnose } from '../analysis/diagnose.js'
import { readRun } from '../analysis/run-data.js'
import { formatDiagnosis } from '../report/doctor-text.js'
import { Progress } from '../report/progress.js'
import { recordRun } from '../run/doctor-run.js'
import { preparePlan } from '../load/load.js'
import { durationFlag, numberFlag } from './args.js'
import { LOAD_FLAGS, loadOptionsFromFlags } from './load-options.js'

/** @type {import('./args.js').CommandSpec} */
export const spec = {
  name: 'doctor',
  usage: 'hotpath doctor [options] -- <command...>\n       hotpath doctor --analyse <run-dir>',
  summary: 'Start a server with hotpath\'s probe, load it, and say which class of problem it has — event-loop, io, gc,\n' +
    'memory-leak or healthy — with the evidence, the function, file and line to blame, and what to do. Works for any\n' +
    'command that runs node (node app.js, npm start, node --import tsx app.ts), cluster workers and worker threads.',
  options: {
    ...LOAD_FLAGS,
    path: { type: 'string', value: 'path', description: 'the path to load', default: '/' },
    port: { type: 'string', value: 'N', description: 'load this port (default: the first one the target listens on)' },
    'listen-timeout': { type: 'string', value: 'time', description: 'how long to wait for the target to listen', default: '30s' },
    'on-port': { type: 'string', value: 'command', description: 'run this shell command as the load instead ($PORT is set)' },
    json: { type: 'string', value: 'file', description: 'write the diagnosis as JSON to a file (- for stdout)' },
    save: { type: 'string', value: 'dir', description: 'where to record the run', default: '.hotpath/<time>-doctor' },
    analyse: { type: 'string', value: 'dir', description: 're-analyse a recorded run without running anything' },
    interval: { type: 'string', value: 'ms', description: 'runtime sampling interval in the target', default: '10' },
    'profile-interval': { type: 'string', value: 'µs', description: 'CPU profile sampling interval', default: '1000' },
    'no-profile': { type: 'boolean', description: 'do not CPU-profile the target (no culprits from CPU time)' },
    'heap-interval': { type: 'string', value: 'bytes', description: 'heap sampling interval for allocation culprits (0: off)', default: '65536' },
    'fail-on-problem': { type: 'boolean', description: 'exit 1 unless the verdict is healthy' },
    'no-progress': { type: 'boolean', description: 'no progress bar' }
  },
  details: 'Examples:\n' +
    '  hotpath doctor -- node server.js\n' +
    '  hotpath doctor -c 50 -d 20 --path /api/items --json diagnosis.json -- npm start\n' +
    '  hotpath doctor --on-port \'hotpath load -R 500 -d 30 http://127.0.0.1:$PORT/\' -- node server.js\n' +
    'The rules behind each verdict: docs/diagnosis.md'
}

/**
 * @param {ReturnType<typeof import('./args.js').parseCommand>} args
 * @param {import('./main.js').Io} io
 * @returns {Promise<number>}
 */
export async function run ({ values, positionals, command }, io) {
  const str = (/** @type {string} */ k) => /** @type {string | undefined} */ (values[k])
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}': put the server command after -- (hotpath doctor -- node server.js)`)
  const jsonFile = str('json')

  if (str('analyse') !== undefined) {
    if (command.length > 0) throw new UsageError('give either --analyse <dir> or -- <command>, not both')
    return report(diagnose(readRun(/** @type {string} */ (str('analyse')))), jsonFile, values, io)
  }
  if (command.length === 0) throw new UsageError('doctor needs the server command after -- (e.g. hotpath doctor -- node server.js)')

  const path = str('path') ?? '/'
  if (!path.startsWith('/')) throw new UsageError(`--path must start with '/', got '${path}'`)
  const loadOptions = await loadOptionsFromFlags(values)
  // Validate the load before starting anything, so a bad flag never costs a started server.
  const { plan } = preparePlan({ ...loadOptions, url: `http://127.0.0.1:1${path}` })
  const runDir = str('save') ?? join('.hotpath', `${new Date().toISOString().replace(/[:.]/g, '-')}-doctor`)
  const interval = numberFlag('interval', str('interval') ?? '10')
  const profileInterval = values['no-profile'] ? 0 : numberFlag('profile-interval', str('profile-interval') ?? '1000', { integer: true })
  const heapInterval = numberFlag('heap-interval', str('heap-interval') ?? '65536', { integer: true, allowZero: true })

  const progress = new Progress(io.stderr, { duration: plan.duration, amount: plan.amount, warmup: plan.warmup })
  if (values['no-progress'] || str('on-port') !== undefined) progress.enabled = false
  const abort = new AbortController()
  io.stopOnSignal(() => abort.abort())
  const record = await recordRun({
    command,
    runDir,
    load: loadOptions,
    path,
    port: numberFlag('port', str('port'), { integer: true }),
    onPort: str('on-port'),
    listenTimeout: /** @type {number} */ (durationFlag('listen-timeout', str('listen-timeout') ?? '30s')),
    interval: /** @type {number} */ (interval),
    profileInterval: /** @type {number} */ (profileInterval),
    heapInterval: /** @type {number} */ (heapInterval),
    signal: abort.signal,
    status: (line) => {
      io.stderr.write(`${line}\n`)
      progress.start()
    },
    onBin: (bin) => progress.onBin(bin)
  }).finally(() => progress.stop())
  io.stderr.write('Analysing…\n')
  const code = await report(diagnose(readRun(runDir)), jsonFile, values, io)
  return record.exit.crashed ? 1 : code
}

/**
 * @param {import('../analysis/diagnose.js').Diagnosis} diagnosis
 * @param {string | undefined} jsonFile
 * @param {Record<string, unknown>} values
 * @param {import('./main.js').Io} io
 */
async function report (diagnosis, jsonFile, values, io) {
  if (jsonFile !== undefined) {
    const json = JSON.stringify(diagnosis, null, 2) + '\n'
    if (jsonFile === '-') io.stdout.write(json)
    else await writeFile(jsonFile, json)
  }
  if (jsonFile !== '-') io.stdout.write(formatDiagnosis(diagnosis, { cwd: process.cwd() }))
  return values['fail-on-problem'] && diagnosis.category !== 'healthy' ? 1 : 0
}
