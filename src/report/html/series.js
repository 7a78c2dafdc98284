// The time series a report charts, from a recorded run: each thread's 10 ms samples resampled onto one grid of short
// buckets (event-loop delay, utilisation, CPU, memory) and one of seconds (GC, requests served, active resources, and
// the load generator's per-second bins), both aligned on the start of the load so every chart shares its time axis.
import { mergeEncoded } from '../../load/histogram.js'
import { GC_KINDS } from '../../sampling/gc.js'

/** @typedef {import('../../analysis/run-data.js').RunData} RunData */
/** @typedef {import('../../analysis/run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {ThreadRecord['samples'][number]} Sample */
/** @typedef {(number | null)[]} Values null where the thread was not sampled */

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

/**
 * @typedef {object} RunSeries
 * @property {number} t0 epoch ms of the load's start: x = 0
 * @property {[number, number]} window the load window, in seconds from t0
 * @property {[number, number]} range what the run covers, in seconds from t0: every chart's x range
 * @property {{ step: number, x: number[] }} fine seconds per bucket, and each bucket's middle
 * @property {{ step: number, x: number[] }} coarse
 * @property {ThreadSeries[]} threads
 * @property {{ rps: Values, errors: Values, p50: Values, p90: Values, p99: Values, max: Values } | null} load the load
 *   generator's per-second figures on the grid of seconds (latency in ms); null without a built-in load
 */

/** ms: samples this far from the load window are not believed. */
const LONGEST = 6 * 3600 * 1000
/** Longest chart, in buckets: longer runs get wider buckets. */
const MAX_BUCKETS = 600
/** Resource types charted one by one; the rest are added up as 'other'. */
const MAX_RESOURCE_TYPES = 6

/**
 * @param {RunData} data
 * @returns {RunSeries}
 */
export function runSeries (data) {
  const t0 = data.run.loadWindow.start
  const end = Math.max(t0, num(data.run.loadWindow.end))
  // A saved run is read as found: samples or bins with impossible times (a damaged file) are left out of the charts.
  const plausible = (/** @type {number} */ time, /** @type {number} */ ms) =>
    Number.isFinite(time) && time > t0 - LONGEST && time < end + LONGEST && ms >= 0 && ms < LONGEST
  let first = t0
  let last = end
  const threadSamples = data.threads.map(t => t.samples.filter(s => plausible(s.time, s.interval)))
  for (const samples of threadSamples) {
    for (const s of samples) {
      if (s.time - s.interval < first) first = s.time - s.interval
      if (s.time > last) last = s.time
    }
  }
  const rawBins = data.run.load?.hotpath?.shard?.series
  const bins = (Array.isArray(rawBins) ? rawBins : []).filter(b => b && plausible(b.start, b.duration) && b.duration > 0)
  for (const b of bins) last = Math.max(last, b.start + b.duration)
  const span = last - first
  const fineMs = Math.max(100, Math.ceil(span / MAX_BUCKETS / 100) * 100)
  const coarseMs = Math.max(1000, Math.ceil(span / MAX_BUCKETS / 1000) * 1000)
  const fine = grid(t0, first, last, fineMs)
  const coarse = grid(t0, first, last, coarseMs)
  const port = data.run.listening.port
  const roles = roleMap(data.threads)
  const threads = data.threads
    .map((t, i) => ({ ...t, samples: threadSamples[i] }))
    .filter(t => t.samples.length > 0)
    .map(t => threadSeries(t, fine, coarse, port, roles.get(`${t.pid}-${t.threadId}`) ?? 'main'))
  return {
    t0,
    window: [0, round((end - t0) / 1000, 3)],
    range: [round((first - t0) / 1000, 3), round((last - t0) / 1000, 3)],
    fine: { step: fineMs / 1000, x: fine.x },
    coarse: { step: coarseMs / 1000, x: coarse.x },
    threads,
    load: data.run.load ? loadSeries(bins, coarse) : null
  }
}

/**
 * The series of a run known only by its load result (`hotpath load --json`, or a doctor result whose run directory
 * is gone): the load generator's per-second figures, no threads.
 * @param {import('../../load/result.js').LoadResult | null} load
 * @returns {RunSeries}
 */
export function loadOnlySeries (load) {
  const shard = load?.hotpath?.shard
  const raw = Array.isArray(shard?.series) ? shard.series : []
  const t0 = Number.isFinite(shard?.start) ? /** @type {number} */ (shard?.start) : (Number.isFinite(raw[0]?.start) ? raw[0].start : 0)
  const end = Number.isFinite(shard?.finish) && /** @type {number} */ (shard?.finish) >= t0 && /** @type {number} */ (shard?.finish) < t0 + LONGEST ? /** @type {number} */ (shard?.finish) : t0
  const bins = raw.filter(b => b && Number.isFinite(b.start) && b.start >= t0 - LONGEST && b.start < end + LONGEST && b.duration > 0 && b.duration < LONGEST)
  const last = bins.reduce((a, b) => Math.max(a, b.start + b.duration), end)
  const first = bins.reduce((a, b) => Math.min(a, b.start), t0)
  const coarse = grid(t0, first, last, Math.max(1000, Math.ceil((last - first) / MAX_BUCKETS / 1000) * 1000))
  return {
    t0,
    window: [0, round((end - t0) / 1000, 3)],
    range: [round((first - t0) / 1000, 3), round((last - t0) / 1000, 3)],
    fine: { step: 0.1, x: [] },
    coarse: { step: coarse.step / 1000, x: coarse.x },
    threads: [],
    load: load ? loadSeries(bins, coarse) : null
  }
}

