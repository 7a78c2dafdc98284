// The allocation flame graph of a `hotpath heap` run: the sampling heap profile the probe kept from the growth phase
// to the last snapshot (only objects still alive then) turned into the flame graph files `hotpath flame` writes, and
// the lines that allocated most of it. It lives with the command: it joins the heap report to the profile layer.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { writeProfileFiles } from './flame-files.js'

/** @typedef {import('../heap/report-data.js').HeapAllocations} HeapAllocations */

/**
 * @param {string} runDir
 * @param {{ file: string } | { error: string } | null} recorded what the run recorded, or null for a run read back
 *   with --analyse (the profile is then looked for in the run directory)
 * @param {import('../profile/sources.js').SourceCache} [sources] the scripts as they ran
 * @returns {Promise<HeapAllocations | null>} null when there is nothing to show and nothing to explain
 */
export async function allocationFlame (runDir, recorded, sources) {
  if (recorded !== null && 'error' in recorded) return { error: recorded.error }
  const file = recorded?.file ?? join(runDir, 'allocations.heapprofile')
  /** @type {import('../profile/cpuprofile.js').SamplingHeapProfile} */
  let profile
  try {
    profile = JSON.parse(await readFile(file, 'utf8'))
  } catch (err) {
    if (recorded === null) return null
    return { error: `its profile could not be read (${/** @type {NodeJS.ErrnoException} */ (err).code ?? /** @type {Error} */ (err).message})` }
  }
  const output = join(runDir, 'allocations')
  const { model, culprits } = await writeProfileFiles({ type: 'heap', profile }, {
    output,
    title: 'hotpath heap: where the objects still alive after the growth and settle phases were allocated',
    culprits: 5,
    ...(sources ? { sources } : {})
  })
  return {
    flame: `${output}.html`,
    profile: file,
    bytes: model.total,
    sites: culprits.map(c => ({ function: c.label ?? c.function, file: c.file, line: c.line, share: c.share }))
  }
}
