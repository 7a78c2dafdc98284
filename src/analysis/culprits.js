import { fileURLToPath } from 'node:url'
import { buildProfile } from '../profile/model.js'
import { findAllocationCulprits, findCulprits } from '../profile/culprits.js'
import { appRootOf, displayPath } from './paths.js'
import { readRunProfile } from './run-data.js'
import { THRESHOLDS } from './rules.js'
import { formatMs } from '../report/format.js'
import { waitCulprits } from './wait-culprits.js'

/**
 * @typedef {object} Culprit
 * @property {string} function as V8 names it (`(anonymous)` when it has none)
 * @property {string} [label] for an anonymous function, a name read from its source (`createServer callback`,
 *   `(anonymous in buildReport)`): what to show a person
 * @property {string} file as the target sees it: relative to its working directory when inside it
 * @property {number} line 1-based
 * @property {number} share 0..1 of the CPU (or of sampled allocations, for `measure: 'allocations'`) of the threads it
 *   was looked for in: the serving threads, or, for a culprit found only in busy worker threads, those threads
 * @property {'app' | 'dependency' | 'node' | 'v8'} kind
 * @property {'cpu' | 'allocations' | 'listeners' | 'waits'} measure what `share` is a share of (`waits`: of the
 *   requests' time on the server, spent waiting there)
 * @property {CulpritThread[]} [threads] where it was found, the one it takes most in first: cluster workers run the
 *   same code, so one culprit may come from several processes (absent only where the run does not tell)
 * @property {string} [reason] why it is blamed, in words
 * @property {import('./wait-culprits.js').WaitFacts} [wait] for `measure: 'waits'` found by tracing requests: what
 *   they wait on there, how often and how long, in numbers
 * @property {{ function: string, label?: string, file: string, line: number, kind: string, share: number }[]} [calls] where
 *   its time goes
 */

/**
 * @typedef {object} CulpritThread
 * @property {number} pid
 * @property {number} threadId 0 for a process's main thread, else the worker thread's id
 */

/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */

/**
 * The code to blame, most responsible first: where a leaking listener is added, then the functions that burn the CPU
 * (or, for gc and memory-leak, allocate the most) in the threads that serve the load, and those that keep the
 * serving processes' busy worker threads busy.
 * @param {import('./run-data.js').RunData} data
 * @param {import('./signals.js').Signals} signals
 * @param {import('./rules.js').Category} category
 * @param {{ limit?: number }} [opts]
 * @returns {Culprit[]}
 */
export function collectCulprits (data, signals, category, opts = {}) {
  const limit = opts.limit ?? 5
  const serving = data.threads.filter(t => t.listening.some(l => l.port === signals.port))
  const threads = serving.length > 0 ? serving : data.threads.filter(t => t.pid === data.run.listening.pid && t.threadId === 0)
  const cwd = String(threads[0]?.hello.cwd ?? data.run.cwd)
  const appRoot = threads[0] ? appRootOf(threads[0].hello, data.run.cwd) : cwd

  const served = cpuCulprits(data, threads, appRoot, cwd)
  // Garbage is judged by everything allocated; a leak by what survived.
  const allocations = category === 'gc' || category === 'memory-leak'
    ? allocationCulprits(data, threads, category === 'memory-leak' ? 'heapRetained' : 'heapAllocations', appRoot, cwd, served.model)
    : []
  // A pool's threads run the same code: one model over the busy ones, as over a cluster's workers.
  const pool = busyHelpers(data, signals)
  const pooled = pool.length > 0 ? cpuCulprits(data, pool, appRoot, cwd).culprits : []

  /** @type {Culprit[]} */
  const out = []
  const leak = signals.listeners.find(l => l.count >= THRESHOLDS.listeners)
  if (leak?.site) {
    out.push({
      function: String(leak.site.function || '(anonymous)'),
      file: displayPath(String(leak.site.file), cwd),
      line: Number(leak.site.line) || 0,
      share: listenerShare(served.culprits),
      kind: 'app',
      measure: 'listeners',
      threads: [{ pid: Number(leak.pid) || 0, threadId: Number(leak.threadId) || 0 }],
      reason: `adds a listener for '${leak.event}' to ${leak.emitter} on every request (${leak.count.toLocaleString('en-US')} by the end of the load); each emit runs them all`
    })
  }
  // A server that waits is to blame where its requests wait: the lines the wait tracer found, then the outgoing
  // HTTP calls it timed that take a real part of its time (all of them, when no request could be traced).
  if (category === 'io') {
    for (const c of waitCulprits(signals, cwd)) {
      if (out.length < 3) out.push(c)
    }
    const traced = new Set(out.map(c => `${c.file}:${c.line}`))
    for (const o of signals.outgoing) {
      if (out.length >= 3 || o.share < THRESHOLDS.waitShare || o.site === null || traced.has(`${o.site.file}:${o.site.line}`)) continue
      const anonymous = o.site.function.startsWith('(anonymous')
      out.push({
        function: anonymous ? '(anonymous)' : o.site.function,
        ...(anonymous && o.site.function !== '(anonymous)' ? { label: o.site.function } : {}),
        file: o.site.file,
        line: o.site.line,
        share: o.share,
        kind: /\bnode_modules\b/.test(o.site.file) ? 'dependency' : 'app',
        measure: 'waits',
        threads: threadsCalling(data, threads, o.target),
        reason: `waits on ${o.target}: ${o.calls.toLocaleString('en-US')} calls, ${formatMs(o.meanMs)} each on average (max ${formatMs(o.maxMs)})${o.failed > 0 ? `, ${o.failed.toLocaleString('en-US')} failed` : ''}`
      })
    }
  }
  const cpu = served.culprits
  const main = category === 'gc' || category === 'memory-leak'
    ? [...allocations, ...cpu]
    : category === 'io'
      ? [...cpu.filter(startsIo), ...cpu.filter(c => !startsIo(c))]
      : cpu
  // A healthy verdict with a saturated pool is about the pool: its hottest code first, when it is busier than the
  // event loop. Every other verdict is about the serving threads.
  const poolFirst = category === 'healthy' && signals.helpers.utilization > signals.loop.utilization
  const ordered = poolFirst ? interleave(pooled, main, limit - out.length) : interleave(main, pooled, limit - out.length)
  for (const c of ordered) {
    if (out.length >= limit) break
    if (!out.some(o => o.file === c.file && o.line === c.line && o.function === c.function)) out.push(c)
  }
  return out
}

