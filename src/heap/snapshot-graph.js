// A parsed heap snapshot as a graph: nodes and edges by index, with names and types resolved through the snapshot's
// own meta (V8 versions add node fields, e.g. `detachedness` in Node 20+), never through fixed offsets.

/**
 * @typedef {import('./snapshot-reader.js').RawSnapshot} RawSnapshot
 */

/** Node types that are V8's own machinery, not values a program made. */
const INTERNAL_TYPES = new Set(['hidden', 'array', 'code', 'synthetic', 'object shape'])

export class HeapGraph {
  /** @param {RawSnapshot} raw */
  constructor (raw) {
    const { meta } = raw
    this.raw = raw
    this.nodes = raw.nodes
    this.edges = raw.edges
    this.strings = raw.strings
    this.nodeCount = raw.nodeCount
    this.nodeFields = meta.node_fields.length
    this.edgeFields = meta.edge_fields.length
    this.typeAt = meta.node_fields.indexOf('type')
    this.nameAt = meta.node_fields.indexOf('name')
    this.idAt = meta.node_fields.indexOf('id')
    this.sizeAt = meta.node_fields.indexOf('self_size')
    this.edgeCountAt = meta.node_fields.indexOf('edge_count')
    this.edgeTypeAt = meta.edge_fields.indexOf('type')
    this.edgeNameAt = meta.edge_fields.indexOf('name_or_index')
    this.edgeToAt = meta.edge_fields.indexOf('to_node')
    /** @type {string[]} */
    this.nodeTypes = meta.node_types[0]
    /** @type {string[]} */
    this.edgeTypes = meta.edge_types[0]
    this.weakEdge = this.edgeTypes.indexOf('weak')
    this.shortcutEdge = this.edgeTypes.indexOf('shortcut')
    this.internalNodeTypes = new Uint8Array(this.nodeTypes.length)
    this.nodeTypes.forEach((t, i) => { this.internalNodeTypes[i] = INTERNAL_TYPES.has(t) ? 1 : 0 })
    // Where each node's edges start in `edges` (they are laid out in node order); one entry more for the end.
    const firstEdge = new Uint32Array(this.nodeCount + 1)
    let at = 0
    for (let n = 0; n < this.nodeCount; n++) {
      firstEdge[n] = at
      at += this.nodes[n * this.nodeFields + this.edgeCountAt] * this.edgeFields
    }
    firstEdge[this.nodeCount] = at
    if (at !== this.edges.length) throw new Error(`the snapshot's nodes own ${at / this.edgeFields} edges, it has ${this.edges.length / this.edgeFields}`)
    this.firstEdge = firstEdge
  }

  /** @param {number} n */
  type (n) { return this.nodeTypes[this.nodes[n * this.nodeFields + this.typeAt]] }
  /** @param {number} n */
  isInternal (n) { return this.internalNodeTypes[this.nodes[n * this.nodeFields + this.typeAt]] === 1 }
  /** @param {number} n */
  name (n) { return this.strings[this.nodes[n * this.nodeFields + this.nameAt]] }
  /** @param {number} n */
  id (n) { return this.nodes[n * this.nodeFields + this.idAt] }
  /** @param {number} n */
  size (n) { return this.nodes[n * this.nodeFields + this.sizeAt] }

  /** @param {number} e an offset into `edges` */
  edgeType (e) { return this.edgeTypes[this.edges[e + this.edgeTypeAt]] }
  /** @param {number} e */
  edgeTarget (e) { return this.edges[e + this.edgeToAt] / this.nodeFields }
  /**
   * An edge's name: a property or variable name, or an element's index as a number.
   * @param {number} e
   * @returns {string | number}
   */
  edgeName (e) {
    const type = this.edgeType(e)
    const value = this.edges[e + this.edgeNameAt]
    return type === 'element' || type === 'hidden' ? value : this.strings[value]
  }

  /**
   * The first edge of `n` with this name (an internal field such as `shared`, `context`, `table`), or -1.
   * @param {number} n
   * @param {string} name
   * @returns {number} the edge's target node, or -1
   */
  child (n, name) {
    for (let e = this.firstEdge[n]; e < this.firstEdge[n + 1]; e += this.edgeFields) {
      if (this.edgeName(e) === name) return this.edgeTarget(e)
    }
    return -1
  }
}
