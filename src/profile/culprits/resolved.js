// What a function is charged with once resolved against its source: the record the stages after charging pass on,
// add up (an inlined helper's recovered share, a callback folded into its enclosing function) and rank.

/**
 * @typedef {object} Resolved
 * @property {number} charged
 * @property {Map<number, number>} lines 1-based line → value
 * @property {Map<number, { value: number, callLine?: number }>} calls callee frame → value, and the line of the call
 * @property {Map<string, { caller: number, via: string, line: number, value: number }>} inlinedInto the frames V8
 *   charged with it, having inlined it: the line of each that leads to it, and what was recovered from there
 * @property {Map<number, number>} threads index in `model.threads` → value, for models of several profiles
 * @property {number} unplaced what no line holds: in a heap profile, what the function allocated itself (its object and
 *   array literals, the strings it builds: V8 samples allocations without a position) and calls of its own syntax
 */

/** @returns {Resolved} */
export function emptyResolved () {
  return { charged: 0, lines: new Map(), calls: new Map(), inlinedInto: new Map(), threads: new Map(), unplaced: 0 }
}

/**
 * Adds `from`'s values, scaled, into `into` (both thread index → value).
 * @param {Map<number, number>} into
 * @param {Map<number, number>} from
 * @param {number} factor
 */
export function addThreads (into, from, factor) {
  if (!(factor > 0)) return
  for (const [t, v] of from) into.set(t, (into.get(t) ?? 0) + v * factor)
}

/**
 * @param {Resolved} into
 * @param {Resolved} from
 */
export function mergeResolved (into, from) {
  into.charged += from.charged
  into.unplaced += from.unplaced
  for (const [line, v] of from.lines) into.lines.set(line, (into.lines.get(line) ?? 0) + v)
  for (const [c, call] of from.calls) {
    const existing = into.calls.get(c)
    if (existing) existing.value += call.value
    else into.calls.set(c, { ...call })
  }
  for (const [key, entry] of from.inlinedInto) {
    const existing = into.inlinedInto.get(key)
    if (existing) existing.value += entry.value
    else into.inlinedInto.set(key, { ...entry })
  }
  addThreads(into.threads, from.threads, 1)
}
