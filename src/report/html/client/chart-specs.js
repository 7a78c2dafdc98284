// Which charts a run's view shows, and their lines: every detail of one thread, or one line per thread (per process
// for process-wide figures), then the requests and the load generator's latency. Data in, specs out: no drawing.
import { trim } from './units.js'

/**
 * @typedef {(number | null)[]} Values
 * @typedef {{ label: string, values: Values, color: string, dash?: number[], fill?: string }} SeriesSpec
 * @typedef {{ id: string, title: string, note: string, unit: string, grid: 'fine' | 'coarse', series: SeriesSpec[], threshold?: number, yMax?: number }} ChartSpec
 */

const PALETTE = ['#4e79a7', '#e15759', '#59a14f', '#f28e2b', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#ff9da7', '#7f7f7f']
const FIXED = {
  p50: '#4e79a7',
  p90: '#59a14f',
  p99: '#f28e2b',
  max: '#e15759',
  rss: '#7f7f7f',
  heapTotal: '#76b7b2',
  heapUsed: '#4e79a7',
  external: '#b07aa1',
  scavenge: '#f28e2b',
  'mark-compact': '#e15759',
  incremental: '#b07aa1',
  'weak-callbacks': '#9c755f'
}

/** The charts top to bottom. */
export const ORDER = ['delay', 'elu', 'cpu', 'memory', 'gc', 'resources', 'requests', 'latency']

/** @param {any} run */
export function defaultView (run) {
  const threads = run.series.threads
  return threads.length === 1 ? 't:' + threads[0].key : 'all'
}

/**
 * The views a run offers: all of it, each process with more than one thread, each thread.
 * @param {any} run
 * @returns {[string, string][]}
 */
export function viewOptions (run) {
  const threads = run.series.threads
  /** @type {[string, string][]} */
  const out = []
  if (threads.length > 1) out.push(['all', 'all processes and threads'])
  /** @type {number[]} */
  const pids = []
  for (const t of threads) if (!pids.includes(t.pid)) pids.push(t.pid)
  for (const pid of pids) {
    const own = threads.filter((/** @type {any} */ t) => t.pid === pid)
    if (own.length > 1 && threads.length > own.length) out.push(['p:' + pid, 'pid ' + pid + ': all ' + own.length + ' threads'])
    for (const t of own) out.push(['t:' + t.key, t.label + (t.serving ? ' · serving' : '')])
  }
  return out
}

/**
 * The charts of a view.
 * @param {any} run
 * @param {string} view 'all', 'p:<pid>' or 't:<pid>-<threadId>'
 * @returns {ChartSpec[]}
 */
export function specsFor (run, view) {
  const all = run.series.threads
  const threads = view === 'all'
    ? all
    : view.startsWith('p:')
      ? all.filter((/** @type {any} */ t) => 'p:' + t.pid === view)
      : all.filter((/** @type {any} */ t) => 't:' + t.key === view)
  const out = threads.length === 1 ? oneThreadSpecs(run, threads[0]) : threads.length > 1 ? threadsSpecs(run, threads) : []
  return [...out, ...requestSpecs(run.series, threads)]
}

/**
 * The process of a thread: its main thread, which carries the process-wide figures (CPU, rss).
 * @param {any[]} all every thread of the run
 * @param {any} t
 */
function mainOf (all, t) {
  return all.find((/** @type {any} */ o) => o.pid === t.pid && o.threadId === 0) || null
}

/** @param {any} s a run's series */
function fineNoteOf (s) {
  const step = s.fine.step
  return step < 1 ? 'per ' + trim(step) + ' s' : step === 1 ? 'per second' : 'per ' + step + ' s'
}

/**
 * Every detail of one thread.
 * @param {any} run
 * @param {any} t
 * @returns {ChartSpec[]}
 */
function oneThreadSpecs (run, t) {
  const th = run.thresholds || {}
  const fineNote = fineNoteOf(run.series)
  const m = mainOf(run.series.threads, t)
  /** @type {ChartSpec[]} */
  const out = []
  out.push({ id: 'delay', title: 'Event-loop delay', note: 'ms, highest ' + fineNote + (th.delay ? ' · blocked when p99 ≥ ' + th.delay + ' ms' : ''), unit: 'ms', grid: 'fine', threshold: th.delay, series: [line('p50', t.delay.p50), line('p99', t.delay.p99), line('max', t.delay.max)] })
  out.push({ id: 'elu', title: 'Event-loop utilisation', note: '% of the time the loop was busy' + (th.elu ? ' · busy from ' + th.elu + '%' : ''), unit: '%', grid: 'fine', threshold: th.elu, series: [{ label: 'utilisation', values: t.elu, color: PALETTE[0], fill: 'rgba(78,121,167,0.12)' }] })
  if (m && m.cpu) out.push({ id: 'cpu', title: 'CPU', note: '% of one core, whole process' + (t.threadId ? ' (all its threads)' : ''), unit: '%', grid: 'fine', series: [{ label: 'process CPU', values: m.cpu, color: PALETTE[1], fill: 'rgba(225,87,89,0.10)' }] })
  const mem = []
  if (m && m.rss) mem.push({ label: 'rss (process)', values: m.rss, color: FIXED.rss, dash: [4, 3] })
  mem.push(line('heapTotal', t.memory.heapTotal, 'heap total'), line('heapUsed', t.memory.heapUsed, 'heap used'), line('external', t.memory.external, 'external'))
  out.push({ id: 'memory', title: 'Memory', note: 'MB', unit: 'MB', grid: 'fine', series: mem })
  const kinds = Object.keys(t.gc)
  out.push({ id: 'gc', title: 'GC pauses', note: 'ms per second, by kind' + (th.gc ? ' · too much from ' + th.gc + ' ms/s' : ''), unit: 'ms/s', grid: 'coarse', threshold: th.gc, series: kinds.length > 0 ? kinds.map(k => line(k, t.gc[k])) : [{ label: 'no GC', values: t.served.map((/** @type {number | null} */ v) => v === null ? null : 0), color: FIXED.rss }] })
  const types = Object.keys(t.resources)
  if (types.length > 0) out.push({ id: 'resources', title: 'Active resources', note: 'by type (sockets, timers, file requests…)', unit: '', grid: 'coarse', series: types.map((k, i) => ({ label: k, values: t.resources[k], color: PALETTE[i % PALETTE.length] })) })
  return out
}

/**
 * One line per thread (per process for process-wide figures).
 * @param {any} run
 * @param {any[]} threads
 * @returns {ChartSpec[]}
 */
function threadsSpecs (run, threads) {
  const th = run.thresholds || {}
  const fineNote = fineNoteOf(run.series)
  const color = (/** @type {number} */ i) => PALETTE[i % PALETTE.length]
  /** @type {ChartSpec[]} */
  const out = []
  out.push({ id: 'delay', title: 'Event-loop delay', note: 'ms, highest ' + fineNote + ', per thread' + (th.delay ? ' · blocked when p99 ≥ ' + th.delay + ' ms' : ''), unit: 'ms', grid: 'fine', threshold: th.delay, series: threads.map((/** @type {any} */ t, /** @type {number} */ i) => ({ label: t.label, values: t.delay.max, color: color(i) })) })
  out.push({ id: 'elu', title: 'Event-loop utilisation', note: '% busy, per thread' + (th.elu ? ' · busy from ' + th.elu + '%' : ''), unit: '%', grid: 'fine', threshold: th.elu, series: threads.map((/** @type {any} */ t, /** @type {number} */ i) => ({ label: t.label, values: t.elu, color: color(i) })) })
  const mains = threads.filter((/** @type {any} */ t) => t.threadId === 0 && t.cpu)
  const procs = mains.length > 0 ? mains : unique(threads.map(t => mainOf(run.series.threads, t)).filter(Boolean))
  if (procs.length > 0) out.push({ id: 'cpu', title: 'CPU', note: '% of one core, per process', unit: '%', grid: 'fine', series: procs.map((/** @type {any} */ m) => ({ label: 'pid ' + m.pid, values: m.cpu, color: color(threads.indexOf(m) >= 0 ? threads.indexOf(m) : 0) })) })
  out.push({
    id: 'memory',
    title: 'Memory',
    note: 'MB: heap used per thread, rss per process (dashed)',
    unit: 'MB',
    grid: 'fine',
    series: [
      ...threads.map((/** @type {any} */ t, /** @type {number} */ i) => ({ label: 'heap ' + t.label, values: t.memory.heapUsed, color: color(i) })),
      ...procs.map((/** @type {any} */ m) => ({ label: 'rss pid ' + m.pid, values: m.rss, color: color(Math.max(0, threads.indexOf(m))), dash: [4, 3] }))
    ]
  })
  out.push({ id: 'gc', title: 'GC pauses', note: 'ms per second, per thread' + (th.gc ? ' · too much from ' + th.gc + ' ms/s' : ''), unit: 'ms/s', grid: 'coarse', threshold: th.gc, series: threads.map((/** @type {any} */ t, /** @type {number} */ i) => ({ label: t.label, values: sumSeries(Object.values(t.gc), t.served), color: color(i) })) })
  /** @type {Record<string, Values[]>} */
  const byType = {}
  for (const t of threads) for (const k of Object.keys(t.resources)) (byType[k] = byType[k] || []).push(t.resources[k])
  const types = Object.keys(byType)
  if (types.length > 0) out.push({ id: 'resources', title: 'Active resources', note: 'by type, all threads shown', unit: '', grid: 'coarse', series: types.map((k, i) => ({ label: k, values: sumSeries(byType[k], null), color: color(i) })) })
  return out
}

/**
 * Requests per second (answered, as the load generator saw them; finished, by each serving thread shown) and the
 * load generator's latency.
 * @param {any} s a run's series
 * @param {any[]} threads the threads shown
 * @returns {ChartSpec[]}
 */
function requestSpecs (s, threads) {
  /** @type {ChartSpec[]} */
  const out = []
  /** @type {SeriesSpec[]} */
  const req = []
  if (s.load) req.push({ label: 'answered (load generator)', values: s.load.rps, color: PALETTE[0], fill: 'rgba(78,121,167,0.10)' })
  threads.filter((/** @type {any} */ t) => t.serving).forEach((/** @type {any} */ t, /** @type {number} */ i) => {
    req.push({ label: 'finished by ' + t.label, values: t.served, color: PALETTE[(i + 2) % PALETTE.length], dash: s.load ? [4, 3] : undefined })
  })
  if (s.load && s.load.errors.some((/** @type {number | null} */ v) => v !== null && v > 0)) req.push({ label: 'errors', values: s.load.errors, color: FIXED.max })
  if (req.length > 0) out.push({ id: 'requests', title: 'Requests per second', note: s.load ? 'answered, as the load generator saw them; finished, as the server did' : 'finished by the server', unit: '/s', grid: 'coarse', series: req })
  if (s.load) out.push({ id: 'latency', title: 'Latency', note: 'ms per second, as the load generator measured it', unit: 'ms', grid: 'coarse', series: [line('p50', s.load.p50), line('p90', s.load.p90), line('p99', s.load.p99), line('max', s.load.max)] })
  return out
}

/**
 * @param {string} key
 * @param {Values} values
 * @param {string} [label]
 * @returns {SeriesSpec}
 */
function line (key, values, label) {
  return { label: label || key, values, color: /** @type {any} */ (FIXED)[key] || PALETTE[0] }
}

/**
 * Adds series point by point; a point is null only where every series is.
 * @param {Values[]} list
 * @param {Values | null} shape where the thread was sampled, when the list is empty
 * @returns {Values}
 */
function sumSeries (list, shape) {
  if (list.length === 0) return shape ? shape.map(v => v === null ? null : 0) : []
  return list[0].map((_, i) => {
    let sum = null
    for (const values of list) if (values[i] !== null && values[i] !== undefined) sum = (sum || 0) + /** @type {number} */ (values[i])
    return sum === null ? null : Math.round(sum * 100) / 100
  })
}

/** @param {any[]} list */
function unique (list) {
  return list.filter((v, i) => list.indexOf(v) === i)
}

/**
 * The highest value a chart draws.
 * @param {ChartSpec} spec
 */
export function maxOf (spec) {
  let m = 0
  for (const s of spec.series) for (const v of s.values) if (v !== null && v > m) m = v
  return m
}
