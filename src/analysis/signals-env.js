// The environment variables the serving processes read (the probe notes each at its first read, src/sampling/
// env-reads.js), with where: what doctor needs to tell whether a limit it found full comes from the environment.
import { displayPath } from './paths.js'

/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */

/**
 * @typedef {object} EnvReadSignal
 * @property {string} name
 * @property {boolean} set whether it had a value when the app first read it
 * @property {string | null} value that value when a whole number, else null (other values are not recorded)
 * @property {{ function: string, file: string, line: number } | null} site where the app first read it, as the target
 *   sees the file
 * @property {boolean} dependency read by a package (under node_modules), not the app's own code
 */

/**
 * Each variable once, at its earliest read in any thread of the serving processes.
 * @param {ThreadRecord[]} threads
 * @param {string} cwd the run's working directory, for threads that did not say theirs
 * @returns {EnvReadSignal[]}
 */
export function envReads (threads, cwd) {
  /** @type {Map<string, { time: number, read: EnvReadSignal }>} */
  const byName = new Map()
  for (const t of threads) {
    const base = String(t.hello.cwd ?? cwd)
    for (const r of Array.isArray(t.env) ? t.env : []) {
      const time = Number(r.time) || 0
      const had = byName.get(r.name)
      if (had && had.time <= time) continue
      const s = r.site
      const site = s && typeof s.file === 'string' ? { function: String(s.function || '(anonymous)'), file: displayPath(s.file, base), line: Number(s.line) || 0 } : null
      const value = typeof r.value === 'string' && /^\d{1,9}$/.test(r.value) ? r.value : null
      // Decided on the path the probe saw: shown relative to the working directory it may start with node_modules.
      const dependency = site !== null && /[\\/]node_modules[\\/]/.test(String(s?.file))
      byName.set(r.name, { time, read: { name: r.name, set: r.set === true, value, site, dependency } })
    }
  }
  return [...byName.values()].sort((a, b) => a.time - b.time).map(e => e.read)
}
