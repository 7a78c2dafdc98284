// The flame graphs a doctor report embeds: the CPU profile of the load window (every thread that recorded one, each
// under its own node when there are several) and, when the verdict blames allocations, the heap profile the culprits
// came from. Files are shown as the diagnosis names them (relative to the target's directory), so a culprit and its
// frame match when the report zooms from one to the other.
import { displayPath } from '../../analysis/paths.js'
import { readRunProfile, runSources } from '../../analysis/run-data.js'
import { findCulprits } from '../../profile/find-culprits.js'
import { buildHeapProfile, buildProfile } from '../../profile/model.js'
import { flameData } from '../flame/data.js'

/** @typedef {import('../flame/data.js').FlameData} FlameData */

/**
 * @typedef {object} ReportProfiles
 * @property {FlameData | null} cpu
 * @property {FlameData | null} heap allocations (gc) or what survived (memory-leak)
 * @property {'allocations' | 'retained' | null} heapKind
 * @property {{ cpu: Record<string, Zoom>, heap: Record<string, Zoom> }} zooms where a click on a culprit zooms when
 *   that is not its own frame (V8 ran it inlined into a caller), by `function|file`
 */

/** @typedef {{ function: string, file: string, line: number }} Zoom */

/**
 * @param {import('../words/diagnosis.js').Diagnosis} diagnosis
 * @param {import('../../analysis/run-data.js').RunData} data
 * @returns {ReportProfiles}
 */
export function reportProfiles (diagnosis, data) {
  const port = data.run.listening.port
  const serving = data.threads.filter(t => t.listening.some(l => l.port === port))
  const cwd = String((serving[0] ?? data.threads[0])?.hello.cwd ?? data.run.cwd)
  const opts = { appRoot: cwd, sourceMaps: true, sources: runSources(data) }

  /** @type {FlameData | null} */
  let cpu = null
  /** @type {import('../../profile/model.js').ProfileModel | null} */
  let cpuModel = null
  const cpuProfiles = data.threads
    .map(t => ({ profile: readRunProfile(data, t.profiles.cpu), label: threadName(t, data.threads) }))
    .filter(p => p.profile !== null)
  /** @type {ReportProfiles['zooms']} */
  const zooms = { cpu: {}, heap: {} }
  if (cpuProfiles.length > 0) {
    try {
      cpuModel = buildProfile(cpuProfiles.length === 1 ? cpuProfiles[0].profile : cpuProfiles, opts)
      cpu = forReport(cpuModel, cwd, zooms.cpu)
    } catch {}
  }

  /** @type {FlameData | null} */
  let heap = null
  /** @type {ReportProfiles['heapKind']} */
  let heapKind = null
  if (diagnosis.culprits.some(c => c.measure === 'allocations')) {
    const retained = diagnosis.category === 'memory-leak'
    for (const t of serving.length > 0 ? serving : data.threads) {
      const name = retained ? (t.profiles.heapRetained ?? t.profiles.heapAllocations) : t.profiles.heapAllocations
      const profile = readRunProfile(data, name)
      if (!profile) continue
      try {
        // As the diagnosis found them: the CPU profile says which app code a package ran (inlined, in the heap's).
        heap = forReport(buildHeapProfile(profile, opts), cwd, zooms.heap, cpuModel)
        heapKind = retained && t.profiles.heapRetained ? 'retained' : 'allocations'
        break
      } catch {}
    }
  }
  return { cpu, heap, heapKind, zooms }
}

/**
 * The flame graph's data with files as the diagnosis names them, and without its own culprit list (the report shows
 * the diagnosis's): only where each culprit's click must go, when not to its own frame, is kept in `zooms`.
 * @param {import('../../profile/model.js').ProfileModel} model
 * @param {string} cwd
 * @param {Record<string, Zoom>} zooms filled in
 * @param {import('../../profile/model.js').ProfileModel | null} [callModel] see findCulprits' `callProfiles`
 * @returns {FlameData}
 */
function forReport (model, cwd, zooms, callModel = null) {
  const local = (/** @type {string} */ f) => f === '' ? f : displayPath(f, cwd)
  const data = flameData(model, { culprits: findCulprits(model, { limit: 15, ...(callModel ? { callProfiles: [callModel] } : {}) }) })
  for (const c of data.culprits) {
    if (c.zoom) zooms[`${c.function}|${local(c.file)}`] = { ...c.zoom, file: local(c.zoom.file) }
  }
  return { ...data, culprits: [], files: data.files.map(local) }
}

/**
 * @param {import('../../analysis/run-data.js').ThreadRecord} t
 * @param {import('../../analysis/run-data.js').ThreadRecord[]} all
 */
function threadName (t, all) {
  const role = t.threadId !== 0
    ? 'worker thread'
    : t.hello.role === 'cluster-worker'
      ? 'cluster worker'
      : all.some(o => o.hello.role === 'cluster-worker' && o.hello.ppid === t.pid) ? 'cluster primary' : 'main'
  return `pid ${t.pid}${t.threadId ? ` thread ${t.threadId}` : ''} (${role})`
}
