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
 * @param {import('./graph.js').HeapGraph} graph
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
  // V8's string table is a root in the snapshot, two steps from the top, but it keeps no string alive in the heap
  // (its entries are weak): a string a program uses as a key would read "kept by (Internalized strings)". The walk
  // goes through it only after every other path has been walked.
  const table = stringTable(graph)
  let tableParent = NONE
  let tableVia = NONE
  for (;;) {
    while (head < tail) {
      const n = order[head++]
      const next = depth[n] + 1
      for (let e = firstEdge[n]; e < firstEdge[n + 1]; e += edgeFields) {
        const type = edges[e + edgeTypeAt]
        if (type === weakEdge) continue
        const to = edges[e + edgeToAt] / nodeFields
        if (to === table && depth[to] === NONE) {
          if (tableParent === NONE) { tableParent = n; tableVia = e }
          continue
        }
        const d = depth[to]
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
    if (tableParent === NONE || depth[table] !== NONE) break
    depth[table] = depth[tableParent] + 1
    parent[table] = tableParent
    via[table] = tableVia
    order[tail++] = table
  }
  return { parent, via, order, reached: tail }
}

/**
 * The node of V8's string table, `(Internalized strings)`, among the GC roots' children; NONE when there is none.
 * @param {import('./graph.js').HeapGraph} graph
 */
function stringTable (graph) {
  const { edges, firstEdge, edgeFields, edgeToAt, nodeFields } = graph
  for (let e = firstEdge[0]; e < firstEdge[1]; e += edgeFields) {
    const roots = edges[e + edgeToAt] / nodeFields
    if (graph.name(roots) !== '(GC roots)') continue
    for (let f = firstEdge[roots]; f < firstEdge[roots + 1]; f += edgeFields) {
      const child = edges[f + edgeToAt] / nodeFields
      if (/^\((Internalized strings|String table)\)$/.test(graph.name(child))) return child
    }
  }
  return NONE
}

/**
 * Edge types that carry a name from the program: context variables, properties, elements.
 * @param {import('./graph.js').HeapGraph} graph
 */
function namedEdgeTypes (graph) {
  const named = new Uint8Array(graph.edgeTypes.length)
  graph.edgeTypes.forEach((t, i) => { named[i] = t === 'context' || t === 'property' || t === 'element' ? 1 : 0 })
  return named
}
