// The first stage: every sample charged to its owner, the function the user can change. Time spent in a package, in
// Node.js or in the engine goes to the nearest app function that called it; without an app frame on the stack, to the
// nearest package frame, then the nearest Node.js frame. Engine-only stacks ((program), (garbage collector)) are
// nobody's.
import { isHotpathFile } from '../../hotpath-files.js'
import { packageName } from '../../package-name.js'

const OWNER_KINDS = /** @type {const} */ (['app', 'dependency', 'node'])

/**
 * What the samples charged to one function add up to.
 * @typedef {object} Owner
 * @property {number} charged
 * @property {number} own what the samples in the owner itself took
 * @property {Map<number, number>} lines
 * @property {Map<number, number>} calls the owner's callee frame on the way → value
 * @property {Map<number, OwnerPath>} paths by the owner's node: what was charged to it on each stack it was on
 * @property {Map<number, number>} threads
 * @property {Map<string, number>} [through] the packages the charged time went through below the owner, outermost first,
 *   each by the function the stack entered it by (`express json\u0001express-session end\u0001…`, parts split by
 *   \u0002) → value: where a framework's call ran a middleware's code patched into it (a session store's work in
 *   res.end)
 */

/**
 * What one stack of an owner took: its own samples, and its calls. A stack is one path through the code (an async
 * function's start and each of its resumptions are different stacks), so what its calls show of the code that ran
 * holds for the samples on it, not for those on the owner's other stacks.
 * @typedef {object} OwnerPath
 * @property {number} own
 * @property {Map<number, number>} calls callee frame → value
 * @property {Map<number, number>} [sampled] callee frame → samples taken in those calls (absent: as many as enough)
 */

/**
 * Where a stack without an app frame goes instead of its nearest package or Node.js frame (see dispatch.js).
 * @typedef {(node: number, owner: number) => { owner: number, via: number } | null} Redirect
 */

/**
 * For each node, the nearest ancestor-or-self of each owner kind, and which of that owner's children leads there.
 * @param {import('../model.js').ProfileModel} model
 * @returns {{ near: Int32Array[], via: Int32Array[] }} indexed like OWNER_KINDS: [0] app, [1] package, [2] Node.js
 */
export function nearestOwners (model) {
  const { nodes, frames } = model
  const n = nodes.length
  const near = OWNER_KINDS.map(() => new Int32Array(n).fill(-1))
  const via = OWNER_KINDS.map(() => new Int32Array(n).fill(-1))
  // hotpath's probe runs in the target (its wait tracer inside the app's every promise): what it and what it calls take
  // is the instrument's, charged to no one. Installed in the app, its frames are a package's, and the app function that
  // made the promise took the tracer's time and allocations as its own.
  const hotpath = frames.map(f => isHotpathFile(f.file))
  const probe = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    const node = nodes[i]
    const p = node.parent
    if (hotpath[node.frame] || (p >= 0 && probe[p] === 1)) {
      probe[i] = 1
      continue
    }
    const kind = frames[node.frame].kind
    for (let k = 0; k < OWNER_KINDS.length; k++) {
      if (kind === OWNER_KINDS[k]) {
        near[k][i] = i
      } else if (p >= 0) {
        near[k][i] = near[k][p]
        via[k][i] = near[k][p] === p ? i : via[k][p]
      }
    }
  }
  return { near, via }
}

/**
 * For a model of several profiles: the index in `model.threads` of the profile each node belongs to.
 * @param {import('../model.js').ProfileModel} model
 * @returns {Int32Array | null}
 */
export function threadsOf (model) {
  if (!model.threads) return null
  const { nodes } = model
  const of = new Int32Array(nodes.length).fill(-1)
  model.threads.forEach((t, i) => { if (t.node > 0 && t.node < nodes.length) of[t.node] = i })
  for (let i = 1; i < nodes.length; i++) if (of[i] === -1 && nodes[i].parent > 0) of[i] = of[nodes[i].parent]
  return of
}

/**
 * Every sample charged to its owner: the nearest app frame on its stack, else the nearest package frame, then the
 * nearest Node.js frame (or where `redirect` says), with the function the owner called on the way to it.
 * @param {import('../model.js').ProfileModel} model
 * @param {Int32Array[]} near
 * @param {Int32Array[]} via
 * @param {Int32Array | null} threadOf
 * @param {Redirect | null} redirect for stacks without an app frame
 * @returns {Map<number, Owner>} by owner frame
 */
export function chargeOwners (model, near, via, threadOf, redirect) {
  const { nodes, frames } = model
  /** @type {Map<number, Owner>} */
  const owners = new Map()
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]
    if (node.self <= 0 || frames[node.frame].name === '(idle)') continue
    let k = 0
    while (k < OWNER_KINDS.length && near[k][i] === -1) k++
    if (k === OWNER_KINDS.length) continue
    const moved = k > 0 && redirect ? redirect(i, near[k][i]) : null
    const ownerNode = moved ? moved.owner : near[k][i]
    const v = moved ? moved.via : via[k][i]
    const ownerFrame = nodes[ownerNode].frame
    let o = owners.get(ownerFrame)
    if (!o) owners.set(ownerFrame, o = { charged: 0, own: 0, lines: new Map(), calls: new Map(), paths: new Map(), threads: new Map(), through: new Map() })
    let path = o.paths.get(ownerNode)
    if (!path) o.paths.set(ownerNode, path = model.samples > 0 ? { own: 0, calls: new Map(), sampled: new Map() } : { own: 0, calls: new Map() })
    o.charged += node.self
    if (threadOf && threadOf[i] !== -1) o.threads.set(threadOf[i], (o.threads.get(threadOf[i]) ?? 0) + node.self)
    if (v === -1) {
      o.own += node.self
      path.own += node.self
      for (const [line, value] of node.lines) o.lines.set(line, (o.lines.get(line) ?? 0) + value)
    } else {
      const callee = nodes[v].frame
      const chain = packagesBetween(model, i, ownerNode)
      if (chain !== null && o.through) o.through.set(chain, (o.through.get(chain) ?? 0) + node.self)
      o.calls.set(callee, (o.calls.get(callee) ?? 0) + node.self)
      path.calls.set(callee, (path.calls.get(callee) ?? 0) + node.self)
      path.sampled?.set(callee, (path.sampled.get(callee) ?? 0) + node.samples)
    }
  }
  return owners
}

/**
 * The packages on a stack from just below its owner down to a node, outermost first, as a key (null with fewer than
 * two: one package called directly says no more than the owner's calls do).
 * @param {import('../model.js').ProfileModel} model
 * @param {number} node
 * @param {number} ownerNode
 * @returns {string | null}
 */
function packagesBetween (model, node, ownerNode) {
  const { nodes, frames } = model
  /** @type {string[]} */
  const names = []
  /** @type {string[]} */
  const entries = []
  for (let n = node; n !== ownerNode && n >= 0; n = nodes[n].parent) {
    const frame = frames[nodes[n].frame]
    const name = frame.kind === 'dependency' ? packageName(frame.file) : null
    if (name === null) continue
    // Innermost first: a package's frames in a row end with the one the stack entered it by.
    const entry = `${frame.name}\u0002${frame.file}`
    if (names[names.length - 1] === name) entries[entries.length - 1] = entry
    else {
      names.push(name)
      entries.push(entry)
    }
  }
  if (names.length < 2) return null
  return names.map((name, i) => `${name}\u0002${entries[i]}`).reverse().join('\u0001')
}
