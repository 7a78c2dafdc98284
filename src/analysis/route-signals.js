// An observed window's figures by route (`--observe`): with no load of hotpath's, the traffic is whatever the server
// got, spread over its routes, and the question is which route has which problem. Each route's requests and time on the
// server come from the probe's timing of every request; its waits from its traced requests (the wait tracer's figures
// over them alone); its CPU from the CPU profile's samples taken while one of its requests ran — the samples are
// stamped, the requests too, and a sample goes to the route whose request began last among those in flight (a handler's
// synchronous work follows its request's start; the work of requests that resumed after a wait is charged alike to
// whichever began last, a blur that is small beside a handler that computes).
import { isAbsolute, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { appRootOf } from './paths.js'
import { profileCulprits } from './profile-culprits.js'
import { readRunProfile } from './run-data.js'
import { THRESHOLDS } from './thresholds.js'
import { computeWaits } from './waits.js'
import { waitCulprits } from './wait-culprits.js'

/** Requests of a route below which its figures are a thin sample… */
const THIN = 10
/** …and from which they are a good one. */
const GOOD = 50
/** CPU samples of a route below which its CPU culprits are not told. */
const MIN_SAMPLES = 5
/** A route's CPU culprits are told when its requests ran on the CPU at least this part of their time on the server. */
const CPU_PART = 0.25
/** The profile's entries for a thread with nothing to run. */
const IDLE = new Set(['(idle)', '(program)'])
/** Culprits told per route, of each kind. */
const PER_ROUTE = 2

/**
 * @typedef {object} RouteCulprit a culprit of one route: a function that burns its CPU, a line where its requests wait,
 *   or one of the diagnosis's memory culprits that its requests run
 * @property {string} function
 * @property {string} [label]
 * @property {string} file
 * @property {number} line
 * @property {number} share of the route's CPU (`cpu`), of its traced requests' time (`waits`), or the diagnosis's own
 *   share (`allocations`, `retained`)
 * @property {'app' | 'dependency' | 'node' | 'v8'} kind
 * @property {'cpu' | 'waits' | 'allocations' | 'retained'} measure
 * @property {string} [waitsOn] for `waits`: what the requests wait on there
 */

/**
 * @typedef {object} RouteSignal
 * @property {string} method
 * @property {string} route
 * @property {number} requests finished in the window
 * @property {number} rate requests a second
 * @property {number} meanMs mean time on the server
 * @property {number} maxMs
 * @property {number} traced requests of the route traced for waits
 * @property {number | null} waited share of the traced requests' time spent waiting at a known line (null: none traced)
 * @property {number} cpuMs CPU time charged to the route's requests (from the CPU profile), per request
 * @property {'thin' | 'fair' | 'good'} sample what its request count supports: `thin` under 10 requests, `good` from 50
 * @property {RouteCulprit[]} culprits
 */

/**
 * The window's routes, busiest first; null when no probe timed routes (a run with hotpath's own load).
 * @param {import('./run-data.js').RunData} data
 * @param {import('./signals.js').Signals} signals
 * @param {import('./culprits.js').Culprit[]} culprits the diagnosis's
 * @returns {RouteSignal[] | null}
 */
export function computeRoutes (data, signals, culprits) {
  const serving = data.threads.filter(t => t.routes !== null && t.listening.some(l => l.port === signals.port))
  const threads = serving.length > 0 ? serving : data.threads.filter(t => t.routes !== null)
  if (threads.length === 0) return null
  const seconds = Math.max(0.001, signals.window.seconds)
  const cwd = String(threads[0].hello.cwd ?? data.run.cwd)
  const appRoot = appRootOf(threads[0].hello, data.run.cwd)
  /** @type {Map<string, { method: string, route: string, requests: number, totalMs: number, maxMs: number }>} */
  const byKey = new Map()
  for (const t of threads) {
    for (const r of /** @type {import('./run-data.js').RouteRecord} */ (t.routes).routes) {
      const key = `${r.method} ${r.route}`
      const acc = byKey.get(key) ?? { method: r.method, route: r.route, requests: 0, totalMs: 0, maxMs: 0 }
      acc.requests += r.requests
      acc.totalMs += r.totalMs
      acc.maxMs = Math.max(acc.maxMs, r.maxMs)
      byKey.set(key, acc)
    }
  }
  const { byRoute: cpu, starts } = routeProfiles(data, threads)
  const { start, end } = signals.window
  /** @type {RouteSignal[]} */
  const out = []
  for (const [key, r] of byKey) {
    const waits = computeWaits(threads.map(t => ({ ...t, waits: { ...t.waits, traces: t.waits.traces.filter(x => x.route === key) } })), start, end, cwd)
    const meanMs = r.requests > 0 ? r.totalMs / r.requests : 0
    const parts = cpu.get(key) ?? { read: [], samples: 0, ms: 0, functions: new Set() }
    const cpuMs = r.requests > 0 ? parts.ms / r.requests : 0
    /** @type {RouteCulprit[]} */
    const found = []
    if (parts.samples >= MIN_SAMPLES && cpuMs >= CPU_PART * meanMs) {
      for (const c of profileCulprits(data, parts.read, appRoot, cwd).culprits.filter(c => c.kind === 'app' || c.kind === 'dependency').slice(0, PER_ROUTE)) {
        found.push({ function: c.function, ...(c.label ? { label: c.label } : {}), file: c.file, line: c.line, share: c.share, kind: c.kind, measure: 'cpu' })
      }
    }
    if (waits.traced > 0) {
      const counted = /** @type {import('./signals.js').Signals} */ ({ ...signals, waits })
      for (const c of waitCulprits(counted, cwd).filter(c => c.measure === 'waits' && c.share >= THRESHOLDS.waitShare).slice(0, PER_ROUTE)) {
        found.push({ function: c.function, ...(c.label ? { label: c.label } : {}), file: c.file, line: c.line, share: c.share, kind: c.kind, measure: 'waits', ...(c.wait ? { waitsOn: c.wait.resource.name } : {}) })
      }
    }
    // A memory culprit belongs to the routes whose requests ran it (its function on their CPU samples' stacks): the
    // function that holds its line is the one of its name in its file that begins last before it.
    for (const c of culprits) {
      if (c.measure !== 'allocations' && c.measure !== 'retained') continue
      const file = isAbsolute(c.file) ? c.file : resolve(cwd, c.file)
      const begins = starts.get(`${c.function}|${file}`) ?? []
      const start = Math.max(...begins.filter(l => l <= c.line))
      if (!parts.functions.has(`${c.function}|${file}|${start}`)) continue
      found.push({ function: c.function, ...(c.label ? { label: c.label } : {}), file: c.file, line: c.line, share: c.share, kind: c.kind, measure: c.measure })
    }
    out.push({
      method: r.method,
      route: r.route,
      requests: r.requests,
      rate: r.requests / seconds,
      meanMs,
      maxMs: r.maxMs,
      traced: waits.traced,
      waited: waits.traced > 0 ? waits.attributed : null,
      cpuMs,
      sample: r.requests < THIN ? 'thin' : r.requests < GOOD ? 'fair' : 'good',
      culprits: found
    })
  }
  return out.sort((a, b) => b.requests * b.meanMs - a.requests * a.meanMs)
}

/**
 * @typedef {object} RouteProfile the CPU samples charged to one route
 * @property {{ thread: import('./run-data.js').ThreadRecord, profile: any }[]} read each thread's profile, cut to them
 * @property {number} samples
 * @property {number} ms
 * @property {Set<string>} functions `function|absolute file|line it begins at` of every frame on their stacks
 */

/**
 * Each route's part of the threads' CPU profiles, and the lines every function of the profiles begins at (1-based), by
 * `function|absolute file`.
 * @param {import('./run-data.js').RunData} data
 * @param {import('./run-data.js').ThreadRecord[]} threads
 * @returns {{ byRoute: Map<string, RouteProfile>, starts: Map<string, number[]> }}
 */
function routeProfiles (data, threads) {
  /** @type {Map<string, RouteProfile>} */
  const out = new Map()
  /** @type {Map<string, number[]>} */
  const starts = new Map()
  for (const t of threads) {
    const rec = /** @type {import('./run-data.js').RouteRecord} */ (t.routes)
    const profile = t.profiles.cpu ? readRunProfile(data, t.profiles.cpu) : null
    if (profile === null || !Array.isArray(profile.samples) || !Array.isArray(profile.timeDeltas)) continue
    const keys = rec.routes.map(r => `${r.method} ${r.route}`)
    // Requests on the profile's clock (µs), by start.
    /** @type {{ from: number, to: number, key: string }[]} */
    const requests = []
    for (let i = 0; i + 2 < rec.intervals.length; i += 3) {
      const key = keys[rec.intervals[i + 2]]
      if (key !== undefined) requests.push({ from: rec.origin + rec.intervals[i] * 1000, to: rec.origin + rec.intervals[i + 1] * 1000, key })
    }
    requests.sort((a, b) => a.from - b.from)
    const n = profile.samples.length
    const times = new Array(n)
    let at = profile.startTime
    for (let i = 0; i < n; i++) {
      at += profile.timeDeltas[i]
      times[i] = at
    }
    /** @type {Map<string, number[]>} sample indexes per route */
    const picked = new Map()
    /** @type {typeof requests} */
    let active = []
    let next = 0
    for (let i = 0; i < n; i++) {
      const time = times[i]
      while (next < requests.length && requests[next].from <= time) active.push(requests[next++])
      active = active.filter(r => r.to >= time)
      if (active.length === 0) continue
      // The request that began last among those in flight: its handler's synchronous work follows its start.
      const owner = active[active.length - 1].key
      const list = picked.get(owner) ?? []
      list.push(i)
      picked.set(owner, list)
    }
    const parents = parentsOf(profile)
    const byId = new Map(profile.nodes.map((/** @type {any} */ node) => [node.id, node]))
    for (const node of profile.nodes) {
      const frame = node.callFrame
      if (!frame?.url) continue
      const key = `${frame.functionName || '(anonymous)'}|${pathOf(frame.url)}`
      const list = starts.get(key) ?? []
      if (!list.includes(frame.lineNumber + 1)) list.push(frame.lineNumber + 1)
      starts.set(key, list)
    }
    for (const [key, all] of picked) {
      // A request that waits is in flight while the thread idles: those samples are nobody's CPU.
      const indexes = all.filter(i => !IDLE.has(byId.get(profile.samples[i])?.callFrame?.functionName))
      const entry = out.get(key) ?? { read: [], samples: 0, ms: 0, functions: new Set() }
      if (indexes.length === 0) continue
      const samples = []
      const deltas = []
      let ms = 0
      for (const i of indexes) {
        const dt = i + 1 < n ? Math.max(0, times[i + 1] - times[i]) : 0
        // Each sample stands for the time until the next: laid end to end, the route's samples keep their lengths.
        deltas.push(samples.length === 0 ? 0 : dtOf(times, indexes, samples.length - 1, n))
        samples.push(profile.samples[i])
        ms += dt / 1000
        for (let id = profile.samples[i]; id !== undefined; id = parents.get(id)) {
          const frame = byId.get(id)?.callFrame
          if (frame?.url) entry.functions.add(`${frame.functionName || '(anonymous)'}|${pathOf(frame.url)}|${frame.lineNumber + 1}`)
        }
      }
      const span = deltas.reduce((a, b) => a + b, 0) + (indexes.length > 0 ? dtOf(times, indexes, indexes.length - 1, n) : 0)
      entry.read.push({ thread: t, profile: { ...profile, samples, timeDeltas: deltas, endTime: profile.startTime + span } })
      entry.samples += samples.length
      entry.ms += ms
      out.set(key, entry)
    }
  }
  return { byRoute: out, starts }
}

/**
 * The time the k-th picked sample stands for: until the sample after it in the whole profile.
 * @param {number[]} times
 * @param {number[]} indexes
 * @param {number} k
 * @param {number} n
 */
function dtOf (times, indexes, k, n) {
  const i = indexes[k]
  return i + 1 < n ? Math.max(0, times[i + 1] - times[i]) : 0
}

/**
 * @param {any} profile
 * @returns {Map<number, number>} each node's parent
 */
function parentsOf (profile) {
  /** @type {Map<number, number>} */
  const parents = new Map()
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parents.set(child, node.id)
  }
  return parents
}

/** @param {string} url */
function pathOf (url) {
  try {
    return url.startsWith('file://') ? fileURLToPath(url) : url
  } catch {
    return url
  }
}
