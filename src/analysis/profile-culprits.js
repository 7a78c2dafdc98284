// The culprits the profiles name: the functions that burn the CPU of some threads, or allocate the most in them,
// from the CPU and heap profiles the probe recorded, as the diagnosis reports them (paths as the target sees them,
// the threads they were found in, hotpath's own probe left out).
import { isHotpathFile } from '../hotpath-files.js'
import { buildProfile } from '../profile/model.js'
import { findAllocationCulprits, findCulprits } from '../profile/find-culprits.js'
import { displayPath } from './paths.js'
import { dependenciesOf } from './wait-packages.js'
import { readRunProfile, runSources } from './run-data.js'

/** @typedef {import('./culprits.js').Culprit} Culprit */
/** @typedef {import('./culprits.js').CulpritThread} CulpritThread */
/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */

/**
 * The CPU culprits of some threads, from one model over their profiles (shares are of their CPU together).
 * @param {import('./run-data.js').RunData} data
 * @param {ThreadRecord[]} threads
 * @param {string} appRoot
 * @param {string} cwd
 * @returns {{ culprits: Culprit[], model: import('../profile/model.js').ProfileModel | null }}
 */
export function cpuCulprits (data, threads, appRoot, cwd) {
  // Built once per run and set of threads: the signals read the same model (signals-avoidable.js).
  const key = `${appRoot}\0${cwd}\0${threads.map(t => `${t.pid}:${t.threadId}`).join(',')}`
  let byKey = BUILT.get(data)
  if (!byKey) BUILT.set(data, byKey = new Map())
  const hit = byKey.get(key)
  if (hit) return hit
  const built = buildCpuCulprits(data, threads, appRoot, cwd)
  byKey.set(key, built)
  return built
}

/** @type {WeakMap<import('./run-data.js').RunData, Map<string, { culprits: Culprit[], model: import('../profile/model.js').ProfileModel | null }>>} */
const BUILT = new WeakMap()

/**
 * @param {import('./run-data.js').RunData} data
 * @param {ThreadRecord[]} threads
 * @param {string} appRoot
 * @param {string} cwd
 * @returns {{ culprits: Culprit[], model: import('../profile/model.js').ProfileModel | null }}
 */
function buildCpuCulprits (data, threads, appRoot, cwd) {
  const read = []
  for (const t of threads) {
    const profile = readRunProfile(data, t.profiles.cpu)
    if (profile !== null) read.push({ thread: t, profile })
  }
  return profileCulprits(data, read, appRoot, cwd)
}

/**
 * The CPU culprits of some threads' profiles, given (a part of a profile: an observed route's samples, route-signals.js).
 * @param {import('./run-data.js').RunData} data
 * @param {{ thread: ThreadRecord, profile: any }[]} read
 * @param {string} appRoot
 * @param {string} cwd
 * @returns {{ culprits: Culprit[], model: import('../profile/model.js').ProfileModel | null }}
 */
export function profileCulprits (data, read, appRoot, cwd) {
  /** @type {Map<string, ThreadRecord>} */
  const byLabel = new Map()
  const profiles = []
  for (const { thread: t, profile } of read) {
    const label = `pid ${t.pid}${t.threadId ? ` thread ${t.threadId}` : ''}`
    byLabel.set(label, t)
    profiles.push({ profile, label })
  }
  if (profiles.length === 0) return { culprits: [], model: null }
  try {
    const model = buildProfile(profiles.length === 1 ? profiles[0].profile : profiles, { appRoot, sourceMaps: true, sources: runSources(data) })
    const only = profiles.length === 1 ? [threadOf(/** @type {ThreadRecord} */ (byLabel.get(profiles[0].label)))] : []
    const culprits = findCulprits(model, { limit: 15 })
      .filter(c => !isHotpathFile(c.file))
      .map(c => toCulprit(c, 'cpu', cwd, c.threads ? threadsByLabel(c.threads, byLabel) : only))
    return { culprits, model }
  } catch {
    return { culprits: [], model: null }
  }
}

/**
 * The allocation culprits of each thread, merged. The CPU model of the same threads tells which app functions a
 * package runs (see findCulprits' `callProfiles`).
 * @param {import('./run-data.js').RunData} data
 * @param {ThreadRecord[]} threads
 * @param {'heapRetained' | 'heapAllocations'} heapKey
 * @param {string} appRoot
 * @param {string} cwd
 * @param {import('../profile/model.js').ProfileModel | null} cpuModel
 * @returns {Culprit[]}
 */
export function allocationCulprits (data, threads, heapKey, appRoot, cwd, cpuModel) {
  /** @type {Culprit[][]} */
  const lists = []
  for (const t of threads) {
    const heap = readRunProfile(data, t.profiles[heapKey] ?? t.profiles.heapAllocations)
    if (!heap) continue
    try {
      lists.push(findAllocationCulprits(heap, { appRoot, sources: runSources(data), limit: 15, ...(cpuModel ? { callProfiles: [cpuModel] } : {}) })
        .filter(c => !isHotpathFile(c.file))
        .map(c => toCulprit(c, 'allocations', cwd, [threadOf(t)])))
    } catch {}
  }
  return mergeLists(lists)
}

