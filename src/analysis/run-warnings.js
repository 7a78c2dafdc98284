// What the damaged files of a run cost the diagnosis, as facts (src/report/words/warnings.js words them): a verdict or
// a list of culprits that rests on data that could not be read must say so, not pass for one that was measured whole.
// So must a culprit's line that no source map could place in the source the user wrote.
import { isAbsolute, resolve } from 'node:path'
import { runSources } from './run-data.js'

/**
 * @typedef {object} RunWarning
 * @property {string} file the damaged file (absolute path); for `sourceMap`, the script whose map is missing
 * @property {import('./run-data.js').RunDamage['kind'] | 'sourceMap'} kind what it held: `events` (the probe's event
 *   log), `cpu` (the CPU profile), `heapAllocations` or `heapRetained` (heap samples), `retainers` (what the heap
 *   snapshots found); `sourceMap`: a culprit's script whose source map is missing or unreadable (pid 0: the run's)
 * @property {boolean} notTaken the heap phase after the window that takes it stopped short: `problem` says why
 * @property {boolean} notWritten the probe never wrote it: `problem` says why
 * @property {number} pid
 * @property {number} threadId
 * @property {string} problem what is wrong with the file
 * @property {'verdict' | 'culprits' | 'nothing'} affects the most it may have changed
 * @property {Loss} loss what the diagnosis lacks because of it
 */

/**
 * What a damaged file cost: `thread-lost` (nothing of its thread could be read), `lines-lost` (lines of its event
 * log; `helloLost`: with them its command line and working directory), `cpu-culprits` (no CPU culprits from it;
 * `utilizationMisread`: its utilisation is left as libuv misread it under the profiler), `allocation-culprits`,
 * `retained-culprits`, `leak-culprits-allocated` (the leak's culprits are what it allocated, not what stayed alive),
 * `retainer-paths` (no culprit says what keeps the leak alive),
 * `source-lines` (a culprit's line is not the source's: `lost`, no line is given — a loader compiled the script in
 * memory; else the line is the compiled file's, `map` the map that could not be read),
 * `none` (nothing, for this verdict: `category` does not blame `blames`).
 * @typedef {{ kind: 'thread-lost' }
 *   | { kind: 'lines-lost', lines: number, helloLost: boolean }
 *   | { kind: 'cpu-culprits', utilizationMisread: boolean }
 *   | { kind: 'allocation-culprits' }
 *   | { kind: 'retained-culprits' }
 *   | { kind: 'leak-culprits-allocated' }
 *   | { kind: 'retainer-paths' }
 *   | { kind: 'source-lines', lost: boolean, map: string | null }
 *   | { kind: 'none', category: string, blames: 'allocations' | 'what stays alive' | 'what keeps memory alive' }} Loss
 */

/**
 * @param {import('./run-data.js').RunData} data
 * @param {string} category what the figures say (rules' category)
 * @returns {RunWarning[]}
 */
export function runWarnings (data, category) {
  return data.damage.map(d => {
    const t = data.threads.find(x => x.pid === d.pid && x.threadId === d.threadId)
    const { loss, affects } = lossOf(d, t, category)
    return { file: d.file, kind: d.kind, pid: d.pid, threadId: d.threadId, problem: d.problem, notTaken: d.notTaken === true, notWritten: d.notWritten === true, affects, loss }
  })
}

/**
 * The app's scripts among the culprits whose source map is missing or unreadable, once each: their lines are not the
 * source's.
 * @param {import('./run-data.js').RunData} data
 * @param {{ file: string }[]} culprits as the diagnosis names them (paths relative to the target's directory)
 * @returns {RunWarning[]}
 */
export function sourceMapWarnings (data, culprits) {
  const problems = runSources(data).mapper()?.problems
  if (!problems || problems.size === 0) return []
  const cwds = new Set([data.run.cwd, ...data.threads.map(t => t.hello.cwd).filter(c => typeof c === 'string')])
  const named = new Set(culprits.flatMap(c => isAbsolute(c.file) ? [c.file] : [...cwds].map(cwd => resolve(cwd, c.file))))
  /** @type {RunWarning[]} */
  const out = []
  for (const p of problems.values()) {
    // A package's own compiled lines are what its files hold: only the app's files are worth a warning.
    if (!named.has(p.file) || p.file.includes('/node_modules/')) continue
    out.push({ file: p.file, kind: 'sourceMap', pid: 0, threadId: 0, problem: p.reason, notTaken: false, notWritten: false, affects: 'nothing', loss: { kind: 'source-lines', lost: p.lost, map: p.map } })
  }
  return out
}

/**
 * @param {import('./run-data.js').RunDamage} d
 * @param {import('./run-data.js').ThreadRecord | undefined} t the thread, when anything of it could be read
 * @param {string} category
 * @returns {{ loss: Loss, affects: RunWarning['affects'] }}
 */
function lossOf (d, t, category) {
  switch (d.kind) {
    case 'events':
      if (t === undefined) return { loss: { kind: 'thread-lost' }, affects: 'verdict' }
      // Without its hello, the thread's command line and working directory are unknown: so is where the app's code is.
      return { loss: { kind: 'lines-lost', lines: d.lines ?? 0, helloLost: Object.keys(t.hello).length === 0 }, affects: 'verdict' }
    case 'cpu':
      // Without its profile, the thread's utilisation stays as libuv misread it while profiling (profile-utilization.js).
      return t?.clock
        ? { loss: { kind: 'cpu-culprits', utilizationMisread: true }, affects: 'verdict' }
        : { loss: { kind: 'cpu-culprits', utilizationMisread: false }, affects: 'culprits' }
    case 'heapAllocations':
      if (category === 'gc') return { loss: { kind: 'allocation-culprits' }, affects: 'culprits' }
      if (category === 'memory-leak' && !t?.profiles.heapRetained) return { loss: { kind: 'allocation-culprits' }, affects: 'culprits' }
      return { loss: { kind: 'none', category, blames: 'allocations' }, affects: 'nothing' }
    case 'heapRetained':
      if (category === 'memory-leak') {
        return t?.profiles.heapAllocations
          ? { loss: { kind: 'leak-culprits-allocated' }, affects: 'culprits' }
          : { loss: { kind: 'retained-culprits' }, affects: 'culprits' }
      }
      return { loss: { kind: 'none', category, blames: 'what stays alive' }, affects: 'nothing' }
    case 'retainers':
      if (category === 'memory-leak') return { loss: { kind: 'retainer-paths' }, affects: 'culprits' }
      return { loss: { kind: 'none', category, blames: 'what keeps memory alive' }, affects: 'nothing' }
  }
}
