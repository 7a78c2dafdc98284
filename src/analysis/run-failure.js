import { loadFailure } from '../load/result.js'
import { displayPath } from './paths.js'
import { heapExhaustion, memoryKilled } from './heap-exhaustion.js'

/**
 * What went wrong with a run, when it did not measure what was asked: the target failed (it crashed, or serving
 * processes died during the load), or the load failed (the load command failed, the server spoke no HTTP, most
 * responses were errors). A run that failed must say so first, whatever its figures look like.
 * @typedef {object} RunFailure
 * @property {'target-failed' | 'load-failed'} category
 * @property {string} what what happened, in a few words: `the target crashed`, `2 of 2 cluster workers died`,
 *   `the --on-port command exited with code 7`, `every response was 404 Not Found`
 * @property {number | null} at seconds into the load when it happened, when known
 * @property {{ message: string, at: { function: string, file: string, line: number } | null } | null} error the
 *   error the target printed as it died (its message, and the app's frame that threw), when it printed one
 * @property {{ pid: number, threadId: number, role: string, at: number }[]} died the serving processes that exited
 *   during the load, seconds into it: before its end (hotpath stops the target only after the load has ended, so a
 *   process that exits before was not stopped by it)
 * @property {FailureFacts} facts what `what` says, as a stable name and the numbers it cites
 */

/**
 * What went wrong, in facts: cluster workers that died (how many, of how many, and how the target exited after, when
 * it did), the target's exit (its code or signal), a serving process gone without the target exiting, the --on-port
 * command's exit code (127: not found, null: killed), or a load that did not measure what was asked (its `reason`, as
 * `hotpath load` judges it: the requests that ended, the responses among them, those that were not 2xx, the errors).
 * @typedef {{ kind: 'workers-died', died: number, workers: number, exit: { code: number | null, signal: string | null } | null }
 *   | { kind: 'target-exited', code: number | null, signal: string | null }
 *   | ({ kind: 'heap-exhausted' | 'memory-killed', code: number | null, signal: string | null } & import('./heap-exhaustion.js').HeapExhaustion)
 *   | { kind: 'server-died' }
 *   | { kind: 'on-port-failed', code: number | null }
 *   | { kind: 'load-failed', reason: import('../load/result.js').LoadFailure['reason'], requests: number, responses: number, badResponses: number, errors: number, timeouts: number, timeoutSeconds: number }} FailureFacts
 */

/**
 * @param {import('./run-data.js').RunData} data
 * @param {import('./signals.js').Signals} signals
 * @returns {RunFailure | null}
 */
