// The places the probe read off stacks — where requests wait, where listeners are added, where pools and clients are
// made, where settings are read — mapped to the source the user wrote. The probe writes them as V8 gives them,
// positions in the code that ran (src/sampling/stack.js), whatever maps the target had on or off; they are mapped here,
// once, through the same maps as the profiles (the copies of what loaders compiled in memory, the maps on disk).
import { runSources } from './run-data.js'

/**
 * @typedef {object} Site
 * @property {string} file
 * @property {number} line 1-based
 * @property {number} [column] 1-based, as a stack frame gives it
 */

/**
 * Maps every site of the run's threads in place. A run recorded before the probe wrote its stacks unmapped is left as
 * it is (its stacks may have been mapped by the target already).
 * @param {import('./run-data.js').RunData} data
 */
export function mapRunSites (data) {
  if (!data.threads.some(t => t.hello?.rawStacks === true)) return
  const mapper = runSources(data).mapper()
  if (mapper === null) return
  /** @param {any} site */
  const map = (site) => mapSite(site, mapper)
  for (const t of data.threads) {
    if (t.hello?.rawStacks !== true) continue
    for (const site of t.waits.sites.values()) {
      map(site)
      for (const caller of Array.isArray(site.callers) ? site.callers : []) map(caller)
    }
    for (const l of t.listeners) map(l?.site)
    for (const p of t.pools) map(p?.pool?.site)
    for (const snap of t.outgoing) for (const o of snap.outgoing) map(o?.site)
    for (const snap of t.sockets) for (const op of snap.ops) map(op?.site)
    for (const r of t.env) map(r?.site)
    for (const c of t.constructions ?? []) map(c?.site)
  }
}

/**
 * Maps one site in place: to its source's file, line and column when the script has a map; to no line (0) when a
 * loader compiled the script in memory and left none, since its line would be the compiled code's under the source's
 * name; else as it is.
 * @param {unknown} site
 * @param {import('../profile/source-maps.js').SourceMapper} mapper
 */
export function mapSite (site, mapper) {
  if (site === null || typeof site !== 'object') return
  const s = /** @type {Site} */ (site)
  if (typeof s.file !== 'string' || !s.file.startsWith('/') || !(s.line > 0)) return
  const column = typeof s.column === 'number' && s.column > 0 ? s.column - 1 : -1
  const original = mapper.original(s.file, s.line, column)
  if (original !== null) {
    s.file = original.file
    s.line = original.line
    if (typeof s.column === 'number') s.column = original.column + 1
  } else if (mapper.lost(s.file)) {
    s.line = 0
    if (typeof s.column === 'number') s.column = 0
  }
}
