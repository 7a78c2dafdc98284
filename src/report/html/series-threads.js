// One thread's series: its 10 ms samples resampled onto the grid of short buckets (event-loop delay, utilisation,
// CPU, memory) and the grid of seconds (GC, requests served, active resources); and what each thread is called.
import { GC_KINDS } from '../../sampling/gc.js'
import { median, num, overlaps, round } from './series-grid.js'

/** @typedef {import('../../analysis/run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {import('./series-grid.js').Sample} Sample */
/** @typedef {import('./series-grid.js').Values} Values */
/** @typedef {import('./series-grid.js').Grid} Grid */

/**
 * @typedef {object} ThreadSeries
 * @property {string} key `<pid>-<threadId>`
 * @property {number} pid
 * @property {number} threadId
 * @property {string} role main, cluster-primary, cluster-worker or worker-thread
 * @property {boolean} serving listens on the loaded port
 * @property {string} label what a person reads
 * @property {{ p50: Values, p99: Values, max: Values }} delay ms, on the fine grid
 * @property {Values} elu percent, fine grid
 * @property {Values | null} cpu percent of one core, process-wide (main threads only), fine grid
 * @property {Values | null} rss MB, process-wide (main threads only), fine grid
 * @property {{ heapUsed: Values, heapTotal: Values, external: Values }} memory MB, fine grid
 * @property {Record<string, Values>} gc ms of pauses per second by kind, on the grid of seconds
 * @property {Values} served requests finished per second on the loaded port, grid of seconds
 * @property {Record<string, Values>} resources active resources by type, grid of seconds
 */

/** Resource types charted one by one; the rest are added up as 'other'. */
const MAX_RESOURCE_TYPES = 6

/**
 * @param {ThreadRecord} t
 * @param {Grid} fine
 * @param {Grid} coarse
 * @param {number} port
 * @param {string} role
 * @returns {ThreadSeries}
 */
export function threadSeries (t, fine, coarse, port, role) {
  const main = t.threadId === 0
  const n = fine.n
  const covered = new Float64Array(n)
  const seen = new Uint8Array(n)
  const eluSum = new Float64Array(n)
  const cpuSum = new Float64Array(n)
  /** @type {number[][]} */
  const p50s = Array.from({ length: n }, () => [])
  const p99 = new Float64Array(n)
  const max = new Float64Array(n)
  /** @type {(Sample | null)[]} the latest sample reaching into each bucket: its gauges stand for the bucket */
  const latest = new Array(n).fill(null)
  overlaps(t.samples, fine, (i, s, ms) => {
    seen[i] = 1
    covered[i] += ms
    eluSum[i] += num(s.utilization) * ms
    if (s.interval > 0) cpuSum[i] += (num(s.cpu?.user) + num(s.cpu?.system)) * (ms / s.interval)
    p50s[i].push(num(s.delay?.p50))
    p99[i] = Math.max(p99[i], num(s.delay?.p99))
    max[i] = Math.max(max[i], num(s.delay?.max))
    if (latest[i] === null || s.time >= /** @type {Sample} */ (latest[i]).time) latest[i] = s
  })
  const fineValues = (/** @type {(i: number) => number} */ f, /** @type {number} */ digits) =>
    Array.from({ length: n }, (_, i) => seen[i] ? round(f(i), digits) : null)
  const mb = (/** @type {(s: Sample) => number} */ pick) =>
    fineValues(i => pick(/** @type {Sample} */ (latest[i])) / 1e6, 3)

  const cn = coarse.n
  const cCovered = new Float64Array(cn)
  const cSeen = new Uint8Array(cn)
  /** @type {Record<string, Float64Array>} */
  const gc = Object.fromEntries(GC_KINDS.map(k => [k, new Float64Array(cn)]))
  const served = new Float64Array(cn)
  /** @type {(Record<string, number> | null)[]} */
  const resources = new Array(cn).fill(null)
  overlaps(t.samples, coarse, (i, s, ms) => {
    cSeen[i] = 1
    cCovered[i] += ms
    const share = s.interval > 0 ? ms / s.interval : 1
    for (const k of GC_KINDS) gc[k][i] += num(s.gc?.byKind?.[k]?.duration) * share
    if (Array.isArray(s.requests)) for (const r of s.requests) if (r?.port === port) served[i] += num(r.finished) * share
    // resources are counted about once a second, at the end of a sample: they belong where the sample ends
    if (s.resources && typeof s.resources === 'object' && s.time <= coarse.origin + (i + 1) * coarse.step && s.time > coarse.origin + i * coarse.step) resources[i] = s.resources
  })
  // A rate over a sliver of a second (where the thread starts or stops) is one event blown up: left out.
  const perSecond = (/** @type {Float64Array} */ sums, /** @type {number} */ digits, /** @type {number} */ cap = Infinity) =>
    Array.from(sums, (v, i) => cSeen[i] && cCovered[i] >= coarse.step / 4 ? round(Math.min(cap, (v * 1000) / cCovered[i]), digits) : null)

  return {
    key: `${t.pid}-${t.threadId}`,
    pid: t.pid,
    threadId: t.threadId,
    role,
    serving: t.listening.some(l => l.port === port),
    label: threadLabel(t, role),
    delay: {
      p50: fineValues(i => median(p50s[i]), 3),
      p99: fineValues(i => p99[i], 3),
      max: fineValues(i => max[i], 3)
    },
    elu: fineValues(i => covered[i] > 0 ? (eluSum[i] / covered[i]) * 100 : 0, 1),
    cpu: main ? fineValues(i => covered[i] > 0 ? (cpuSum[i] / covered[i]) * 100 : 0, 1) : null,
    rss: main ? mb(s => num(s.memory?.rss)) : null,
    memory: {
      heapUsed: mb(s => num(s.memory?.heapUsed)),
      heapTotal: mb(s => num(s.memory?.heapTotal)),
      external: mb(s => num(s.memory?.external))
    },
    // A GC is counted in the sample it ends in, so a pause that began earlier can make a short stretch look like more
    // than a second of GC per second: no second holds more than a second.
    gc: Object.fromEntries(GC_KINDS.filter(k => gc[k].some(v => v > 0)).map(k => [k, perSecond(gc[k], 2, 1000)])),
    // A count of the requests in flight may take back guesses of the samples before it (request-tracker.js): no rate
    // below zero is drawn.
    served: perSecond(served.map(v => Math.max(0, v)), 1),
    resources: resourceSeries(resources, cSeen)
  }
}

