// The third stage. An anonymous callback written inside the function that runs it (`rows.map(row => …)`,
// `list.forEach(…)`) is part of that function to whoever reads the code: its time, lines and calls go to the
// enclosing function.
import { emptyResolved, mergeResolved } from './resolved.js'

/**
 * Folds each such callback's record into its enclosing function's (in place).
 * @param {Map<number, import('./resolved.js').Resolved>} resolved by frame
 * @param {import('./context.js').CulpritContext} ctx
 * @param {Int32Array} nearApp nearest app ancestor-or-self of each node
 */
export function foldCallbacks (resolved, ctx, nearApp) {
  const { model } = ctx
  /** @type {Map<number, number>} */
  const foldInto = new Map()
  for (const f of resolved.keys()) {
    const target = f < model.frames.length ? enclosingCaller(model, f, nearApp, ctx.fnOf) : -1
    if (target !== -1) foldInto.set(f, target)
  }
  for (const [f, first] of foldInto) {
    let target = first
    for (let hops = 0; foldInto.has(target) && hops < 50; hops++) target = /** @type {number} */ (foldInto.get(target))
    const from = /** @type {import('./resolved.js').Resolved} */ (resolved.get(f))
    let into = resolved.get(target)
    if (!into) resolved.set(target, into = emptyResolved())
    mergeResolved(into, from)
    resolved.delete(f)
  }
}

/**
 * For an anonymous app function: the app function that runs it most, when the callback is written inside that
 * function's source (not the whole script's); else -1.
 * @param {import('../model.js').ProfileModel} model
 * @param {number} f
 * @param {Int32Array} nearApp
 * @param {(f: number) => import('../function-source.js').FunctionSource | null} fnOf
 */
export function enclosingCaller (model, f, nearApp, fnOf) {
  const { nodes, frames } = model
  const frame = frames[f]
  if (frame.kind !== 'app' || frame.name !== '(anonymous)') return -1
  /** @type {Map<number, number>} */
  const callers = new Map()
  for (const node of nodes) {
    if (node.frame !== f || node.parent < 0) continue
    const a = nearApp[node.parent]
    if (a !== -1 && nodes[a].frame !== f) callers.set(nodes[a].frame, (callers.get(nodes[a].frame) ?? 0) + node.total)
  }
  let caller = -1
  let most = 0
  for (const [c, v] of callers) {
    if (v > most) {
      most = v
      caller = c
    }
  }
  if (caller === -1) return -1
  const inner = frame.generated ?? { file: frame.file, line: frame.line }
  const outerFrame = frames[caller]
  const outer = outerFrame.generated ?? { file: outerFrame.file, line: outerFrame.line }
  const fn = fnOf(caller)
  if (!fn || fn.start === 0 || inner.file !== outer.file) return -1
  const last = fn.firstLine + countLines(fn.code) - 1
  return inner.line >= fn.firstLine && inner.line <= last && !(inner.line === outer.line && frame.column === outerFrame.column) ? caller : -1
}

/** @param {string} s */
function countLines (s) {
  let n = 1
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++
  return n
}
