// doctor's experiments from its flags: which settings the verdict calls for (unless --no-experiments, and the user's
// --try); measured after the verdict within --experiment-time when asked for, else proposed with the command that
// measures them and how long it takes; kept in the run directory (experiments.json), so that --analyse reports them.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { UsageError } from '../errors.js'
import { parseTry, plannedExperiments } from '../analysis/experiments.js'
import { agentRecord } from '../analysis/agent-limits.js'
import { computeSignals } from '../analysis/signals.js'
import { plannedSeconds, runExperiments } from '../experiments/run-experiments.js'
import { durationFlag } from './args.js'
import { loadOptionsFromFlags } from './load-options.js'

const FILE = 'experiments.json'

/** @type {Record<string, import('./args.js').OptionSpec>} */
export const EXPERIMENT_FLAGS = {
  'no-experiments': { type: 'boolean', description: 'do not propose or measure the runtime settings the verdict calls for (semi-space, heap limit, thread pool, a full agent\'s socket limit set in the environment)' },
  'experiment-time': { type: 'string', value: 'time', description: 'measure the settings the verdict calls for, after it, for at most this long (each phase restarts the server), e.g. 90s', default: 'none: the command that measures them is proposed, with how long it takes' },
  try: { type: 'string', value: 'settings', description: 'measure your own hypothesis against the baseline: node flags and NAME=value (--try=\'--max-semi-space-size=64 UV_THREADPOOL_SIZE=8\'; 90 s unless --experiment-time)' }
}

/** The experiments' time when --try asks for one and --experiment-time does not say. */
const TRY_SECONDS = 90

/**
 * The experiment flags, checked before anything starts. The experiments run only when asked for (--experiment-time,
 * --try): they restart the server for each phase, tens of seconds beyond the verdict, which comes first.
 * @param {Record<string, unknown>} values
 */
export function experimentFlags (values) {
  const tryText = /** @type {string | undefined} */ (values.try)
  if (tryText !== undefined) {
    const parsed = parseTry(tryText)
    if ('error' in parsed) throw new UsageError(parsed.error)
  }
  const raw = /** @type {string | undefined} */ (values['experiment-time'])
  const seconds = raw === undefined ? (tryText !== undefined ? TRY_SECONDS : 0) : /** @type {number} */ (durationFlag('experiment-time', raw))
  return { auto: values['no-experiments'] !== true, measure: raw !== undefined, tryText, budgetMs: seconds * 1000 }
}

/**
 * @typedef {object} SettingsPlan what the verdict's settings come to before anything is measured
 * @property {import('../analysis/experiments.js').ExperimentPlan[]} plans to measure now (the flags asked for it)
 * @property {import('../analysis/experiments.js').Experiment[]} records what is said without measuring: settings
 *   doctor cannot measure here (no command it started, an agent's limit fixed in the code) or that were not asked
 *   for (`proposed`: with the command that measures them and how long it takes)
 */

/**
 * Which settings the run's verdict calls for, and --try; which are measured now, and which are only said. Nothing for
 * a run that failed or was interrupted: its figures are not a baseline.
 * @param {import('../analysis/diagnose.js').Diagnosis} facts
 * @param {import('../analysis/run-data.js').RunData} data
 * @param {Record<string, unknown>} values
 * @param {string[]} command
 * @param {ReturnType<typeof experimentFlags>} flags
 * @param {string[]} argv doctor's own flags as given (before --), for the command that measures what is proposed
 * @returns {Promise<SettingsPlan>}
 */