/**
 * Active resources by type, second by second, carrying the last count forward across seconds without a count; the
 * types with the most resources each get a series, the rest are added up.
 * @param {(Record<string, number> | null)[]} counts
 * @param {Uint8Array} seen
 * @returns {Record<string, Values>}
 */
function resourceSeries (counts, seen) {
  /** @type {Map<string, number>} */
  const peak = new Map()
  for (const c of counts) {
    if (c) for (const [type, v] of Object.entries(c)) peak.set(type, Math.max(peak.get(type) ?? 0, num(v)))
  }
  const types = [...peak.entries()].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).map(([type]) => type)
  const shown = types.length > MAX_RESOURCE_TYPES + 1 ? types.slice(0, MAX_RESOURCE_TYPES) : types
  const rest = types.filter(type => !shown.includes(type))
  /** @type {Record<string, Values>} */
  const out = {}
  for (const type of [...shown, ...(rest.length > 0 ? ['other'] : [])]) {
    /** @type {number | null} */
    let carry = null
    out[type] = counts.map((c, i) => {
      if (c) carry = type === 'other' ? rest.reduce((a, r) => a + num(c[r]), 0) : num(c[type])
      return seen[i] ? carry : null
    })
  }
  return out
}

/**
 * @param {ThreadRecord[]} threads
 * @returns {Map<string, string>}
 */
export function roleMap (threads) {
  /** @type {Map<string, string>} */
  const roles = new Map()
  for (const t of threads) {
    let role = String(t.hello.role ?? (t.threadId === 0 ? 'main' : 'worker-thread'))
    if (role === 'main' && threads.some(o => o.hello.role === 'cluster-worker' && o.hello.ppid === t.pid)) role = 'cluster-primary'
    roles.set(`${t.pid}-${t.threadId}`, role)
  }
  return roles
}

const ROLE_LABEL = /** @type {Record<string, string>} */ ({
  main: 'main thread',
  'cluster-primary': 'cluster primary',
  'cluster-worker': 'cluster worker',
  'worker-thread': 'worker thread'
})

/**
 * @param {ThreadRecord} t
 * @param {string} role
 */
function threadLabel (t, role) {
  return `pid ${t.pid}${t.threadId ? ` thread ${t.threadId}` : ''} (${ROLE_LABEL[role] ?? role})`
}
