// After a crash on heap exhaustion, doctor loads the target once more with the larger heap limit its advice proposes,
// under the same load, and says what that gave (docs/diagnosis.md, "A larger heap limit, tried"). It runs by default:
// the run failed anyway, and whether the raise is the remedy is what the user needs next; it costs one load and a
// start, comes after the verdict, and --no-experiments or Ctrl-C skips it. Kept in the run directory
// (heap-retry.json), so that --analyse reports it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { freemem } from 'node:os'
import { join } from 'node:path'
import { judgeRetry, notRetried } from '../analysis/heap-retry.js'
import { runHeapRetry } from '../run/phases/heap-retry-phase.js'
import { durationFlag } from './args.js'
import { loadOptionsFromFlags } from './load-options.js'
import { formatBytes, formatCount } from '../report/format.js'

const FILE = 'heap-retry.json'
const MB = 1048576

/**
 * @typedef {{ value: number, firstSeconds: number | null, record: import('../analysis/heap-retry.js').HeapRetry | null, lowered?: boolean }} RetryPlan
 *   the limit to try (MB), how long the diagnosed load lasted before its crash, when it cannot be tried the record
 *   that says why, and whether the limit is a lower one (the container's memory was the ceiling)
 */

/**
 * Whether the run calls for the retry: a crash on heap exhaustion whose advice proposes a larger limit (not when the
 * container is the ceiling: a larger heap limit would only trade V8's crash for the out-of-memory killer), or a kill
 * by the container's out-of-memory killer with V8's limit near or above the container's memory, whose advice proposes
 * a lower one — unless --no-experiments.
 * @param {import('../analysis/diagnose.js').Diagnosis} facts
 * @param {import('../analysis/run-data.js').RunData} data
 * @param {Record<string, unknown>} values
 * @param {string[]} command
 * @param {{ auto: boolean }} flags
 * @returns {RetryPlan | null}
 */
export function planHeapRetry (facts, data, values, command, flags) {
  const f = facts.failure?.facts
  if (f?.kind !== 'heap-exhausted' && f?.kind !== 'memory-killed') return null
  const value = f.kind === 'heap-exhausted' ? f.raiseTo : f.lowerTo
  if (!flags.auto || data.run.aborted || value === null) return null
  const { start, end } = data.run.loadWindow
  const firstSeconds = Math.round((end - start) / 100) / 10
  const lowered = f.kind === 'memory-killed'
  if (command.length === 0 || values['on-port'] !== undefined) return { value, firstSeconds, record: notRetried(value, 'no-command', firstSeconds, lowered) }
  // Never past the memory the machine has free: a limit above it trades a heap error for the out-of-memory killer.
  if (!lowered && value * MB > freemem() + (f.heapLimit ?? 0)) return { value, firstSeconds, record: notRetried(value, 'no-room', firstSeconds) }
  return { value, firstSeconds, record: null, lowered }
}

/**
 * Loads the target again with the larger limit (or records why not), says what it gave on stderr, and keeps it in
 * the run directory. Ctrl-C skips it.
 * @param {RetryPlan} plan
 * @param {string} runDir
 * @param {Record<string, unknown>} values
 * @param {string[]} command
 * @param {import('./main.js').Io} io
 * @returns {Promise<{ retry: import('../analysis/heap-retry.js').HeapRetry, interruptedBy: NodeJS.Signals | null }>}
 */
export async function retryHeapLimit (plan, runDir, values, command, io) {
  if (plan.record !== null) {
    writeFileSync(join(runDir, FILE), JSON.stringify(plan.record, null, 2))
    return { retry: plan.record, interruptedBy: null }
  }
  const load = await loadOptionsFromFlags(/** @type {any} */ (values))
  const seconds = load.duration ?? Math.max(10, Math.ceil(plan.firstSeconds ?? 0))
  const abort = new AbortController()
  /** @type {NodeJS.Signals | null} */
  let interruptedBy = null
  io.stopOnSignal((signal) => {
    interruptedBy ??= signal ?? 'SIGINT'
    abort.abort()
  })
  const flag = `--max-old-space-size=${plan.value}`
  io.stderr.write(`Loading it again with ${flag}, the ${plan.lowered ? 'lower ' : ''}limit the advice proposes, under the same load: up to ${Math.round(seconds + (load.warmup ?? 0))} s and a start (--no-experiments skips this; Ctrl-C skips)…\n`)
  const phase = await runHeapRetry(flag, {
    command,
    load,
    path: /** @type {string | undefined} */ (values.path) ?? '/',
    port: values.port === undefined ? undefined : Number(values.port),
    listenTimeout: /** @type {number} */ (durationFlag('listen-timeout', /** @type {string | undefined} */ (values['listen-timeout']) ?? '30s')),
    maxSeconds: seconds,
    signal: abort.signal
  })
  const retry = judgeRetry(phase, plan.value, plan.firstSeconds, plan.lowered === true)
  io.stderr.write(`With ${flag}: ${retryLine(retry)}\n`)
  writeFileSync(join(runDir, FILE), JSON.stringify(retry, null, 2))
  return { retry, interruptedBy }
}

/**
 * What the retry gave, in a line for the progress on stderr.
 * @param {import('../analysis/heap-retry.js').HeapRetry} r
 */
function retryLine (r) {
  const heap = r.peakHeap !== null ? `peak heap ${formatBytes(r.peakHeap)}${r.heapLimit !== null ? ` of ${formatBytes(r.heapLimit)}` : ''}` : 'heap not read'
  if (r.outcome === 'survived') return `the load ran to its end without a crash (${formatCount(r.requestsPerSecond ?? 0)} req/s, ${heap})`
  if (r.outcome === 'crashed') return `the heap ran out${r.lowered ? ' (an error, not a kill)' : ' again'} after ${r.seconds ?? '?'} s of load (${heap})`
  if (r.outcome === 'exited') return `the target exited ${r.exit?.signal ? `on signal ${r.exit.signal}` : `with code ${r.exit?.code}`} after ${r.seconds ?? '?'} s of load (${heap})`
  if (r.outcome === 'interrupted') return 'skipped (interrupted)'
  return `measured nothing (${r.error ?? 'no responses'})`
}

/**
 * The retry a recorded run kept, for --analyse; null when it has none (or an unreadable one).
 * @param {string} runDir
 * @returns {import('../analysis/heap-retry.js').HeapRetry | null}
 */
export function savedHeapRetry (runDir) {
  const file = join(runDir, FILE)
  if (!existsSync(file)) return null
  try {
    const r = JSON.parse(readFileSync(file, 'utf8'))
    return r && typeof r === 'object' && typeof r.outcome === 'string' ? r : null
  } catch {
    return null
  }
}
