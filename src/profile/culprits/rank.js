// The last stage: the functions charged most, each as a Culprit — at its hottest line, with where its time goes and
// who made it run.
import { culpritCallers } from './callers.js'

/** @typedef {import('../find-culprits.js').Culprit} Culprit */
/** @typedef {import('./resolved.js').Resolved} Resolved */

/**
 * @param {Map<number, Resolved>} resolved by frame
 * @param {import('./context.js').CulpritContext} ctx
 * @param {Int32Array} nearApp nearest app ancestor-or-self of each node
 * @param {Int32Array} viaApp that ancestor's child on the path
 * @param {{ limit: number, minShare: number, callLimit: number }} opts
 * @returns {Culprit[]} most responsible first
 */
export function rankCulprits (resolved, ctx, nearApp, viaApp, opts) {
  const ranked = [...resolved].sort((a, b) => b[1].charged - a[1].charged).slice(0, opts.limit)
  /** @type {Culprit[]} */
  const culprits = []
  for (const [f, o] of ranked) {
    const share = o.charged / ctx.model.total
    if (share < opts.minShare) break
    culprits.push(describeCulprit(f, o, share, ctx, nearApp, viaApp, opts.callLimit))
  }
  return culprits
}

/**
 * @param {number} f
 * @param {Resolved} o
 * @param {number} share
 * @param {import('./context.js').CulpritContext} ctx
 * @param {Int32Array} nearApp
 * @param {Int32Array} viaApp
 * @param {number} callLimit
 * @returns {Culprit}
 */
function describeCulprit (f, o, share, ctx, nearApp, viaApp, callLimit) {
  const { model } = ctx
  const frame = ctx.frameOf(f)
  const calls = culpritCalls(o, model, callLimit)
  const { callers, inlinedShare } = culpritCallers(f, o, ctx, nearApp, viaApp, callLimit)
  /** @type {Culprit} */
  const culprit = { function: frame.name, file: frame.file, line: hottestLine(o, frame.line, frame.unplaced ?? 0), functionLine: frame.line, share, kind: frame.kind, calls, callers }
  if (frame.label) culprit.label = frame.label
  if (model.type === 'heap' && frame.kind === 'app' && o.unplaced > 0 && o.unplaced >= hottestValue(o)) {
    // What it allocates itself has no line, and it is the most of what it allocates: no call's line stands for it. The
    // CPU profile of the same code says where the function's own time goes — building those objects, when they are
    // most of what it does, or calling the app code V8 inlined into it here; without one, the function is all that can
    // be named.
    const cpuLine = ctx.ownCpuLine(f)
    culprit.line = cpuLine ?? frame.line
    culprit.ownAllocations = { share: o.unplaced / model.total, lineFrom: cpuLine === null ? 'function' : 'cpu-time' }
  }
  if (model.unit === 'ms') {
    culprit.selfMs = frame.self
    culprit.totalMs = frame.total
  } else {
    culprit.selfBytes = frame.self
    culprit.totalBytes = frame.total
    if (inlinedShare > 0) culprit.inlinedShare = inlinedShare
  }
  if (model.threads) culprit.threads = threadShares(model, o.threads)
  return culprit
}

/**
 * Where a culprit's charged time goes: the functions it calls directly, most first.
 * @param {Resolved} o
 * @param {import('../model.js').ProfileModel} model
 * @param {number} callLimit
 * @returns {import('../find-culprits.js').CulpritCall[]}
 */
function culpritCalls (o, model, callLimit) {
  const { frames } = model
  return [...o.calls].sort((a, b) => b[1].value - a[1].value).slice(0, callLimit).map(([c, { value, callLine }]) => {
    const callee = frames[c]
    /** @type {import('../find-culprits.js').CulpritCall} */
    const call = { function: callee.name, file: callee.file, line: callee.line, kind: callee.kind, share: value / model.total }
    if (callee.label) call.label = callee.label
    if (callLine !== undefined) call.callLine = callLine
    return call
  })
}

/**
 * The hottest line: its own lines and the lines of its calls, weighed together.
 * @param {Resolved} o
 * @param {number} firstLine the function's first line, when no line is known
 * @param {number} [unplaced] its own time on lines a source map could not tell apart (one line of compiled code that
 *   holds several of the source's): when more than any line's, the function's first line is all that can be said
 */
export function hottestLine (o, firstLine, unplaced = 0) {
  let line = firstLine
  let best = unplaced
  for (const [l, v] of o.lines) {
    if (v > best) {
      best = v
      line = l
    }
  }
  return line
}

/**
 * The value of the hottest line (0 without lines).
 * @param {Resolved} o
 */
function hottestValue (o) {
  let best = 0
  for (const v of o.lines.values()) if (v > best) best = v
  return best
}

/**
 * @param {import('../model.js').ProfileModel} model
 * @param {Map<number, number>} byThread
 * @returns {{ label: string, share: number }[]}
 */
function threadShares (model, byThread) {
  const threads = model.threads ?? []
  return [...byThread]
    .filter(([t, v]) => v > 0 && threads[t] !== undefined)
    .sort((a, b) => b[1] - a[1])
    .map(([t, v]) => ({ label: threads[t].label, share: v / model.total }))
}