/**
 * The CPU culprits of some threads, from one model over their profiles (shares are of their CPU together).
 * @param {import('./run-data.js').RunData} data
 * @param {ThreadRecord[]} threads
 * @param {string} appRoot
 * @param {string} cwd
 * @returns {{ culprits: Culprit[], model: import('../profile/model.js').ProfileModel | null }}
 */
function cpuCulprits (data, threads, appRoot, cwd) {
  /** @type {Map<string, ThreadRecord>} */
  const byLabel = new Map()
  const profiles = []
  for (const t of threads) {
    const profile = readRunProfile(data, t.profiles.cpu)
    if (profile === null) continue
    const label = `pid ${t.pid}${t.threadId ? ` thread ${t.threadId}` : ''}`
    byLabel.set(label, t)
    profiles.push({ profile, label })
  }
  if (profiles.length === 0) return { culprits: [], model: null }
  try {
    const model = buildProfile(profiles.length === 1 ? profiles[0].profile : profiles, { appRoot, sourceMaps: true })
    const only = profiles.length === 1 ? [threadOf(/** @type {ThreadRecord} */ (byLabel.get(profiles[0].label)))] : []
    const culprits = findCulprits(model, { limit: 15 })
      .filter(c => !isOwnFile(c.file))
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
function allocationCulprits (data, threads, heapKey, appRoot, cwd, cpuModel) {
  /** @type {Culprit[][]} */
  const lists = []
  for (const t of threads) {
    const heap = readRunProfile(data, t.profiles[heapKey] ?? t.profiles.heapAllocations)
    if (!heap) continue
    try {
      lists.push(findAllocationCulprits(heap, { appRoot, limit: 15, ...(cpuModel ? { callProfiles: [cpuModel] } : {}) })
        .filter(c => !isOwnFile(c.file))
        .map(c => toCulprit(c, 'allocations', cwd, [threadOf(t)])))
    } catch {}
  }
  return mergeLists(lists)
}

/**
 * The serving processes' other threads (worker pools) that were busy: their own code is to blame for that.
 * @param {import('./run-data.js').RunData} data
 * @param {import('./signals.js').Signals} signals
 * @returns {ThreadRecord[]}
 */
function busyHelpers (data, signals) {
  const servingPids = new Set(signals.threads.filter(t => t.serving).map(t => t.pid))
  const busy = signals.threads.filter(t => !t.serving && servingPids.has(t.pid) && t.utilization >= THRESHOLDS.busy)
  return data.threads.filter(t => busy.some(b => b.pid === t.pid && b.threadId === t.threadId))
}

/**
 * The threads whose outgoing calls include `target`.
 * @param {import('./run-data.js').RunData} data
 * @param {ThreadRecord[]} serving
 * @param {string} target
 * @returns {CulpritThread[]}
 */
function threadsCalling (data, serving, target) {
  const pids = new Set(serving.map(t => t.pid))
  return data.threads
    .filter(t => pids.has(t.pid) && t.outgoing.some(snap => snap.outgoing.some(o => String(o?.target) === target)))
    .map(threadOf)
}

/**
 * @param {ThreadRecord} t
 * @returns {CulpritThread}
 */
function threadOf (t) {
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
 * The first list's items, keeping room for a few of the second's: both kinds of culprit stay in sight.
 * @template T
 * @param {T[]} first
 * @param {T[]} second
 * @param {number} room how many will be shown
 * @param {number} [reserve] places kept for the second list
 * @returns {T[]}
 */
function interleave (first, second, room, reserve = 2) {
  const kept = Math.min(reserve, second.length)
  const head = Math.max(0, room - kept)
  return [...first.slice(0, head), ...second.slice(0, kept), ...first.slice(head), ...second.slice(kept)]
}

const OWN = fileURLToPath(new URL('../', import.meta.url))

/**
 * hotpath's own probe runs inside the target; its frames are never the user's to fix.
 * @param {string} file
 */
function isOwnFile (file) {
  const path = file.startsWith('file://') ? fileURLToPath(file) : file
  return path.startsWith(OWN)
}

const IO_MODULE = /^node:(internal\/)?(https?|_http_client|net|tls|dns|fs|dgram|child_process|internal\/fs|internal\/http)\b/

/**
 * An app function that starts outgoing I/O (an HTTP call, a socket, a file read): for a server that waits, the code
 * that makes it wait.
 * @param {Culprit} c
 */
function startsIo (c) {
  return c.kind === 'app' && (c.calls ?? []).some(k => IO_MODULE.test(k.file))
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
      : {})
  }
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

/**
 * What the listeners cost: the share of the top CPU culprit reached through an event emit, when there is one.
 * @param {Culprit[]} cpu
 */
function listenerShare (cpu) {
  const viaEmit = cpu.filter(c => c.calls?.some(k => k.function === 'emit') || c.function === 'emit')
  return viaEmit.length > 0 ? viaEmit[0].share : (cpu[0]?.share ?? 0)
}
