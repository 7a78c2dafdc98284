// The three-snapshot technique: objects first seen in the second snapshot (made during the growth phase) that are
// still alive in the third, after more load and a full GC, are what the load leaves behind. They are grouped by what
// holds them: the nearest object on their shortest retainer path that is older than the growth phase (a Map made at
// start-up, a module's scope, an emitter) — the thing a developer has to change.
import { NONE } from './retainers.js'

/**
 * @typedef {object} SurvivorGroup
 * @property {number} holder the node that keeps the group (older than the growth phase)
 * @property {string} constructor the constructor of most of what it holds directly (an entry's value, a listener)
 * @property {string} type that constructor's node type (object, closure, string…)
 * @property {number} count how many such objects it holds
 * @property {number} nodes every surviving node in the group, whatever its kind
 * @property {number} bytes their shallow sizes added up: the memory the group grew by
 * @property {number} sample one of the `count` objects, whose retainer path stands for the group's
 * @property {boolean} [merged] the holder keeps the group through many objects of its own (a dictionary of arrays):
 *   its name is the step that leads to the holder, not one of its keys
 */

/**
 * Which nodes of the last snapshot survive from the growth phase: first seen in the second snapshot, not in the first.
 * V8 numbers objects as a snapshot first sees them and keeps their numbers across GCs (and moves) once a snapshot was
 * taken. The numbers are compared as sets, not as ranges: embedder (native) nodes get numbers of their own, far above
 * the objects'.
 * @param {import('./snapshot-graph.js').HeapGraph} graph the third snapshot
 * @param {Uint32Array} firstIds the first snapshot's node ids
 * @param {Uint32Array} secondIds the second snapshot's node ids
 * @returns {Uint8Array} 1 for a survivor, by node index
 */
export function survivorsOf (graph, firstIds, secondIds) {
  const first = Uint32Array.from(firstIds).sort()
  const second = Uint32Array.from(secondIds).sort()
  const survivor = new Uint8Array(graph.nodeCount)
  const synthetic = graph.nodeTypes.indexOf('synthetic')
  for (let n = 0; n < graph.nodeCount; n++) {
    const id = graph.id(n)
    if (graph.nodes[n * graph.nodeFields + graph.typeAt] !== synthetic && has(second, id) && !has(first, id)) survivor[n] = 1
  }
  return survivor
}

/**
 * @param {Uint32Array} sorted
 * @param {number} value
 */
function has (sorted, value) {
  let lo = 0
  let hi = sorted.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const v = sorted[mid]
    if (v === value) return true
    if (v < value) lo = mid + 1
    else hi = mid - 1
  }
  return false
}

/**
 * Groups the survivors by their holder, largest first.
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 * @param {import('./retainers.js').RetainerTree} tree
 * @param {Uint8Array} survivor
 * @returns {SurvivorGroup[]}
 */
export function groupSurvivors (graph, tree, survivor) {
  const { parent, order, reached } = tree
  const holder = new Uint32Array(graph.nodeCount).fill(NONE)
  // How many of a program's own objects lie between the holder and a survivor (V8's containers — a Map's hash table,
  // an array's backing store — do not count): a Map's entries are at 0, what they point to at 1.
  const level = new Uint32Array(graph.nodeCount)
  /** @type {Map<number, { nodes: number, bytes: number, kinds: Map<string, { count: number, type: string, level: number, sample: number }> }>} */
  const groups = new Map()
  for (let k = 1; k < reached; k++) {
    const n = order[k]
    if (survivor[n] === 0) continue
    const p = parent[n]
    const inside = survivor[p] === 1
    const h = inside ? holder[p] : p
    holder[n] = h
    level[n] = inside ? level[p] + (graph.isInternal(p) ? 0 : 1) : 0
    let group = groups.get(h)
    if (group === undefined) {
      group = { nodes: 0, bytes: 0, kinds: new Map() }
      groups.set(h, group)
    }
    group.nodes++
    group.bytes += graph.size(n)
    if (!graph.isInternal(n)) {
      const type = graph.type(n)
      const key = `${type}\0${constructorName(graph, n)}`
      const kind = group.kinds.get(key)
      if (kind === undefined) group.kinds.set(key, { count: 1, type, level: level[n], sample: n })
      else {
        kind.count++
        if (level[n] < kind.level) {
          kind.level = level[n]
          kind.sample = n
        }
      }
    }
  }
  /** @type {SurvivorGroup[]} */
  const out = []
  for (const [h, group] of groups) {
    const kinds = [...group.kinds].map(([key, kind]) => ({ ...kind, name: key.slice(key.indexOf('\0') + 1) }))
    if (kinds.length === 0) continue
    // What the holder keeps many of, nearest to it first: a listener array is one Array holding many closures (which
    // hold many more objects each); a Map cache holds as many keys (strings) as values (objects), and the values are
    // what the program made.
    const most = Math.max(...kinds.map(k => k.count))
    const best = kinds.filter(k => k.count * 10 >= most && (k.count > 1 || most === 1))
      .sort((a, b) => a.level - b.level || Number(isString(a.type)) - Number(isString(b.type)) || b.count - a.count)[0]
    out.push({ holder: h, constructor: best.name, type: best.type, count: best.count, nodes: group.nodes, bytes: group.bytes, sample: best.sample })
  }
  return out.sort((a, b) => b.bytes - a.bytes)
}

