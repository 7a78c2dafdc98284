// What keeps a leak, for doctor: the three heap snapshots its run took after the load (run/phases/retainer-phases.js),
// analysed as hotpath heap analyses its own, into retainers.json — which the diagnosis reads — and then removed.
import { existsSync, readFileSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { analyseSnapshots } from './analyse.js'

/**
 * @param {string} runDir
 * @param {() => import('../profile/sources.js').SourceCache} sources the run's scripts as they ran, read only when
 *   there are snapshots to analyse (the analysis reads them: analysis/run-data.js's dirSources; heap is below it)
 */
export async function analyseRetainers (runDir, sources) {
  const out = join(runDir, 'retainers.json')
  if (existsSync(out)) return
  let r
  try {
    r = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')).retainers
  } catch {
    return
  }
  if (!r || r.error !== null || !Array.isArray(r.snapshots) || r.snapshots.length !== 3) return
  const files = /** @type {[string, string, string]} */ (r.snapshots.map((/** @type {{ name: string }} */ s) => join(runDir, s.name)))
  if (!files.every(f => existsSync(f))) return
  const requests = Number(r.phases.find((/** @type {{ name: string }} */ p) => p.name === 'growth')?.requests) || 0
  let result
  try {
    const a = await analyseSnapshots(files, { requests, sources: sources() })
    result = { requests, culprits: a.culprits, survivors: a.survivors, minCount: a.threshold.minCount, error: null }
  } catch (err) {
    result = { requests, culprits: [], survivors: null, minCount: 0, error: String(/** @type {Error} */ (err)?.message ?? err) }
  }
  await writeFile(out, JSON.stringify(result, null, 2) + '\n')
  // A leaking heap's snapshots are hundreds of MB each: what they told is kept, they are not (hotpath heap keeps its).
  if (result.error === null) await Promise.all(files.map(f => rm(f, { force: true })))
}
