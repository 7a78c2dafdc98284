import { fileURLToPath } from 'node:url'
import { buildProfile } from '../profile/model.js'
import { findAllocationCulprits, findCulprits } from '../profile/culprits.js'
import { appRootOf, displayPath } from './paths.js'
import { readRunProfile } from './run-data.js'
import { THRESHOLDS } from './rules.js'
import { formatMs } from '../report/format.js'

/**
 * @typedef {object} Culprit
 * @property {string} function as V8 names it (`(anonymous)` when it has none)
 * @property {string} [label] for an anonymous function, a name read from its source (`createServer callback`,
 *   `(anonymous in buildReport)`): what to show a person
 * @property {string} file as the target sees it: relative to its working directory when inside it
 * @property {number} line 1-based
 * @property {number} share 0..1 of the CPU (or of sampled allocations, for `measure: 'allocations'`)
 * @property {'app' | 'dependency' | 'node' | 'v8'} kind
 * @property {'cpu' | 'allocations' | 'listeners' | 'waits'} measure what `share` is a share of (`waits`: of the
 *   requests' time on the server, spent waiting on an outgoing call made there)
 * @property {string} [reason] why it is blamed, in words
 * @property {{ function: string, label?: string, file: string, line: number, kind: string, share: number }[]} [calls] where
 *   its time goes
 */

/**
 * The code to blame, most responsible first: where a leaking listener is added, then the functions that burn the CPU
 * (or, for gc and memory-leak, allocate the most) in the threads that serve the load.
 * @param {import('./run-data.js').RunData} data
 * @param {import('./signals.js').Signals} signals
 * @param {import('./rules.js').Category} category
 * @param {{ limit?: number }} [opts]
 * @returns {Culprit[]}
 */
export function collectCulprits (data, signals, category, opts = {}) {
  const limit = opts.limit ?? 5
  const serving = data.threads.filter(t => t.listening.some(l => l.port === signals.port))
  const threads = serving.length > 0 ? serving : data.threads.filter(t => t.pid === data.run.listening.pid)
  const cwd = String(threads[0]?.hello.cwd ?? data.run.cwd)
  const appRoot = threads[0] ? appRootOf(threads[0].hello, data.run.cwd) : cwd

  // One model over every serving thread (cluster workers run the same code): shares are of their CPU together.
  const cpuProfiles = threads
    .map(t => ({ profile: readRunProfile(data, t.profiles.cpu), label: `pid ${t.pid}${t.threadId ? ` thread ${t.threadId}` : ''}` }))
    .filter(p => p.profile !== null)
  /** @type {Culprit[]} */
  let cpu = []
  if (cpuProfiles.length > 0) {
    try {
      const model = buildProfile(cpuProfiles.length === 1 ? cpuProfiles[0].profile : cpuProfiles, { appRoot, sourceMaps: true })
      cpu = findCulprits(model, { limit: 15 }).filter(c => !isOwnFile(c.file)).map(c => toCulprit(c, 'cpu', cwd))
    } catch {}
  }
  // Garbage is judged by everything allocated; a leak by what survived.
  const heapKey = category === 'memory-leak' ? 'heapRetained' : 'heapAllocations'
  /** @type {Culprit[][]} */
  const allocationLists = []
  if (category === 'gc' || category === 'memory-leak') {
    for (const t of threads) {
      const heap = readRunProfile(data, t.profiles[heapKey] ?? t.profiles.heapAllocations)
      if (!heap) continue
      try {
        allocationLists.push(findAllocationCulprits(heap, { appRoot, limit: 15 }).filter(c => !isOwnFile(c.file)).map(c => toCulprit(c, 'allocations', cwd)))
      } catch {}
    }
  }
  const allocations = mergeLists(allocationLists)

  /** @type {Culprit[]} */
  const out = []
  const leak = signals.listeners.find(l => l.count >= THRESHOLDS.listeners)
  if (leak?.site) {
    out.push({
      function: String(leak.site.function || '(anonymous)'),
      file: displayPath(String(leak.site.file), cwd),
      line: Number(leak.site.line) || 0,
      share: listenerShare(cpu),
      kind: 'app',
      measure: 'listeners',
      reason: `adds a listener for '${leak.event}' to ${leak.emitter} on every request (${leak.count.toLocaleString('en-US')} by the end of the load); each emit runs them all`
    })
  }
  // A server that waits is to blame where it makes the calls it waits on, those that take a real part of its time.
  if (category === 'io') {
    for (const o of signals.outgoing) {
      if (out.length >= 2 || o.share < THRESHOLDS.waitShare || o.site === null) continue
      const anonymous = o.site.function.startsWith('(anonymous')
      out.push({
        function: anonymous ? '(anonymous)' : o.site.function,
        ...(anonymous && o.site.function !== '(anonymous)' ? { label: o.site.function } : {}),
        file: o.site.file,
        line: o.site.line,
        share: o.share,
        kind: /\bnode_modules\b/.test(o.site.file) ? 'dependency' : 'app',
        measure: 'waits',
        reason: `waits on ${o.target}: ${o.calls.toLocaleString('en-US')} calls, ${formatMs(o.meanMs)} each on average (max ${formatMs(o.maxMs)})${o.failed > 0 ? `, ${o.failed.toLocaleString('en-US')} failed` : ''}`
      })
    }
  }
  const ordered = category === 'gc' || category === 'memory-leak'
    ? [...allocations, ...cpu]
    : category === 'io'
      ? [...cpu.filter(startsIo), ...cpu.filter(c => !startsIo(c))]
      : cpu
  for (const c of ordered) {
    if (out.length >= limit) break
    if (!out.some(o => o.file === c.file && o.line === c.line && o.function === c.function)) out.push(c)
  }
  return out
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
 * @returns {Culprit}
 */
function toCulprit (c, measure, cwd) {
  return {
    function: String(c.function || '(anonymous)'),
    ...(typeof c.label === 'string' && c.label ? { label: c.label } : {}),
    file: displayPath(String(c.file ?? ''), cwd),
    line: Number(c.line) || 0,
    share: Number(c.share) || 0,
    kind: c.kind,
    measure,
    ...(Array.isArray(c.calls) && c.calls.length > 0
      ? { calls: c.calls.slice(0, 3).map((/** @type {any} */ k) => ({ function: String(k.function || '(anonymous)'), ...(typeof k.label === 'string' && k.label ? { label: k.label } : {}), file: displayPath(String(k.file ?? ''), cwd), line: Number(k.line) || 0, kind: k.kind, share: Number(k.share) || 0 })) }
      : {})
  }
}

/**
 * Cluster workers run the same code: the same culprit in several threads is one culprit, its share averaged.
 * @param {Culprit[][]} lists
 * @returns {Culprit[]}
 */
function mergeLists (lists) {
  if (lists.length <= 1) return lists[0] ?? []
  /** @type {Map<string, Culprit & { total: number }>} */
  const byKey = new Map()
  for (const list of lists) {
    for (const c of list) {
      const k = `${c.function}|${c.file}|${c.line}`
      const entry = byKey.get(k)
      if (entry) entry.total += c.share
      else byKey.set(k, { ...c, total: c.share })
    }
  }
  return [...byKey.values()]
    .map(({ total, ...c }) => ({ ...c, share: total / lists.length }))
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