export function runFailure (data, signals) {
  const run = data.run
  const { start, end } = run.loadWindow
  const error = errorOf(run.stderr, run.cwd)
  const died = data.threads
    .filter(t => t.threadId === 0 && t.exitedAt !== undefined && t.exitedAt < end && t.exitedAt >= start && t.listening.some(l => l.port === signals.port))
    .map(t => ({ pid: t.pid, threadId: t.threadId, role: String(t.hello.role ?? 'main'), at: round((/** @type {number} */ (t.exitedAt) - start) / 1000) }))
  const how = run.exit.signal ? `on signal ${run.exit.signal}` : `with code ${run.exit.code}`
  // Workers that died are the news, before what their primary did after (a primary left without workers exits 0).
  const workers = died.filter(d => d.role === 'cluster-worker')
  if (workers.length > 0) {
    const serving = data.threads.filter(t => t.threadId === 0 && t.hello.role === 'cluster-worker' && t.listening.some(l => l.port === signals.port)).length
    return {
      category: 'target-failed',
      what: `${workers.length} of ${serving} cluster worker${serving === 1 ? '' : 's'} died during the load${run.exit.crashed ? `, and the target exited ${how}` : ''}`,
      at: Math.min(...workers.map(d => d.at)),
      error,
      died: workers,
      facts: { kind: 'workers-died', died: workers.length, workers: serving, exit: run.exit.crashed ? exitOf(run.exit) : null }
    }
  }
  if (run.exit.crashed || died.length > 0) {
    const at = died.length > 0 ? died[0].at : round((end - start) / 1000)
    const heap = heapExhaustion(data)
    if (heap !== null) {
      return { category: 'target-failed', what: `the target ran out of heap and exited ${how}`, at, error, died, facts: { kind: 'heap-exhausted', ...exitOf(run.exit), ...heap } }
    }
    const killed = memoryKilled(data)
    if (killed !== null) {
      const by = killed.oomKill ? 'the out-of-memory killer killed it' : 'probably the out-of-memory killer'
      return { category: 'target-failed', what: `the target was killed ${how} at the container's memory limit (${by})`, at, error, died, facts: { kind: 'memory-killed', ...exitOf(run.exit), ...killed } }
    }
    return run.exit.crashed
      ? { category: 'target-failed', what: `the target exited ${how}`, at, error, died, facts: { kind: 'target-exited', ...exitOf(run.exit) } }
      : { category: 'target-failed', what: 'the server process died', at, error, died, facts: { kind: 'server-died' } }
  }
  if (run.onPort && run.onPort.code !== 0) {
    const code = run.onPort.code
    const what = code === 127 ? 'the --on-port command was not found' : `the --on-port command ${code === null ? 'was killed' : `exited with code ${code}`}`
    return { category: 'load-failed', what, at: null, error: null, died: [], facts: { kind: 'on-port-failed', code } }
  }
  // Judged as `hotpath load` judges it, from the figures (so runs saved before loads carried `failed` are judged alike),
  // however the run ended: a load stopped by Ctrl-C after 18,888 responses, all 404, failed all the same. Only one
  // stopped before any request ended is not judged (the interruption is what happened, and the run says that).
  const load = run.load ? loadFailure(run.load, { interrupted: run.aborted }) : null
  if (run.load && load !== null) {
    const errors = run.load.errors
    return {
      category: 'load-failed',
      what: load.detail.replace(/^the load failed: /, ''),
      at: null,
      error: null,
      died: [],
      facts: { kind: 'load-failed', reason: load.reason, requests: load.total, responses: load.total - errors, badResponses: load.bad - errors, errors, timeouts: run.load.timeouts ?? 0, timeoutSeconds: run.load.hotpath.options.timeout }
    }
  }
  return null
}

/**
 * @param {{ code: number | null, signal: string | null }} exit
 */
function exitOf (exit) {
  return { code: exit.code, signal: exit.signal }
}

/**
 * The error a dying process printed: the last line that names an error (Node prints the message after the source line
 * and before the stack), and the first frame of the app below it.
 * @param {string[]} lines the target's last lines of stderr
 * @param {string} cwd
 * @returns {RunFailure['error']}
 */
export function errorOf (lines, cwd) {
  let i = -1
  for (let k = lines.length - 1; k >= 0; k--) {
    if (ERROR_LINE.test(lines[k])) {
      i = k
      break
    }
  }
  if (i === -1) return null
  const message = lines[i].trim().slice(0, 300)
  /** @type {{ function: string, file: string, line: number } | null} */
  let at = null
  for (const line of lines.slice(i + 1)) {
    const m = /^\s+at (?:(?:async )?(.*?) \()?(.+?):(\d+):\d+\)?$/.exec(line)
    if (m === null) continue
    const file = m[2]
    if (file.startsWith('node:') || file.includes('/node_modules/') || file.startsWith('internal/')) continue
    at = { function: m[1] ?? '(anonymous)', file: displayPath(file, cwd), line: Number(m[3]) }
    break
  }
  return { message, at }
}

// `TypeError: …`, `Error [ERR_X]: …`, `Uncaught …`, `FATAL ERROR: … heap out of memory`, `node:internal/… throw err;`
// is not one (it precedes the message).
const ERROR_LINE = /^(?:Uncaught )?(?:[A-Z]\w*(?:Error|Exception)\b.*|Error\b.*|FATAL ERROR:.*|\[?\w*Error\]?:.*)$/

/** @param {number} v */
const round = (v) => Math.round(v * 10) / 10
