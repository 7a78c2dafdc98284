// The flame graphs a doctor report embeds: the CPU profile of the load window (every thread that recorded one, each
// under its own node when there are several) and, when the verdict blames allocations, the heap profile the culprits
// came from. Files are shown as the diagnosis names them (relative to the target's directory), so a culprit and its
// frame match when the report zooms from one to the other.
import { displayPath } from '../../analysis/paths.js'
import { readRunProfile } from '../../analysis/run-data.js'
import { buildHeapProfile, buildProfile } from '../../profile/model.js'
import { flameData } from '../flame/data.js'

/** @typedef {import('../flame/data.js').FlameData} FlameData */

/**
 * @typedef {object} ReportProfiles
 * @property {FlameData | null} cpu
 * @property {FlameData | null} heap allocations (gc) or what survived (memory-leak)
 * @property {'allocations' | 'retained' | null} heapKind
 */

/**
 * @param {import('../../analysis/diagnose.js').Diagnosis} diagnosis
 * @param {import('../../analysis/run-data.js').RunData} data
 * @returns {ReportProfiles}
 */
export function reportProfiles (diagnosis, data) {
  const port = data.run.listening.port
  const serving = data.threads.filter(t => t.listening.some(l => l.port === port))
  const cwd = String((serving[0] ?? data.threads[0])?.hello.cwd ?? data.run.cwd)
  const opts = { appRoot: cwd, sourceMaps: true }

  /** @type {FlameData | null} */
  let cpu = null
  const cpuProfiles = data.threads
    .map(t => ({ profile: readRunProfile(data, t.profiles.cpu), label: threadName(t, data.threads) }))
    .filter(p => p.profile !== null)
  if (cpuProfiles.length > 0) {
    try {
      cpu = localFiles(flameData(buildProfile(cpuProfiles.length === 1 ? cpuProfiles[0].profile : cpuProfiles, opts), { culprits: [] }), cwd)
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
        heap = localFiles(flameData(buildHeapProfile(profile, opts), { culprits: [] }), cwd)
        heapKind = retained && t.profiles.heapRetained ? 'retained' : 'allocations'
        break
      } catch {}
    }
  }
  return { cpu, heap, heapKind }
}

/**
 * @param {FlameData} data
 * @param {string} cwd
 * @returns {FlameData}
 */
function localFiles (data, cwd) {
  return { ...data, files: data.files.map(f => f === '' ? f : displayPath(f, cwd)) }
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
