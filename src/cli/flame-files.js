// Turns captured profiles into the files a user opens: the flame graph page, pprof, collapsed stacks and (for live
// captures) the .cpuprofile of each process. `hotpath flame --from` and the live `hotpath flame -- <command>` both end
// here, so both write the same things the same way. It lives with the command, above both layers it composes: the
// profile layer's model, culprits and formats, and the report layer's page.
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { collapsedChunks } from '../profile/collapsed.js'
import { findCulprits } from '../profile/find-culprits.js'
import { buildHeapProfile, buildProfile } from '../profile/model.js'
import { modelToPprof } from '../profile/pprof.js'
import { flameHtmlChunks } from '../report/flame/html.js'

/**
 * @typedef {object} WrittenFile
 * @property {string} path
 * @property {'html' | 'pprof' | 'collapsed' | 'cpuprofile' | 'heapprofile'} format
 */

/**
 * @typedef {object} WriteOptions
 * @property {string} output the path every file is named from: `<output>.html`, `<output>.pb.gz`, `<output>.txt`
 * @property {string} [title] of the flame graph page
 * @property {string} [appRoot]
 * @property {boolean} [sourceMaps]
 * @property {import('../profile/sources.js').SourceCache} [sources] the scripts as they ran (a live capture's: with
 *   the code loaders compiled in memory)
 * @property {boolean} [saveProfiles] also write each captured profile as `<output>[.<label>].cpuprofile` (live
 *   captures; `--from` leaves the files it read alone)
 * @property {number} [culprits] how many culprits to return (default 10)
 */

/**
 * @param {{ type: 'cpu', profiles: import('../profile/model.js').LabelledProfile[] } | { type: 'heap', profile: import('../profile/cpuprofile.js').SamplingHeapProfile }} captured
 *   CPU profiles (one per process or thread; labels matter only when there are several), or one heap profile
 * @param {WriteOptions} opts
 * @returns {Promise<{ files: WrittenFile[], model: import('../profile/model.js').ProfileModel, culprits: import('../profile/find-culprits.js').Culprit[] }>}
 */
export async function writeProfileFiles (captured, opts) {
  const modelOpts = { appRoot: opts.appRoot, sourceMaps: opts.sourceMaps, ...(opts.sources ? { sources: opts.sources } : {}) }
  const model = captured.type === 'cpu'
    ? buildProfile(captured.profiles.length === 1 ? captured.profiles[0].profile : captured.profiles, modelOpts)
    : buildHeapProfile(captured.profile, modelOpts)
  const culprits = findCulprits(model, { limit: opts.culprits ?? 10 })
  const base = opts.output
  await mkdir(dirname(base) || '.', { recursive: true })
  // The page and the collapsed stacks are written as they are made, in pieces: either may be longer than V8's longest
  // string (a deep recursion's collapsed stacks grow with the square of its depth).
  /** @type {[WrittenFile, string | Uint8Array | Iterable<string>][]} */
  const outputs = [
    [{ path: `${base}.html`, format: 'html' }, flameHtmlChunks(model, { title: opts.title, culprits: culprits.slice(0, 5) })],
    [{ path: `${base}.pb.gz`, format: 'pprof' }, modelToPprof(model)],
    [{ path: `${base}.txt`, format: 'collapsed' }, collapsedChunks(model)]
  ]
  if (opts.saveProfiles) {
    if (captured.type === 'cpu') {
      for (const { profile, label } of captured.profiles) {
        const suffix = captured.profiles.length > 1 ? `.${slug(label)}` : ''
        outputs.push([{ path: `${base}${suffix}.cpuprofile`, format: 'cpuprofile' }, JSON.stringify(profile)])
      }
    } else {
      outputs.push([{ path: `${base}.heapprofile`, format: 'heapprofile' }, JSON.stringify(captured.profile)])
    }
  }
  await Promise.all(outputs.map(([file, content]) => writeFile(file.path, content)))
  return { files: outputs.map(([file]) => file), model, culprits }
}

/** @param {string} label */
function slug (label) {
  return label.trim().replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '') || 'thread'
}