export async function planSettings (facts, data, values, command, flags, argv) {
  /** @type {import('../analysis/experiments.js').ExperimentPlan[]} */
  const plans = flags.auto && facts.failure === null && !data.run.aborted ? plannedExperiments(facts.category, computeSignals(data), targetEnv(command)) : []
  if (flags.tryText !== undefined && facts.failure === null && !data.run.aborted) {
    plans.push({ setting: 'try', kind: 'try', why: 'try', current: null, ladder: [flags.tryText.trim().split(/\s+/).join(' ')] })
  }
  if (plans.length === 0) return { plans: [], records: [] }
  // Each phase restarts the server: only a command doctor started itself can be, and only its built-in load repeated.
  if (command.length === 0 || values['on-port'] !== undefined) {
    const records = plans.map(p => p.kind === 'code'
      ? agentRecord(p, (p.candidates ?? []).length > 0 ? 'no-command' : 'in-code')
      : notRun(p, 'no-command'))
    return { plans: [], records }
  }
  if (flags.budgetMs > 0) return { plans, records: [] }
  // Not asked for: an agent's limit that nothing the app reads could set is in the code, said without a start; the
  // rest is proposed, with the command that measures it and how long that takes.
  const load = await loadOptionsFromFlags(/** @type {any} */ (values))
  const seconds = plannedSeconds(plans.filter(p => p.kind !== 'code' || (p.candidates ?? []).length > 0), phaseSeconds(load))
  const budget = Math.ceil(seconds / 10) * 10
  const proposed = { seconds: Math.round(seconds), command: rerunCommand(argv, command, budget) }
  const records = plans.map(p => p.kind === 'code' && (p.candidates ?? []).length === 0
    ? agentRecord(p, 'in-code')
    : { ...(p.kind === 'code' ? agentRecord(p, 'proposed') : notRun(p, 'proposed')), proposal: { ...proposed, values: p.kind === 'code' ? [] : p.ladder } })
  return { plans: [], records }
}

/**
 * An experiment that measured nothing, and why.
 * @param {import('../analysis/experiments.js').ExperimentPlan} p
 * @param {'no-command' | 'proposed'} stopped
 * @returns {import('../analysis/experiments.js').Experiment}
 */
function notRun (p, stopped) {
  return { setting: p.setting, kind: p.kind, why: p.why, current: p.current, tried: [], chosen: null, verdict: 'not-run', stopped, seconds: 0, phaseSeconds: 0, ...(p.facts ? { facts: p.facts } : {}) }
}

/**
 * Seconds each phase of an experiment measures: doctor's own load, at most 5 s of it.
 * @param {Awaited<ReturnType<typeof loadOptionsFromFlags>>} load
 */
function phaseSeconds (load) {
  return Math.min(5, load.duration ?? 10)
}

/**
 * The command that measures the first value a ladder left untried, as the user's own hypothesis (--try), and how long
 * its phases take.
 * @param {import('../analysis/experiments.js').Experiment} e
 * @param {string[]} argv
 * @param {string[]} command
 * @param {number} phase seconds each phase measures
 */
function nextValue (e, argv, command, phase) {
  const values = e.untried ?? []
  const setting = e.kind === 'flag' ? `--${e.setting}=${values[0]}` : `${e.setting}=${values[0]}`
  const seconds = Math.round(plannedSeconds([{ setting: 'try', kind: 'try', why: 'try', current: null, ladder: [setting] }], phase))
  const budget = Math.ceil(seconds / 10) * 10
  const own = ownFlags(argv).filter((w, k, all) => !/^--(try|no-experiments)\b/.test(w) && !(all[k - 1] === '--try'))
  const words = ['hotpath', 'doctor', ...own, '--no-experiments', `--try=${setting}`, '--experiment-time', `${budget}s`, '--', ...command]
  return { seconds, command: words.map(quote).join(' '), values }
}

/**
 * The doctor command that measures the settings: the same flags, with --experiment-time and without those that name
 * this run's files.
 * @param {string[]} argv
 * @param {string[]} command
 * @param {number} seconds
 */
function rerunCommand (argv, command, seconds) {
  return ['hotpath', 'doctor', ...ownFlags(argv), '--experiment-time', `${seconds}s`, '--', ...command].map(quote).join(' ')
}

/**
 * Doctor's flags, without those that name this run's files or its experiment time.
 * @param {string[]} argv
 */
function ownFlags (argv) {
  const own = []
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]
    const name = /^--([\w-]+)/.exec(word)?.[1]
    if (name !== undefined && ['save', 'json', 'report', 'experiment-time'].includes(name)) {
      if (!word.includes('=')) i++
      continue
    }
    if (name === 'open' || name === 'no-progress') continue
    own.push(word)
  }
  return own
}

/**
 * A word as a shell reads it back.
 * @param {string} word
 */
