// doctor's experiments from its flags: which settings to measure after the run (the verdict's, unless
// --no-experiments, and the user's --try), within --experiment-time, and where they are kept (experiments.json in the
// run directory, so that --analyse reports them again).
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { UsageError } from '../errors.js'
import { parseTry, plannedExperiments } from '../analysis/experiments.js'
import { agentRecord } from '../analysis/agent-limits.js'
import { computeSignals } from '../analysis/signals.js'
import { runExperiments } from '../experiments/runner.js'
import { durationFlag } from './args.js'
import { loadOptionsFromFlags } from './load-options.js'

const FILE = 'experiments.json'

/** @type {Record<string, import('./args.js').OptionSpec>} */
export const EXPERIMENT_FLAGS = {
  'no-experiments': { type: 'boolean', description: 'do not measure the runtime settings the verdict calls for (semi-space, heap limit, thread pool, a full agent\'s socket limit set in the environment) before advising them' },
  'experiment-time': { type: 'string', value: 'time', description: 'the most the experiments may take, all settings together', default: '90s' },
  try: { type: 'string', value: 'settings', description: 'measure your own hypothesis against the baseline: node flags and NAME=value (--try=\'--max-semi-space-size=64 UV_THREADPOOL_SIZE=8\')' }
}

/**
 * The experiment flags, checked before anything starts.
 * @param {Record<string, unknown>} values
 */
export function experimentFlags (values) {
  const tryText = /** @type {string | undefined} */ (values.try)
  if (tryText !== undefined) {
    const parsed = parseTry(tryText)
    if ('error' in parsed) throw new UsageError(parsed.error)
  }
  const raw = /** @type {string | undefined} */ (values['experiment-time'])
  const seconds = /** @type {number} */ (durationFlag('experiment-time', raw ?? '90s'))
  return { auto: values['no-experiments'] !== true, tryText, budgetMs: seconds * 1000 }
}

/**
 * Measures what the run's verdict calls for, and --try; writes them into the run directory. Nothing for a run that
 * failed or was interrupted: its figures are not a baseline.
 * @param {import('../analysis/diagnose.js').Diagnosis} facts
 * @param {import('../analysis/run-data.js').RunData} data
 * @param {Record<string, unknown>} values
 * @param {string[]} command
 * @param {ReturnType<typeof experimentFlags>} flags
 * @param {import('./main.js').Io} io
 * @returns {Promise<{ experiments: import('../analysis/experiments.js').Experiment[], interruptedBy: NodeJS.Signals | null }>}
 */
export async function measureSettings (facts, data, values, command, flags, io) {
  /** @type {import('../analysis/experiments.js').ExperimentPlan[]} */
  const plans = flags.auto && facts.failure === null && !data.run.aborted ? plannedExperiments(facts.category, computeSignals(data), targetEnv(command)) : []
  if (flags.tryText !== undefined && facts.failure === null && !data.run.aborted) {
    plans.push({ setting: 'try', kind: 'try', why: 'try', current: null, ladder: [flags.tryText.trim().split(/\s+/).join(' ')] })
  }
  if (plans.length === 0) return { experiments: [], interruptedBy: null }
  const runDir = data.dir
  // Each phase restarts the server: only a command doctor started itself can be, and only its built-in load repeated.
  if (command.length === 0 || values['on-port'] !== undefined) {
    const experiments = plans.map(p => p.kind === 'code'
      ? agentRecord(p, (p.candidates ?? []).length > 0 ? 'no-command' : 'in-code')
      : { setting: p.setting, kind: p.kind, why: p.why, current: p.current, tried: [], chosen: null, verdict: /** @type {const} */ ('not-run'), stopped: /** @type {const} */ ('no-command'), seconds: 0, phaseSeconds: 0, ...(p.facts ? { facts: p.facts } : {}) })
    writeFileSync(join(runDir, FILE), JSON.stringify(experiments, null, 2))
    return { experiments, interruptedBy: null }
  }
  const load = await loadOptionsFromFlags(/** @type {any} */ (values))
  const seconds = Math.min(5, load.duration ?? 10)
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
  if (measuring.length > 0) io.stderr.write(`Measuring ${names} before advising ${measuring.length > 1 ? 'them' : 'it'}: up to ${Math.round(flags.budgetMs / 1000)} s (--experiment-time; --no-experiments skips)…\n`)
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
  writeFileSync(join(runDir, FILE), JSON.stringify(experiments, null, 2))
  return { experiments, interruptedBy }
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
