// A survivor group in a developer's words: the retainer path from the leaked object up to a GC root, with V8's own
// containers folded into the names a program uses (a Map's hash table becomes "Map entry"), and the place — file and
// line — of the variable or property that holds it.
import { NONE } from './retainers.js'
import { constructorName } from './survivors.js'

/** Steps of a path shown above the holding name: enough to tell which module or object it is in. */
const ABOVE_HOLDER = 4

/**
 * One step of a retainer path, from the leaked object outwards.
 * @typedef {object} Retainer
 * @property {string} name the variable, property, `[index]`, `Map entry` or V8's internal field name
 * @property {'context' | 'property' | 'element' | 'map-entry' | 'set-entry' | 'internal'} kind
 * @property {string} holder what has that name: `Map`, `EventEmitter`, `scope of handle()`…
 * @property {string | null} file
 * @property {number | null} line
 */

/**
 * @typedef {object} Culprit
 * @property {string} constructor
 * @property {number} count
 * @property {number} bytes
 * @property {number | null} bytesPerRequest
 * @property {string | null} holding the name that holds the group (`cache`, `_events`…), or null when only V8 internals do
 * @property {string} holder what that name holds (`Map`, `Array`…)
 * @property {string | null} function the function whose scope declares it (a module's scope: '(module)'), or the
 *   leaked function itself when the group is of closures
 * @property {string | null} file
 * @property {number | null} line
 * @property {Retainer[]} retainers
 */

/**
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 * @param {import('./retainers.js').RetainerTree} tree
 * @param {import('./survivors.js').SurvivorGroup[]} groups
 * @param {import('./places.js').Places} places
 * @param {number} requests requests of the growth phase (0: unknown)
 * @returns {Culprit[]}
 */
export function describeGroups (graph, tree, groups, places, requests) {
  const paths = groups.map(g => pathOf(graph, tree, g.sample))
  // Scopes on the shown paths are placed by a closure running in them: found in one pass over the graph.
  const contexts = new Set(paths.flat().filter(s => s.kind === 'context').map(s => s.from))
  return groups.map((group, i) => {
    const steps = paths[i]
    const retainers = steps.map(s => retainer(graph, places, s, contexts))
    // The name that holds the group: the first a program wrote, from the step that leads to the holder up. The step
    // from the holder to the sample is the sample's own key (`client-3694` of one array per client, `[12]`), which
    // differs from one object of the group to the next: it names one of them, not what holds them all.
    let at = steps.findIndex(s => s.to === group.holder)
    if (at < 0) at = Math.max(0, steps.findIndex(s => s.from === group.holder))
    let holdingAt = -1
    for (let k = at; k < retainers.length; k++) {
      // A key that is data, not a name a program wrote (`127.0.0.1:3981:` in an agent's per-origin queues, a URL),
      // is one entry of the object above: that object's own name holds them.
      if ((retainers[k].kind === 'context' || retainers[k].kind === 'property') && isWrittenName(retainers[k].name)) {
        holdingAt = k
        break
      }
    }
    const holding = holdingAt >= 0 ? retainers[holdingAt] : null
    const held = holdingAt >= 0 ? constructorName(graph, steps[holdingAt].to) : constructorName(graph, group.holder)
    /** @type {{ function: string | null, file: string | null, line: number | null }} */
    let place = { function: null, file: null, line: null }
    if (group.type === 'closure') {
      const p = places.ofClosure(group.sample)
      if (p) place = { function: p.function, file: p.file, line: p.line }
    }
    if (place.file === null) {
      const located = retainers.slice(holdingAt >= 0 ? holdingAt : at).find(r => r.file !== null)
      if (located) place = { function: functionOf(located), file: located.file, line: located.line }
      // A property is placed where the file of the object above it sets it (`this.byLabel = new Map()`).
      if (located && holding?.kind === 'property' && located !== holding) {
        const line = places.assignment(/** @type {string} */ (located.file), holding.name)
        if (line !== null) place.line = line
      }
    }
    const shown = holdingAt >= 0 ? Math.min(retainers.length, holdingAt + 1 + ABOVE_HOLDER) : retainers.length
    return {
      constructor: group.constructor,
      count: group.count,
      bytes: group.bytes,
      bytesPerRequest: requests > 0 ? Math.round(group.bytes / requests) : null,
      holding: holding?.name ?? null,
      holder: held,
      ...place,
      retainers: retainers.slice(0, shown)
    }
  })
}

