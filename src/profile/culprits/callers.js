// Who made a culprit run: the nearest app functions on the stacks under it, with the function each called on the way
// (the culprit itself, or e.g. `emit` for a listener), at the line that makes that call; and, in a heap profile, the
// functions V8 inlined it into, which it was recovered from (helpers.js).
import { originalLine } from './frame-index.js'

/** @typedef {import('../find-culprits.js').CulpritCaller} CulpritCaller */

/**
 * @param {number} f the culprit's frame
 * @param {import('./resolved.js').Resolved} o
 * @param {import('./context.js').CulpritContext} ctx
 * @param {Int32Array} nearApp nearest app ancestor-or-self of each node
 * @param {Int32Array} viaApp that ancestor's child on the path
 * @param {number} callLimit
 * @returns {{ callers: CulpritCaller[], inlinedShare: number }} most first; inlinedShare: the part of the culprit's
 *   share recovered from the functions it was inlined into
 */
export function culpritCallers (f, o, ctx, nearApp, viaApp, callLimit) {
  const { model, mapper } = ctx
  const { frames } = model
  /** @type {CulpritCaller[]} */
  const callers = f < frames.length
    ? findCallers(model, f, nearApp, viaApp, callLimit).map(({ caller, through, value }) => {
      const callerFrame = frames[caller]
      const viaName = frames[through].name
      const callerFn = ctx.fnOf(caller)
      const site = callerFn ? ctx.callSite(callerFn, through) : undefined
      const line = (site ? originalLine(callerFrame, site.line, mapper, site.column) : undefined) ?? callerFrame.line
      return withLabel({ function: callerFrame.name, file: callerFrame.file, line, via: viaName, share: value / model.total }, callerFrame)
    })
    : []
  let inlinedShare = 0
  for (const { caller, via: viaName, line, value } of o.inlinedInto.values()) {
    const callerFrame = frames[caller]
    inlinedShare += value / model.total
    const same = callers.find(c => c.function === callerFrame.name && c.file === callerFrame.file && c.line === line && c.via === viaName)
    if (same) {
      same.share += value / model.total
      same.inlined = true
    } else {
      callers.push(withLabel({ function: callerFrame.name, file: callerFrame.file, line, via: viaName, share: value / model.total, inlined: true }, callerFrame))
    }
  }
  if (o.inlinedInto.size > 0) {
    callers.sort((a, b) => b.share - a.share)
    callers.length = Math.min(callers.length, callLimit)
  }
  return { callers, inlinedShare }
}

/**
 * The nearest app callers of a frame, with the function each called on the way, weighed by the time under them.
 * @param {import('../model.js').ProfileModel} model
 * @param {number} frame
 * @param {Int32Array} nearApp nearest app ancestor-or-self of each node
 * @param {Int32Array} viaApp that ancestor's child on the path
 * @param {number} limit
 */
export function findCallers (model, frame, nearApp, viaApp, limit) {
  const { nodes } = model
  /** @type {Map<string, { caller: number, through: number, value: number }>} */
  const found = new Map()
  for (const node of nodes) {
    if (node.frame !== frame || node.parent < 0) continue
    const p = node.parent
    const a = nearApp[p]
    if (a === -1 || nodes[a].frame === frame) continue
    const v = a === p ? node.id : viaApp[p]
    const key = `${nodes[a].frame}:${nodes[v].frame}`
    const entry = found.get(key)
    if (entry) entry.value += node.total
    else found.set(key, { caller: nodes[a].frame, through: nodes[v].frame, value: node.total })
  }
  return [...found.values()].sort((x, y) => y.value - x.value).slice(0, limit)
}

/**
 * @param {CulpritCaller} entry
 * @param {import('../model.js').ProfileFrame} frame
 * @returns {CulpritCaller}
 */
function withLabel (entry, frame) {
  if (frame.label) entry.label = frame.label
  return entry
}