function quote (word) {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`
}

/**
 * Measures the settings, each phase a restart of the server, within --experiment-time; writes them, with what was
 * said without measuring, into the run directory. Ctrl-C skips what is left.
 * @param {SettingsPlan} planned
 * @param {import('../analysis/run-data.js').RunData} data
 * @param {Record<string, unknown>} values
 * @param {string[]} command
 * @param {ReturnType<typeof experimentFlags>} flags
 * @param {import('./main.js').Io} io
 * @param {string[]} [argv] doctor's own flags, for the command that measures what the time left untried
 * @returns {Promise<{ experiments: import('../analysis/experiments.js').Experiment[], interruptedBy: NodeJS.Signals | null }>}
 */
export async function measureSettings (planned, data, values, command, flags, io, argv = []) {
  const runDir = data.dir
  const { plans, records } = planned
  if (plans.length === 0) {
    if (records.length > 0) writeFileSync(join(runDir, FILE), JSON.stringify(records, null, 2))
    return { experiments: records, interruptedBy: null }
  }
  const load = await loadOptionsFromFlags(/** @type {any} */ (values))
  const seconds = phaseSeconds(load)
  const abort = new AbortController()
  /** @type {NodeJS.Signals | null} */
  let interruptedBy = null
  io.stopOnSignal((signal) => {
    interruptedBy ??= signal ?? 'SIGINT'
    abort.abort()
  })
  // An agent's limit that nothing the app reads could set is in the code: said without a start.
  const measuring = plans.filter(p => p.kind !== 'code' || (p.candidates ?? []).length > 0)
  const names = measuring.map(p => p.setting === 'try' ? `--try '${p.ladder[0]}'` : p.kind === 'code' ? `${p.facts?.agent}'s maxSockets` : p.setting).join(', ')
  if (measuring.length > 0) io.stderr.write(`Measuring ${names} before advising ${measuring.length > 1 ? 'them' : 'it'}: up to ${Math.round(flags.budgetMs / 1000)} s, the server restarted for each phase (--experiment-time; Ctrl-C skips)…\n`)
  const port = values.port === undefined ? undefined : Number(values.port)
  const experiments = await runExperiments(plans, {
    command,
    load,
    path: /** @type {string | undefined} */ (values.path) ?? '/',
    port,
    listenTimeout: /** @type {number} */ (durationFlag('listen-timeout', /** @type {string | undefined} */ (values['listen-timeout']) ?? '30s')),
    seconds,
    signal: abort.signal
  }, { budgetMs: flags.budgetMs, status: line => io.stderr.write(`${line}\n`) })
  // A ladder the time cut short is not an answer: the command that measures its next value goes with it.
  const all = [...records, ...experiments.map(e => e.untried && (e.kind === 'flag' || e.kind === 'env') ? { ...e, proposal: nextValue(e, argv, command, seconds) } : e)]
  writeFileSync(join(runDir, FILE), JSON.stringify(all, null, 2))
  return { experiments: all, interruptedBy }
}

/**
 * The experiments a recorded run kept, for --analyse; none when it has no file (or an unreadable one).
 * @param {string} runDir
 * @returns {import('../analysis/experiments.js').Experiment[]}
 */
export function savedExperiments (runDir) {
  const file = join(runDir, FILE)
  if (!existsSync(file)) return []
  try {
    const list = JSON.parse(readFileSync(file, 'utf8'))
    return Array.isArray(list) ? list : []
  } catch {
    return []
  }
}

/**
 * The environment the target ran in, as far as its node flags go: node reads NODE_OPTIONS and then the flags its
 * command line gives before the script (`node --max-semi-space-size=16 app.js`), and the last word counts.
 * @param {string[]} command
 * @returns {NodeJS.ProcessEnv}
 */
function targetEnv (command) {
  if (command.length === 0 || !/^node(js)?(\d+)?(\.exe)?$/.test(basename(command[0]))) return process.env
  const script = command.findIndex((w, k) => k > 0 && !w.startsWith('-'))
  const own = command.slice(1, script === -1 ? undefined : script).filter(w => w.startsWith('--'))
  return own.length === 0 ? process.env : { ...process.env, NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', ...own].join(' ').trim() }
}
