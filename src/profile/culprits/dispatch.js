// Packages that run app code they were given (a framework calling a route handler). V8's heap profiler does not expand
// inlined frames: when it inlined the app code into the package, what the app code allocated is charged to the
// package. This finds which app functions each package frame runs, and which of its stacks belong to that app code.
import { callLines } from '../call-sites.js'
import { scriptOf } from './frame-index.js'

/** Package frames above an app frame that are taken to run it: the depth of a framework's dispatch (Fastify's is 3). */
const PACKAGE_RUN = 4

/**
 * Package frames that run app code they were given (a framework calling a route handler), with the app functions
 * they call: in this profile, and in `callProfiles` (a CPU profile shows every call, inlined or not).
 * @param {import('../model.js').ProfileModel} model
 * @param {import('./frame-index.js').FrameIndex} index
 * @param {import('../model.js').ProfileModel[]} callProfiles
 * @returns {Map<number, number[]>} package frame → app frames
 */
export function appCallees (model, index, callProfiles) {
  /** @type {Map<number, number[]>} */
  const out = new Map()
  for (const other of [model, ...callProfiles]) {
    /** @type {Set<string>} */
    const seen = new Set()
    for (const node of other.nodes) {
      const callee = other.frames[node.frame]
      if (callee.kind !== 'app') continue
      // Each package frame of the run of them above the app frame runs it: V8 may have inlined the package's inner
      // functions into an outer one in one profile and not in another, so the heap may charge any of them.
      let up = node.parent
      for (let depth = 0; up >= 0 && depth < PACKAGE_RUN; depth++) {
        const caller = other.frames[other.nodes[up].frame]
        if (caller.kind !== 'dependency') break
        up = other.nodes[up].parent
        const key = `${caller.id}:${callee.id}`
        if (seen.has(key)) continue
        seen.add(key)
        // A package function this profile never charged has nothing to give back.
        const d = other === model ? caller.id : index.find(scriptOf(caller))
        if (d === undefined) continue
        const a = other === model ? callee.id : index.forFrame(callee)
        const list = out.get(d)
        if (!list) out.set(d, [a])
        else if (!list.includes(a)) list.push(a)
      }
    }
  }
  return out
}

/**
 * Where a stack without an app frame goes when a package frame on it runs app code and V8 inlined that code there:
 * a call the package's source does not make, which an app function it runs (or one that function calls) does make,
 * goes to that package frame, whose unexplained calls are then looked for in the app code (see `appSites`).
 * @param {import('../model.js').ProfileModel} model
 * @param {Map<number, number[]>} called package frame → the app frames it calls
 * @param {(f: number) => import('../function-source.js').FunctionSource | null} fnOf
 * @param {import('./context.js').SiteSearch} appSites
 * @returns {import('./charge.js').Redirect | null}
 */
export function dispatchRedirect (model, called, fnOf, appSites) {
  if (called.size === 0) return null
  const { nodes, frames } = model
  const n = nodes.length
  // The nearest package frame that runs app code, on each node's stack, and its child on the way.
  const near = new Int32Array(n).fill(-1)
  const via = new Int32Array(n).fill(-1)
  for (let i = 0; i < n; i++) {
    const p = nodes[i].parent
    if (called.has(nodes[i].frame)) {
      near[i] = i
    } else if (p >= 0) {
      near[i] = near[p]
      via[i] = near[p] === p ? i : via[p]
    }
  }
  /** @type {Map<string, boolean>} */
  const movable = new Map()
  return (i, owner) => {
    const d = near[i]
    if (d === -1 || d === owner || via[i] === -1) return null
    const dispatcher = nodes[d].frame
    const callee = nodes[via[i]].frame
    const key = `${dispatcher}:${callee}`
    let ok = movable.get(key)
    if (ok === undefined) {
      const fn = fnOf(dispatcher)
      const name = frames[callee].name
      ok = fn !== null && callLines(fn, name).length === 0 && appSites(dispatcher, fn, name).length > 0
      movable.set(key, ok)
    }
    return ok ? { owner: d, via: via[i] } : null
  }
}