/**
 * @typedef {object} Grid
 * @property {number} origin epoch ms where bucket 0 starts (a whole number of buckets before t0)
 * @property {number} step ms
 * @property {number} n buckets
 * @property {number[]} x each bucket's middle, seconds from t0
 */

/**
 * @param {number} t0
 * @param {number} first
 * @param {number} last
 * @param {number} step
 * @returns {Grid}
 */
function grid (t0, first, last, step) {
  const before = Math.max(0, Math.ceil((t0 - first) / step))
  const origin = t0 - before * step
  const n = Math.max(1, Math.ceil((last - origin) / step))
  const x = []
  // Each bucket is drawn at the middle of the part of it the run covers, so the first and last (partial) buckets
  // stay inside the run's time range and every chart spans the same range.
  for (let i = 0; i < n; i++) {
    const a = Math.max(first, origin + i * step)
    const b = Math.min(last, origin + (i + 1) * step)
    x.push(round(((a + b) / 2 - t0) / 1000, 3))
  }
  return { origin, step, n, x }
}

/**
 * Spreads each sample's interval over the buckets it overlaps and calls `add(bucket, sample, overlapMs)`.
 * @param {Sample[]} samples
 * @param {Grid} g
 * @param {(bucket: number, sample: Sample, overlap: number) => void} add
 */
function overlaps (samples, g, add) {
  for (const s of samples) {
    const from = s.time - Math.max(0, s.interval)
    const to = s.time
    const i0 = Math.max(0, Math.floor((from - g.origin) / g.step))
    const i1 = Math.min(g.n - 1, Math.floor((to - g.origin) / g.step))
    for (let i = i0; i <= i1; i++) {
      const a = Math.max(from, g.origin + i * g.step)
      const b = Math.min(to, g.origin + (i + 1) * g.step)
      // a sample of zero length (the first one) still counts where it falls
      if (b > a || (s.interval <= 0 && i0 === i1)) add(i, s, Math.max(0, b - a))
    }
  }
}

/**
 * @param {ThreadRecord} t
 * @param {Grid} fine
 * @param {Grid} coarse
 * @param {number} port
 * @param {string} role
 * @returns {ThreadSeries}
 */
function threadSeries (t, fine, coarse, port, role) {
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
    served: perSecond(served, 1),
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
 * The load generator's per-second bins, placed on the grid of seconds.
 * @param {import('../../load/recorder.js').Bin[]} bins
 * @param {Grid} g
 * @returns {NonNullable<RunSeries['load']>}
 */
function loadSeries (bins, g) {
  const empty = () => /** @type {Values} */ (new Array(g.n).fill(null))
  const out = { rps: empty(), errors: empty(), p50: empty(), p90: empty(), p99: empty(), max: empty() }
  /** @type {Map<number, import('../../load/recorder.js').Bin[]>} */
  const byBucket = new Map()
  for (const bin of bins) {
    if (!(bin.duration > 0)) continue
    const i = Math.floor((bin.start + bin.duration / 2 - g.origin) / g.step)
    if (i < 0 || i >= g.n) continue
    const list = byBucket.get(i)
    if (list) list.push(bin)
    else byBucket.set(i, [bin])
  }
  for (const [i, list] of byBucket) {
    const ms = list.reduce((a, b) => a + b.duration, 0)
    const requests = list.reduce((a, b) => a + num(b.requests), 0)
    out.rps[i] = round((requests * 1000) / ms, 1)
    out.errors[i] = round((list.reduce((a, b) => a + num(b.errors), 0) * 1000) / ms, 1)
    if (requests === 0) continue
    try {
      const h = mergeEncoded(list.filter(b => num(b.requests) > 0 && typeof b.histogram === 'string').map(b => b.histogram))
      out.p50[i] = round(h.getValueAtPercentile(50) / 1000, 3)
      out.p90[i] = round(h.getValueAtPercentile(90) / 1000, 3)
      out.p99[i] = round(h.getValueAtPercentile(99) / 1000, 3)
      out.max[i] = round(h.maxValue / 1000, 3)
      h.destroy()
    } catch {}
  }
  return out
}

/**
 * @param {ThreadRecord[]} threads
 * @returns {Map<string, string>}
 */
function roleMap (threads) {
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

/**
 * A finite number, or 0.
 * @param {unknown} v
 */
function num (v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0
}

/** @param {number[]} values */
function median (values) {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[(sorted.length - 1) >> 1]
}

/**
 * @param {number} v
 * @param {number} digits
 */
function round (v, digits) {
  const f = 10 ** digits
  return Math.round(v * f) / f
}
