// Heap profiles only. V8's heap profiler does not expand inlined frames: what a helper TurboFan inlined into its
// caller allocates is charged to the caller, whose source does not make the calls it is charged with. Such a call goes
// to the helper that does make it (found in the source, see inlined.js), at the helper's line, with a share of what
// the caller's frame allocated itself.
import { originalLine } from './frame-index.js'
import { emptyResolved, addThreads } from './resolved.js'

/**
 * A call an owner was charged with that a helper inlined into it makes.
 * @typedef {object} HelperCall
 * @property {number} helper the helper's frame
 * @property {number} callee
 * @property {number} value the part of the call's value that goes to this helper
 * @property {number | undefined} callLine the helper's line that makes the call
 * @property {{ name: string, line: number }} hop the call in the owner's source that leads to the helper
 */

/**
 * The helpers that make a call the owner's source does not (shared out evenly when several do); none when no
 * function the owner calls makes it either.
 * @param {import('./context.js').CulpritContext} ctx
 * @param {number} f the owner's frame
 * @param {import('../function-source.js').FunctionSource} fn the owner's source
 * @param {number} callee
 * @param {number} value
 * @returns {HelperCall[]}
 */
export function helperCalls (ctx, f, fn, callee, value) {
  const sites = ctx.inlineSites(f, fn, ctx.model.frames[callee].name)
  /** @type {HelperCall[]} */
  const out = []
  for (const site of sites) {
    const helper = ctx.index.forDeclaration(site)
    if (helper === f) continue
    const share = value / sites.length
    out.push({ helper, callee, value: share, callLine: originalLine(ctx.frameOf(helper), site.callLine, ctx.mapper), hop: site.hop })
  }
  return out
}

/**
 * Moves the helpers' calls, and their share of the owner's own allocations, from the owner into `recovered`.
 * @param {number} f the owner's frame
 * @param {import('./charge.js').Owner} o
 * @param {HelperCall[]} moved
 * @param {import('./context.js').CulpritContext} ctx
 * @param {Map<number, import('./resolved.js').Resolved>} recovered by helper frame, added to
 * @returns {number} what stays charged to the owner
 */
export function shareWithHelpers (f, o, moved, ctx, recovered) {
  const frame = ctx.model.frames[f]
  const { mapper } = ctx
  let charged = o.charged
  const ownShares = ownAllocationShares(o, moved)
  const hopLine = originalLine(frame, moved[0].hop.line, mapper)
  moved.forEach((m, i) => {
    const value = m.value + ownShares[i]
    charged -= value
    let r = recovered.get(m.helper)
    if (!r) recovered.set(m.helper, r = emptyResolved())
    r.charged += value
    addThreads(r.threads, o.threads, value / o.charged)
    const call = r.calls.get(m.callee)
    if (call) call.value += m.value
    else r.calls.set(m.callee, m.callLine === undefined ? { value: m.value } : { value: m.value, callLine: m.callLine })
    if (m.callLine !== undefined) r.lines.set(m.callLine, (r.lines.get(m.callLine) ?? 0) + m.value)
    const line = m.hop === moved[0].hop ? hopLine : originalLine(frame, m.hop.line, mapper)
    const key = `${f}:${m.hop.name}:${line}`
    const into = r.inlinedInto.get(key)
    if (into) into.value += value
    else r.inlinedInto.set(key, { caller: f, via: m.hop.name, line: line ?? frame.line, value })
  })
  return charged
}

/**
 * Samples of a helper's calls a stack needs before its own allocations are shared like its calls: one or two show
 * that the helper ran there, not how much of the stack's work it did. An async function's resumption that called an
 * inlined helper's `setTimeout` once in a run (one 256 kB sample) gave that helper all 360 MB of its own allocations,
 * built by other code that makes no call at all.
 */
const MIN_HELPER_SAMPLES = 3

/**
 * What each helper gets of the owner's own allocations. What a frame allocated itself cannot be told apart by line:
 * on each stack of the owner it is shared out like the calls on that stack whose maker is known, between the owner's
 * own code and the helpers inlined into it. A stack on which no helper's call was seen (or too few, see
 * MIN_HELPER_SAMPLES) keeps its own allocations: an async function whose start called an inlined helper's
 * `setTimeout` did not run that helper in its resumptions.
 * @param {import('./charge.js').Owner} o
 * @param {HelperCall[]} moved
 * @returns {number[]} indexed like `moved`
 */
function ownAllocationShares (o, moved) {
  const shares = moved.map(() => 0)
  // A callee found in several helpers is shared evenly among them (helperCalls): each helper's part of its value.
  const part = moved.map(m => m.value / (o.calls.get(m.callee) || m.value))
  const movedCallees = new Set(moved.map(m => m.callee))
  for (const path of o.paths.values()) {
    if (path.own <= 0) continue
    let inHelpers = 0
    let ownCalls = 0
    let helperSamples = 0
    for (const [callee, value] of path.calls) {
      if (movedCallees.has(callee)) {
        inHelpers += value
        helperSamples += path.sampled?.get(callee) ?? MIN_HELPER_SAMPLES
      } else ownCalls += value
    }
    if (inHelpers === 0 || helperSamples < MIN_HELPER_SAMPLES) continue
    moved.forEach((m, i) => {
      shares[i] += path.own * (path.calls.get(m.callee) ?? 0) * part[i] / (inHelpers + ownCalls)
    })
  }
  return shares
}