/**
 * @param {ThreadRecord} t
 * @returns {CulpritThread}
 */
export function threadOf (t) {
  return { pid: t.pid, threadId: t.threadId }
}

/**
 * @param {{ label: string }[]} found a profile culprit's threads, most first
 * @param {Map<string, ThreadRecord>} byLabel
 * @returns {CulpritThread[]}
 */
function threadsByLabel (found, byLabel) {
  /** @type {CulpritThread[]} */
  const out = []
  for (const { label } of found) {
    const t = byLabel.get(label)
    if (t) out.push(threadOf(t))
  }
  return out
}

/**
 * @param {any} c a culprit from src/profile
 * @param {Culprit['measure']} measure
 * @param {string} cwd
 * @param {CulpritThread[]} threads
 * @returns {Culprit}
 */
function toCulprit (c, measure, cwd, threads) {
  return {
    function: String(c.function || '(anonymous)'),
    ...(typeof c.label === 'string' && c.label ? { label: c.label } : {}),
    file: displayPath(String(c.file ?? ''), cwd),
    line: Number(c.line) || 0,
    share: Number(c.share) || 0,
    kind: c.kind,
    measure,
    threads,
    ...(Array.isArray(c.calls) && c.calls.length > 0
      ? { calls: c.calls.slice(0, 3).map((/** @type {any} */ k) => ({ function: String(k.function || '(anonymous)'), ...(typeof k.label === 'string' && k.label ? { label: k.label } : {}), file: displayPath(String(k.file ?? ''), cwd), line: Number(k.line) || 0, kind: k.kind, share: Number(k.share) || 0 })) }
      : {}),
    ...(c.ownAllocations ? ownAllocationFacts(c) : middlewareFacts(c))
  }
}

/**
 * An allocation culprit whose own allocations, which V8 samples without a line, are the most of what it allocates:
 * their share, the part of the culprit's they are, and where its line comes from.
 * @param {any} c a culprit from src/profile
 * @returns {{ facts: import('./culprits.js').CulpritFacts }}
 */
function ownAllocationFacts (c) {
  const { share, lineFrom } = c.ownAllocations
  return { facts: { kind: 'allocates-itself', share, of: c.share > 0 ? Math.min(1, share / c.share) : 1, lineFrom } }
}

/** Part of a culprit's time that another package's code, run inside its call, must take for it to be told. */
const MIDDLEWARE_SHARE = 0.25

/**
 * When much of a culprit's time went, through the package it called, into a package that one does not depend on —
 * code another package patched into it (a session middleware wraps `res.end`: the route's `res.json()` then runs the
 * store's touch): which package, on what way, and its share of the profile.
 * @param {any} c a culprit from src/profile
 * @returns {{ facts?: import('./culprits.js').CulpritFacts }}
 */
function middlewareFacts (c) {
  if (!Array.isArray(c.through) || !(c.share > 0)) return {}
  /** @type {Map<string, { packages: { name: string, function: string }[], share: number }>} */
  const byEntry = new Map()
  for (const t of c.through) {
    const packages = /** @type {{ name: string, function: string, file: string }[]} */ (t.packages)
    const k = packages.findIndex((p, i) => i > 0 && !packages.slice(0, i).some(q => dependenciesOf(q.file, q.name).has(p.name)))
    if (k < 1) continue
    const key = `${packages[k].name} ${packages[k].function}`
    const entry = byEntry.get(key) ?? { packages: packages.slice(k).map(p => ({ name: p.name, function: p.function })), share: 0 }
    entry.share += Number(t.share) || 0
    byEntry.set(key, entry)
  }
  const [top] = [...byEntry.values()].sort((a, b) => b.share - a.share)
  if (top === undefined || top.share < MIDDLEWARE_SHARE * c.share) return {}
  return { facts: { kind: 'runs-middleware', packages: top.packages, share: top.share, of: top.share / c.share } }
}

/**
 * Cluster workers run the same code: the same culprit in several threads is one culprit, its share averaged, found in
 * each of them.
 * @param {Culprit[][]} lists
 * @returns {Culprit[]}
 */
function mergeLists (lists) {
  if (lists.length <= 1) return lists[0] ?? []
  /** @type {Map<string, { culprit: Culprit, total: number, threads: { thread: CulpritThread, share: number }[] }>} */
  const byKey = new Map()
  for (const list of lists) {
    for (const c of list) {
      const k = `${c.function}|${c.file}|${c.line}`
      const entry = byKey.get(k) ?? { culprit: c, total: 0, threads: [] }
      entry.total += c.share
      for (const thread of c.threads ?? []) entry.threads.push({ thread, share: c.share })
      byKey.set(k, entry)
    }
  }
  return [...byKey.values()]
    .map(({ culprit, total, threads }) => ({
      ...culprit,
      share: total / lists.length,
      threads: threads.sort((a, b) => b.share - a.share).map(t => t.thread)
    }))
    .sort((a, b) => b.share - a.share)
}
