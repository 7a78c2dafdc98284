// The time series a report charts, from a recorded run: each thread's 10 ms samples resampled onto one grid of short
// buckets (event-loop delay, utilisation, CPU, memory) and one of seconds (GC, requests served, active resources, and
// the load generator's per-second bins), both aligned on the start of the load so every chart shares its time axis.
import { grid, num, round } from './series-grid.js'
import { loadSeries } from './series-load.js'
import { roleMap, threadSeries } from './series-threads.js'

/** @typedef {import('../../analysis/run-data.js').RunData} RunData */
/** @typedef {import('./series-grid.js').Values} Values */
/** @typedef {import('./series-threads.js').ThreadSeries} ThreadSeries */

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
 * @property {{ what: string, seconds: number }[]} [after] the phases doctor ran after the window, not charted
 */

/** ms: samples this far from the load window are not believed. */
const LONGEST = 6 * 3600 * 1000
/**
 * ms charted before and after the load window, at most (a quarter of it for a short one): the start-up and the moment
 * after the load give context; the phases after it (heap samples, snapshots, each its own load) are not the window's
 * and, minutes long, would dwarf it — they are listed instead (`after`).
 */
const MARGIN = 2000
/** Longest chart, in buckets: longer runs get wider buckets. */
const MAX_BUCKETS = 600

/**
 * @param {RunData} data
 * @returns {RunSeries}
 */
export function runSeries (data) {
  const t0 = data.run.loadWindow.start
  const end = Math.max(t0, num(data.run.loadWindow.end))
  const margin = Math.min(MARGIN, Math.max(250, (end - t0) / 4))
  // A saved run is read as found: samples or bins with impossible times (a damaged file) are left out of the charts,
  // and so is what came long before or after the window.
  const plausible = (/** @type {number} */ time, /** @type {number} */ ms) =>
    Number.isFinite(time) && time > t0 - margin && time - ms < end + margin && ms >= 0 && ms < LONGEST
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
    load: data.run.load ? loadSeries(bins, coarse) : null,
    after: phasesAfter(data.run)
  }
}

/**
 * The phases doctor ran after the load window (run.json says what each took), for the page to say they are not in
 * the charts.
 * @param {import('../../run/doctor-run.js').RunRecord} run
 * @returns {{ what: string, seconds: number }[]}
 */
function phasesAfter (run) {
  const sum = (/** @type {{ duration?: number }[] | undefined} */ phases) => (phases ?? []).reduce((a, p) => a + (Number(p.duration) || 0), 0)
  const out = []
  const allocations = run.allocations
  if (allocations && allocations.phases.length > 0) out.push({ what: `heap sampling load${allocations.phases.length > 1 ? 's' : ''}`, seconds: round(sum(allocations.phases), 1) })
  const t = run.tracing
  if (t && t.end > t.start) out.push({ what: 'tracing load', seconds: round((t.end - t.start) / 1000, 1) })
  const r = run.retainers
  if (r && r.snapshots.length > 0) {
    out.push({ what: `${r.snapshots.length} heap snapshot${r.snapshots.length > 1 ? 's' : ''} and their loads`, seconds: round(sum(r.phases) + r.snapshots.reduce((a, x) => a + (Number(x.ms) || 0), 0) / 1000, 1) })
  }
  return out
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
