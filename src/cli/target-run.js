import { UsageError } from '../errors.js'
import { preparePlan } from '../load/load.js'
import { Progress } from '../report/progress.js'
import { recordRun } from '../run/doctor-run.js'
import { profileIntervalFor, profileSliceFor } from '../run/profile-interval.js'
import { durationFlag, numberFlag } from './args.js'
import { LOAD_FLAGS, loadOptionsFromFlags } from './load-options.js'

/**
 * Flags of every command that starts a target under the probe and loads it (doctor, flame).
 * @type {Record<string, import('./args.js').OptionSpec>}
 */
export const TARGET_FLAGS = {
  ...LOAD_FLAGS,
  path: { type: 'string', value: 'path', description: 'the path to load', default: '/' },
  port: { type: 'string', value: 'N', description: 'load this port (default: the first one the target listens on)' },
  attach: { type: 'string', value: 'pid', description: 'attach to this running Node process instead of starting one (Linux, same user or root; see docs/attach.md)' },
  'listen-timeout': { type: 'string', value: 'time', description: 'how long to wait for the target to listen', default: '30s' },
  'on-port': { type: 'string', value: 'command', description: 'run this shell command as the load instead ($PORT is set)' },
  observe: { type: 'string', value: 'time', description: 'send no load: watch the traffic the server gets for this long, by route (docs/doctor.md)' },
  'no-progress': { type: 'boolean', description: 'no progress bar' }
}

/**
 * Starts the target under the probe, loads it and records the run, from parsed flags.
 * @param {Record<string, unknown>} values
 * @param {string[]} command
 * @param {import('./main.js').Io} io
 * @param {{ runDir: string, interval: number, runtime?: boolean, profileInterval: number | 'auto', profileSlice?: boolean, heapInterval: number, memory?: import('../run/doctor-run.js').RunOptions['memory'], onVerdict?: import('../run/doctor-run.js').RunOptions['onVerdict'] }} probe
 *   profileInterval 'auto': from the length of what is profiled (profile-interval.js); profileSlice: profile only the
 *   middle of a long window (doctor), not all of it (flame)
 * @returns {Promise<import('../run/doctor-run.js').RunRecord & { interruptedBy: NodeJS.Signals | null, skippedBy: NodeJS.Signals | null }>}
 *   the record, the signal that stopped the load early (the caller's exit code: 130 for SIGINT, 143 for SIGTERM), and
 *   the one that came after the load and skipped the phases after it
 */
export async function recordFromFlags (values, command, io, probe) {
  const str = (/** @type {string} */ k) => /** @type {string | undefined} */ (values[k])
  const path = str('path') ?? '/'
  if (!path.startsWith('/')) throw new UsageError(`--path must start with '/', got '${path}'`)
  const loadOptions = await loadOptionsFromFlags(/** @type {any} */ (values))
  // Validate the load before starting anything, so a bad flag never costs a started server.
  const { plan } = preparePlan({ ...loadOptions, url: `http://127.0.0.1:1${path}` })
  const port = numberFlag('port', str('port'), { integer: true })
  const listenTimeout = /** @type {number} */ (durationFlag('listen-timeout', str('listen-timeout') ?? '30s'))
  const progress = new Progress(io.stderr, { duration: plan.duration, amount: plan.amount, warmup: plan.warmup })
  if (values['no-progress'] || str('on-port') !== undefined) progress.enabled = false
  const abort = new AbortController()
  /** @type {NodeJS.Signals | null} */
  let interruptedBy = null
  io.stopOnSignal((signal) => {
    interruptedBy ??= signal ?? 'SIGINT'
    abort.abort()
  })
  const attach = attachFromFlags(values, command)
  const observe = observeFromFlags(values)
  if (observe !== undefined) progress.enabled = false
  // The load's length is known ahead when hotpath makes it for a duration (not --on-port, not --amount).
  const known = str('on-port') === undefined && plan.amount === 0
  // Without a CPU profile the slice still says where the wait tracer looks, so that the rest measures the server alone.
  // Real traffic is looked into whole: at a few requests a second, every one of them counts.
  const profileSlice = probe.profileSlice && observe === undefined ? profileSliceFor(known ? plan.duration + plan.warmup : undefined, plan.warmup) : null
  const profiled = observe ?? profileSlice?.seconds ?? (known ? plan.duration + plan.warmup : undefined)
  const record = await recordRun({
    command,
    attach,
    load: loadOptions,
    path,
    port,
    onPort: str('on-port'),
    ...(observe !== undefined ? { observe } : {}),
    listenTimeout,
    ...probe,
    profileInterval: probe.profileInterval === 'auto'
      ? profileIntervalFor(profiled)
      : probe.profileInterval,
    profileSlice,
    signal: abort.signal,
    notice: (line) => io.stderr.write(`${line}\n`),
    status: (line) => {
      io.stderr.write(`${line}\n`)
      progress.start()
    },
    onBin: (bin) => progress.onBin(bin)
  }).finally(() => progress.stop())
  return { ...record, interruptedBy: record.aborted ? interruptedBy : null, skippedBy: record.aborted ? null : interruptedBy }
}

/** Flags of hotpath's own load, which `--observe` (no load sent) refuses. */
const LOAD_ONLY = ['on-port', 'connections', 'duration', 'rate', 'amount', 'pipelining', 'warmup', 'path', 'method', 'body', 'body-file', 'header', 'requests', 'workers']

/**
 * The seconds of `--observe`, refused together with a flag of hotpath's load.
 * @param {Record<string, unknown>} values
 * @returns {number | undefined}
 */
export function observeFromFlags (values) {
  const text = /** @type {string | undefined} */ (values.observe)
  if (text === undefined) return undefined
  const seconds = /** @type {number} */ (durationFlag('observe', text))
  if (!(seconds > 0)) throw new UsageError(`--observe needs a duration above zero, got '${text}'`)
  const load = LOAD_ONLY.find(k => values[k] !== undefined)
  if (load !== undefined) throw new UsageError(`--observe sends no load: --${load} has nothing to set (drop one of them)`)
  return seconds
}

/**
 * The pid of `--attach`, refused together with a command.
 * @param {Record<string, unknown>} values
 * @param {string[]} command
 * @returns {number | undefined}
 */
export function attachFromFlags (values, command) {
  const attach = numberFlag('attach', /** @type {string | undefined} */ (values.attach), { integer: true })
  if (attach !== undefined && command.length > 0) throw new UsageError('give either --attach <pid> or -- <command>, not both')
  return attach
}
