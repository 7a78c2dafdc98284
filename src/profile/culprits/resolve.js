// The second stage: each owner's calls and lines, resolved in its own source. The line of each call is found where the
// call is made; in a heap profile, a call the owner's source does not make goes to the inlined helper that makes it
// (helpers.js).
import { originalLine } from './frame-index.js'
import { helperCalls, shareWithHelpers } from './helpers.js'
import { emptyResolved, addThreads, mergeResolved } from './resolved.js'

/** @typedef {import('./resolved.js').Resolved} Resolved */

/**
 * @param {Map<number, import('./charge.js').Owner>} owners
 * @param {import('./context.js').CulpritContext} ctx
 * @param {number} floor owners charged less are left out: too small to be a culprit, not worth reading the source of
 * @returns {Map<number, Resolved>} by frame: the owners, and the helpers found to make calls they were charged with
 */
export function resolveOwners (owners, ctx, floor) {
  /** @type {Map<number, Resolved>} */
  const resolved = new Map()
  /** @type {Map<number, Resolved>} */
  const recovered = new Map()
  for (const [f, o] of owners) {
    if (o.charged < floor) continue
    resolved.set(f, resolveOwner(f, o, ctx, recovered))
  }
  for (const [f, r] of recovered) {
    const into = resolved.get(f)
    if (into) mergeResolved(into, r)
    else resolved.set(f, r)
  }
  return resolved
}

/**
 * @param {number} f
 * @param {import('./charge.js').Owner} o
 * @param {import('./context.js').CulpritContext} ctx
 * @param {Map<number, Resolved>} recovered what helpers get from the owner, added to
 * @returns {Resolved} what the owner keeps
 */
function resolveOwner (f, o, ctx, recovered) {
  const { frames } = ctx.model
  const frame = frames[f]
  const fn = ctx.fnOf(f)
  /** @type {Map<number, { value: number, callLine?: number }>} */
  const calls = new Map()
  const lines = new Map(o.lines)
  /** @type {import('./helpers.js').HelperCall[]} */
  const moved = []
  for (const [c, value] of o.calls) {
    const site = fn ? ctx.callSite(fn, c, o.lines) : undefined
    const callLine = site ? originalLine(frame, site.line, ctx.mapper, site.column) : undefined
    if (callLine === undefined && ctx.inlining && fn) {
      const toHelpers = helperCalls(ctx, f, fn, c, value)
      for (const m of toHelpers) moved.push(m)
      if (toHelpers.length > 0) continue
    }
    // A call no line of the source makes and no function it calls makes either comes from the function's own
    // syntax (for…of calls `values` and `next`): evidence of its own allocations, like the calls its lines make.
    calls.set(c, callLine === undefined ? { value } : { value, callLine })
    if (callLine !== undefined) lines.set(callLine, (lines.get(callLine) ?? 0) + value)
  }
  const charged = moved.length > 0 ? shareWithHelpers(f, o, moved, ctx, recovered) : o.charged
  const threads = new Map()
  addThreads(threads, o.threads, charged / o.charged)
  let placed = 0
  for (const v of lines.values()) placed += v
  return { ...emptyResolved(), charged, lines, calls, threads, unplaced: Math.max(0, charged - placed) }
}