/** Levels of containers a group may be lifted through: a Map of arrays is one, a Map of Maps of arrays two. */
const LIFTS = 3

/**
 * Groups too small to grow with load are lifted to what holds their holders, where many of them share one: a rate
 * limiter that pushes each request into the array of its client, in an object keyed by client, leaks one object per
 * request over 5,000 arrays — 30 a holder, each too few to tell from the runtime settling, while 150,000 objects were
 * left in one object. Those groups are one, held by that object.
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 * @param {import('./retainers.js').RetainerTree} tree
 * @param {SurvivorGroup[]} groups
 * @param {number} minCount what a group needs to grow with load
 * @returns {SurvivorGroup[]} largest first
 */
export function liftSmallGroups (graph, tree, groups, minCount) {
  const done = groups.filter(g => g.count >= minCount)
  let pending = groups.filter(g => g.count < minCount)
  for (let lift = 0; lift < LIFTS && pending.length > 1; lift++) {
    /** @type {Map<number, SurvivorGroup[]>} */
    const byOwner = new Map()
    /** @type {SurvivorGroup[]} */
    const next = []
    for (const g of pending) {
      const owner = ownerOf(graph, tree, g.holder)
      if (owner === NONE) next.push(g)
      else byOwner.set(owner, [...(byOwner.get(owner) ?? []), g])
    }
    for (const [owner, list] of byOwner) {
      if (list.length < 2) {
        next.push(...list)
        continue
      }
      const merged = mergeGroups(owner, list)
      if (merged.count >= minCount) done.push(merged)
      else next.push(merged)
    }
    pending = next
  }
  return [...done, ...pending].sort((a, b) => b.bytes - a.bytes)
}

/**
 * The program's object that holds a node: its retainer, past V8's containers (an object's property or element store,
 * a Map's hash table).
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 * @param {import('./retainers.js').RetainerTree} tree
 * @param {number} n
 */
function ownerOf (graph, tree, n) {
  let p = tree.parent[n]
  while (p !== NONE && p !== 0 && graph.isInternal(p)) p = tree.parent[p]
  return p === 0 ? NONE : p
}

/**
 * @param {number} owner
 * @param {SurvivorGroup[]} list
 * @returns {SurvivorGroup}
 */
function mergeGroups (owner, list) {
  // The constructor most of them keep; counted only where it is that one, so that the count stays a count of objects
  // of one kind.
  /** @type {Map<string, { count: number, largest: SurvivorGroup }>} */
  const kinds = new Map()
  for (const g of list) {
    const k = kinds.get(g.constructor)
    if (k === undefined) kinds.set(g.constructor, { count: g.count, largest: g })
    else {
      k.count += g.count
      if (g.count > k.largest.count) k.largest = g
    }
  }
  const [, top] = [...kinds].sort((a, b) => b[1].count - a[1].count)[0]
  return {
    holder: owner,
    constructor: top.largest.constructor,
    type: top.largest.type,
    count: top.count,
    nodes: list.reduce((a, g) => a + g.nodes, 0),
    bytes: list.reduce((a, g) => a + g.bytes, 0),
    sample: top.largest.sample,
    merged: true
  }
}

/** @param {string} type */
function isString (type) {
  return type.includes('string')
}

/**
 * What a developer calls a node's kind: its constructor for an object, `Function` for a closure, `string`…
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 * @param {number} n
 */
export function constructorName (graph, n) {
  const type = graph.type(n)
  if (type === 'closure') return 'Function'
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return 'string'
  if (type === 'number') return 'number'
  if (type === 'regexp') return 'RegExp'
  return graph.name(n) || type
}