/**
 * Whether a property or variable name is one a program writes (`cache`, `_events`, `byUser`), rather than a key made
 * of data (`127.0.0.1:3981:`, `/api/users`, `user 42`).
 * @param {string} name
 */
function isWrittenName (name) {
  return /^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(name)
}

/** @param {Retainer} r */
function functionOf (r) {
  const m = /^scope around (.+)\(\)$/.exec(r.holder)
  return m ? m[1] : r.holder
}

/**
 * @typedef {object} Step
 * @property {number} from the retaining node
 * @property {number} to the retained node
 * @property {Retainer['kind']} kind
 * @property {string} name
 */

/**
 * The shortest retainer path of a node, from it outwards, with V8's containers folded into their owner's step.
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 * @param {import('./retainers.js').RetainerTree} tree
 * @param {number} node
 * @returns {Step[]}
 */
function pathOf (graph, tree, node) {
  /** @type {Step[]} */
  const steps = []
  let n = node
  while (tree.parent[n] !== NONE && steps.length < 200) {
    const p = tree.parent[n]
    const e = tree.via[n]
    const type = graph.edgeType(e)
    const name = graph.edgeName(e)
    const owner = tree.parent[p]
    // A Map's or Set's entries live in its hash table: Map → table → entry reads as one "Map entry" step.
    if (graph.isInternal(p) && owner !== NONE && graph.edgeName(tree.via[p]) === 'table') {
      const collection = constructorName(graph, owner)
      const set = /Set$/.test(collection)
      steps.push({ from: owner, to: n, kind: set ? 'set-entry' : 'map-entry', name: set ? 'Set entry' : 'Map entry' })
      n = owner
      continue
    }
    // An object's elements or out-of-line properties are stored in an array of V8's: fold it into the object.
    if (graph.isInternal(p) && owner !== NONE && (type === 'element' || type === 'internal' || type === 'hidden') &&
        /^(elements|properties)$/.test(String(graph.edgeName(tree.via[p])))) {
      steps.push({ from: owner, to: n, kind: 'element', name: `[${name}]` })
      n = owner
      continue
    }
    if (type === 'context' || type === 'property') steps.push({ from: p, to: n, kind: type, name: String(name) })
    else if (type === 'element') steps.push({ from: p, to: n, kind: 'element', name: `[${name}]` })
    else steps.push({ from: p, to: n, kind: 'internal', name: String(name) })
    n = p
  }
  return steps
}

/**
 * @param {import('./snapshot-graph.js').HeapGraph} graph
 * @param {import('./places.js').Places} places
 * @param {Step} step
 * @param {Set<number>} contexts
 * @returns {Retainer}
 */
function retainer (graph, places, step, contexts) {
  if (step.kind === 'context') {
    const place = places.ofContext(step.from, contexts)
    if (place) {
      const declared = places.declared(place, step.name)
      // A module's top-level functions run in its scope; a nested function's scope is its outer function's.
      return { name: step.name, kind: 'context', holder: `scope around ${place.function}()`, file: declared?.file ?? place.file, line: declared?.line ?? place.line }
    }
    return { name: step.name, kind: 'context', holder: 'scope', file: null, line: null }
  }
  const from = step.from
  let holder = constructorName(graph, from)
  if (graph.type(from) === 'synthetic') holder = graph.name(from)
  if (graph.type(from) === 'closure') {
    const place = places.ofClosure(from)
    if (place) return { name: step.name, kind: step.kind, holder: `${place.function}()`, file: place.file, line: place.line }
  }
  return { name: step.name, kind: step.kind, holder, file: null, line: null }
}
