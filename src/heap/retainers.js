// The shortest retainer path of every node: one breadth-first walk from the snapshot's root, over strong edges only
// (a weak edge does not keep anything alive). Of two equally short paths, the one through a name a developer wrote
// — a variable, a property, an index — wins over one through V8's internals, so the path a culprit is shown with reads
// `cache` → Map entry rather than a feedback vector's slot.

export const NONE = 0xffffffff

/**
 * @typedef {object} RetainerTree
 * @property {Uint32Array} parent each node's retainer on its shortest path (NONE for the root and unreachable nodes)
 * @property {Uint32Array} via the edge (an offset into `edges`) from the parent
 * @property {Uint32Array} order reachable nodes in the walk's order: every node after its parent
 * @property {number} reached how many of `order` are filled
 */

/**
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 * @returns {RetainerTree}
 */
export function retainerTree (graph) {
  const { nodeCount, edges, firstEdge, edgeFields, edgeTypeAt, edgeToAt, nodeFields, weakEdge } = graph
  const parent = new Uint32Array(nodeCount).fill(NONE)
  const via = new Uint32Array(nodeCount).fill(NONE)
  const depth = new Uint32Array(nodeCount).fill(NONE)
  const named = namedEdgeTypes(graph)
  const order = new Uint32Array(nodeCount)
  let head = 0
  let tail = 0
  depth[0] = 0
  order[tail++] = 0
  // Some roots keep nothing alive in the sense a developer asks about, and the walk goes through them only after every
  // other path has been walked. V8's string table is two steps from the top, but its entries are weak: a string a
  // program uses as a key would read "kept by (Internalized strings)". The handle scopes and the stack hold what the
  // code running at the snapshot's moment touched — an inspector command can interrupt JavaScript mid-call — so an
  // emitter's listener map, caught in a handle while `on()` ran, would read "kept by (Handle scope)".
  const deferred = deferredRoots(graph)
  /** @type {Map<number, { from: number, edge: number }>} */
  const seen = new Map()
  for (;;) {
    while (head < tail) {
      const n = order[head++]
      const next = depth[n] + 1
      for (let e = firstEdge[n]; e < firstEdge[n + 1]; e += edgeFields) {
        const type = edges[e + edgeTypeAt]
        if (type === weakEdge) continue
        const to = edges[e + edgeToAt] / nodeFields
        const d = depth[to]
        if (d === NONE && deferred.has(to)) {
          if (!seen.has(to)) seen.set(to, { from: n, edge: e })
          continue
        }
        if (d === NONE) {
          depth[to] = next
          parent[to] = n
          via[to] = e
          order[tail++] = to
        } else if (d === next && named[type] === 1 && named[edges[via[to] + edgeTypeAt]] === 0) {
          parent[to] = n
          via[to] = e
        }
      }
    }
    const late = [...seen].find(([root]) => depth[root] === NONE)
    if (!late) break
    const [root, { from, edge }] = late
    depth[root] = depth[from] + 1
    parent[root] = from
    via[root] = edge
    order[tail++] = root
  }
  return { parent, via, order, reached: tail }
}

/**
 * The GC roots' children that are walked last: V8's string table, `(Internalized strings)`, and the roots of the code
 * running when the snapshot was taken: `(Handle scope)`, `(Stack roots)`, and the roots C++ code registers while it
 * runs (JSON.stringify's map of the objects it is inside, for one). V8 12 and later call those `(Strong roots)` and
 * the isolate's fixed table `(Strong root list)`; V8 11 (Node 20) calls both `(Strong roots)`, the fixed table first.
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 * @returns {Set<number>}
 */
function deferredRoots (graph) {
  const roots = gcRoots(graph)
  const fixedTableNamed = roots.some(r => graph.name(r) === '(Strong root list)')
  let strong = 0
  return new Set(roots.filter(r => {
    const name = graph.name(r)
    if (name === '(Strong roots)' && !fixedTableNamed && strong++ === 0) return false
    return /^\((Internalized strings|String table|Handle scope|Stack roots|Strong roots)\)$/.test(name)
  }))
}

/**
 * The children of the snapshot's `(GC roots)`, in the snapshot's order.
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 * @returns {number[]}
 */
function gcRoots (graph) {
  const { edges, firstEdge, edgeFields, edgeToAt, nodeFields } = graph
  for (let e = firstEdge[0]; e < firstEdge[1]; e += edgeFields) {
    const roots = edges[e + edgeToAt] / nodeFields
    if (graph.name(roots) !== '(GC roots)') continue
    const children = []
    for (let f = firstEdge[roots]; f < firstEdge[roots + 1]; f += edgeFields) children.push(edges[f + edgeToAt] / nodeFields)
    return children
  }
  return []
}

/**
 * Edge types that carry a name from the program: context variables, properties, elements.
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 */
function namedEdgeTypes (graph) {
  const named = new Uint8Array(graph.edgeTypes.length)
  graph.edgeTypes.forEach((t, i) => { named[i] = t === 'context' || t === 'property' || t === 'element' ? 1 : 0 })
  return named
}
