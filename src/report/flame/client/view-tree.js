// The view tree: the data tree with hidden kinds folded into their callers (and, split, a function's not-optimised
// calls apart from the rest), then laid out: each node's total, its children heaviest first, its x and depth.

/**
 * @typedef {object} View the tree as drawn; arrays indexed by view node, 0 the root
 * @property {Int32Array} frame
 * @property {Int32Array} parent -1 for the root
 * @property {Float64Array} self
 * @property {Float64Array} total self and everything under it
 * @property {Float64Array} x where the node starts, in data units from the root's left edge
 * @property {Int32Array} depth
 * @property {Int32Array} deopt index in data.deopts of why V8 did not optimise it, or -1 (merged, or optimised)
 * @property {number[][]} children
 * @property {number} count nodes in the view
 */

/**
 * @param {any} data what flameData() produced
 * @param {string[]} frameKind each frame's kind
 * @param {Record<string, boolean>} hide kinds folded into their callers
 * @param {boolean} split not-optimised calls apart
 * @returns {{ view: View, maxDepth: number }}
 */
export function buildView (data, frameKind, hide, split) {
  return layOut(foldTree(data, frameKind, hide, split))
}

/**
 * @param {any} data
 * @param {string[]} frameKind
 * @param {Record<string, boolean>} hide
 * @param {boolean} split
 */
function foldTree (data, frameKind, hide, split) {
  const N = data.nodes.frame.length
  const frame = new Int32Array(N)
  const parent = new Int32Array(N)
  const self = new Float64Array(N)
  const deopt = new Int32Array(N)
  /** @type {number[][]} */
  const children = []
  /** @type {Map<string, number>[]} */
  const childIndex = []
  const viewOf = new Int32Array(N)
  let count = 0
  for (let i = 0; i < N; i++) {
    const f = data.nodes.frame[i]
    const p = data.nodes.parent[i]
    if (p === -1) {
      frame[0] = f
      parent[0] = -1
      self[0] = data.nodes.self[i]
      deopt[0] = -1
      children.push([])
      childIndex.push(new Map())
      viewOf[i] = 0
      count = 1
      continue
    }
    const vp = viewOf[p]
    if (hide[frameKind[f]]) {
      viewOf[i] = vp
      self[vp] += data.nodes.self[i]
      continue
    }
    const d = split ? data.nodes.deopt[i] : -1
    const key = f + ':' + d
    let v = childIndex[vp].get(key)
    if (v === undefined) {
      v = count++
      frame[v] = f
      parent[v] = vp
      self[v] = 0
      deopt[v] = d
      children.push([])
      childIndex.push(new Map())
      childIndex[vp].set(key, v)
      children[vp].push(v)
    }
    self[v] += data.nodes.self[i]
    viewOf[i] = v
  }
  return { frame, parent, self, deopt, children, count }
}

/**
 * @param {{ frame: Int32Array, parent: Int32Array, self: Float64Array, deopt: Int32Array, children: number[][], count: number }} tree
 * @returns {{ view: View, maxDepth: number }}
 */
function layOut ({ frame, parent, self, deopt, children, count }) {
  const total = new Float64Array(count)
  for (let v = count - 1; v >= 0; v--) {
    total[v] += self[v]
    if (parent[v] >= 0) total[parent[v]] += total[v]
  }
  // Heaviest first: the hot path runs down the left edge.
  for (const c of children) if (c.length > 1) c.sort((a, b) => total[b] - total[a])
  const x = new Float64Array(count)
  const depth = new Int32Array(count)
  let maxDepth = 0
  const stack = [0]
  while (stack.length) {
    const v = /** @type {number} */ (stack.pop())
    let cx = x[v]
    for (const c of children[v]) {
      x[c] = cx
      depth[c] = depth[v] + 1
      if (depth[c] > maxDepth) maxDepth = depth[c]
      cx += total[c]
      stack.push(c)
    }
  }
  return { view: { frame, parent, self, total, x, depth, deopt, children, count }, maxDepth }
}
