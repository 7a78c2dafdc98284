// The checks that the results given to merge are the segments of one split load (hotpath load --segment): all of
// them, once each, of one run and one set of flags, started together. A missing or doubled segment makes a merged
// result that looks like a load and is not one, so merge refuses it; one that started late still adds up exactly,
// so the merge is made and marked failed.
import { UsageError } from '../errors.js'

/** @typedef {import('./result.js').LoadResult} LoadResult */
/** @typedef {import('./segment.js').SegmentInfo} SegmentInfo */

/** A segment that began more than this after the first did not load together with it (ms). */
export const MAX_START_SKEW_MS = 1000

/**
 * The flags every segment of one load must share, as the result records them.
 * @param {LoadResult} r
 * @returns {Record<string, unknown>}
 */
function settings (r) {
  const o = r.hotpath.options
  const s = /** @type {SegmentInfo} */ (r.hotpath.segment)
  return {
    url: r.url,
    socketPath: r.socketPath,
    method: o.method,
    requests: o.requestsHash,
    connections: s.whole.connections,
    rate: s.whole.rate,
    amount: s.whole.amount,
    duration: o.duration,
    warmup: o.warmup,
    pipelining: o.pipelining,
    timeout: o.timeout,
    'start-at': s.startAt === null ? null : new Date(s.startAt).toISOString(),
    'busy-poll': o.busyPoll ?? false,
    coalesce: o.coalesce ?? false
  }
}

/**
 * Refuses segments that do not make one whole load, naming the one at fault; null when no result is a segment.
 * @param {LoadResult[]} results
 * @param {string[]} names what each result is called in messages (its file, or where it was in the log)
 * @returns {import('./result.js').SegmentsInfo | null} with `rate` null: the caller knows the achieved rate
 */
export function checkSegments (results, names) {
  const segs = results.map(r => r.hotpath.segment)
  const at = segs.findIndex(s => s !== undefined)
  if (at === -1) return null
  const plain = segs.findIndex(s => s === undefined)
  if (plain !== -1) {
    throw new UsageError(`'${names[plain]}' is not a segment of a split load and '${names[at]}' is (hotpath load --segment): merge either the segments of one load or whole results`)
  }
  const all = /** @type {SegmentInfo[]} */ (segs)
  const first = all[0]
  const ref = settings(results[0])
  for (let j = 1; j < results.length; j++) {
    if (all[j].count !== first.count) {
      throw new UsageError(`'${names[j]}' is segment ${all[j].index}/${all[j].count} and '${names[0]}' is ${first.index}/${first.count}: the segments of one load share N`)
    }
    const own = settings(results[j])
    for (const key of Object.keys(ref)) {
      if (JSON.stringify(own[key]) !== JSON.stringify(ref[key])) {
        throw new UsageError(`'${names[j]}' ran with ${key} ${show(own[key])} and '${names[0]}' with ${show(ref[key])}: the segments of one load share every flag, or they add up to no load`)
      }
    }
    if (all[j].run !== first.run) {
      throw new UsageError(`'${names[j]}' belongs to run ${all[j].run} and '${names[0]}' to run ${first.run}: merge takes the segments of one run`)
    }
  }
  /** @type {Map<number, number>} */
  const byIndex = new Map()
  all.forEach((s, i) => {
    const other = byIndex.get(s.index)
    if (other !== undefined) {
      throw new UsageError(`segment ${s.index}/${s.count} of run ${s.run} is there twice, '${names[other]}' and '${names[i]}' (a pod run again?): merging both would count its requests twice`)
    }
    byIndex.set(s.index, i)
  })
  const missing = Array.from({ length: first.count }, (_, i) => i + 1).filter(k => !byIndex.has(k))
  if (missing.length > 0) {
    const list = missing.map(k => `${k}/${first.count}`)
    throw new UsageError(`segment${missing.length > 1 ? 's' : ''} ${joinAnd(list)} of run ${first.run} ${missing.length > 1 ? 'are' : 'is'} missing ` +
      `(got ${all.length} of ${first.count}): without ${missing.length > 1 ? 'them' : 'it'} the merged result is not the load that was asked — ` +
      'find its result (did its pod fail, or was the log cut? kubectl logs needs --tail=-1)')
  }
  const earliest = Math.min(...all.map(s => s.started))
  const latest = Math.max(...all.map(s => s.started))
  const starts = [...all].sort((a, b) => a.index - b.index).map(s => ({
    index: s.index,
    started: s.started,
    late: s.startAt === null ? null : Math.round(s.started - s.startAt) / 1000
  }))
  return {
    run: first.run,
    count: first.count,
    startAt: first.startAt,
    startSkew: Math.round(latest - earliest) / 1000,
    starts,
    outOfStep: starts.filter(s => s.started - earliest > MAX_START_SKEW_MS).map(s => s.index),
    rate: null
  }
}

/**
 * The first line to say about segments that did not start together, naming them.
 * @param {import('./result.js').SegmentsInfo} info
 */
export function outOfStepDetail (info) {
  const first = info.starts.reduce((a, b) => (b.started < a.started ? b : a))
  const late = info.starts.filter(s => info.outOfStep.includes(s.index))
    .map(s => `segment ${s.index}/${info.count} began ${((s.started - first.started) / 1000).toFixed(1)} s after segment ${first.index}/${info.count}`)
  return `the segments did not load together: ${joinAnd(late)} (more than ${MAX_START_SKEW_MS / 1000} s), so the combined rate and the per-second figures understate the load asked (are the nodes' clocks synced? were the pods scheduled in time?)`
}

/** @param {unknown} v */
const show = (v) => v === undefined || v === null ? 'none' : typeof v === 'string' ? v : JSON.stringify(v)

/** @param {string[]} items */
function joinAnd (items) {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`
}
