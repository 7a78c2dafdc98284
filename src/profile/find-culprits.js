// The functions to blame, most responsible first. Time spent in a package, in Node.js or in the engine is charged to
// the nearest app function that called it — "SHA-512 in node:crypto, 40%" becomes "etag() at util.js:31, 40%, via
// digest" — because that is the code the user can change. Without an app frame on the stack, the nearest package
// frame takes it, then the nearest Node.js frame. Engine-only stacks ((program), (garbage collector)) are nobody's.
// Heap profiles do not expand inlined frames: a call a function's source does not make, found in a function it calls
// (see inlined.js), is charged to that function, at its line, with a share of what the frame allocated itself. A
// package that runs app code it was given (a framework calling a route handler) is charged, when V8 inlined that code
// into it, with what the app code allocated: a call the package's source does not make is looked for in the app
// functions the profiles show it calling, and charged there.
//
// Found in stages, each a module of culprits/: charge every sample to its owner (charge.js, with dispatch.js for
// packages that run app code), resolve each owner's calls and lines in its source (resolve.js, helpers.js), fold
// callbacks into the functions they are written in (fold-callbacks.js), and rank what is left (rank.js, callers.js).
import { buildHeapProfile } from './model.js'
import { chargeOwners, nearestOwners, threadsOf } from './culprits/charge.js'
import { culpritContext } from './culprits/context.js'
import { dispatchRedirect } from './culprits/dispatch.js'
import { foldCallbacks } from './culprits/fold-callbacks.js'
import { rankCulprits } from './culprits/rank.js'
import { resolveOwners } from './culprits/resolve.js'

/**
 * Where a culprit's time (or memory) goes: one function it calls directly.
 * @typedef {object} CulpritCall
 * @property {string} function
 * @property {string} [label] a readable name for an anonymous callee (see Culprit.label)
 * @property {string} file the callee's file
 * @property {number} line 1-based line where the callee starts (0 when unknown)
 * @property {import('./classify.js').FrameKind} kind
 * @property {number} share 0..1 of the whole profile
 * @property {number} [callLine] 1-based line in the culprit's file that makes this call, when it could be found
 */

/**
 * @typedef {object} Culprit
 * @property {string} function the function's name as V8 gives it (`(anonymous)` when it has none), or, for a function V8
 *   only ran inlined (see `inlinedShare`), as its source declares it
 * @property {string} [label] for an anonymous function, a name read from its source: `createServer callback`,
 *   `(anonymous in buildReport)`, `map callback in buildReport`, `(top level)`; absent when the source says nothing
 * @property {string} file path as the target sees it (the original source when source-mapped)
 * @property {number} line 1-based: the hottest line inside the function — a line of its own code, or the line that
 *   calls where its time goes; the function's first line when neither is known
 * @property {number} functionLine 1-based line where the function starts
 * @property {number} share 0..1 of the profile (CPU time without idle, or sampled bytes) charged to it
 * @property {import('./classify.js').FrameKind} kind
 * @property {number} [selfMs] CPU profiles: time in the function itself
 * @property {number} [totalMs] CPU profiles: time in it and everything it called
 * @property {number} [selfBytes] heap profiles: as V8 attributed them (0 for a function it only ran inlined)
 * @property {number} [totalBytes] heap profiles: as V8 attributed them
 * @property {{ share: number, lineFrom: 'cpu-time' | 'function' }} [ownAllocations] heap profiles, app functions: what it allocated
 *   itself (object and array literals, strings it builds), which V8 samples without a line, when that is more than any
 *   line of its calls holds: its share of the profile, and where `line` comes from — where its time goes in the CPU
 *   profile of the same code (`callProfiles`: a line of its own, or the call of an app function V8 inlined into it in
 *   the heap profile), or, without one, the function's first line
 * @property {number} [inlinedShare] heap profiles: the part of `share` V8 charged to callers it had inlined this
 *   function into, recovered from the source (those callers are in `callers`, marked `inlined`)
 * @property {CulpritCall[]} calls where its charged time goes, most first
 * @property {CulpritCaller[]} callers the nearest app functions that called it, most first: for a listener or a
 *   callback, the code that made it run (through `emit`, a framework, a timer)
 * @property {{ packages: { name: string, function: string, file: string }[], share: number }[]} [through] where its charged time went
 *   through two packages or more below it, the most first: the packages, outermost first, each by the function the
 *   stack entered it by, and the share of the profile spent that way
 * @property {{ label: string, share: number }[]} [threads] for a model of several profiles (processes, threads): those
 *   its share comes from, each with its part of `share`, most first
 */

/**
 * @typedef {object} CulpritCaller
 * @property {string} function
 * @property {string} [label] a readable name for an anonymous caller (see Culprit.label)
 * @property {string} file
 * @property {number} line 1-based: the line that makes the call on the way to the culprit when it could be found, else
 *   the caller's first line
 * @property {string} via the function the caller called directly (the culprit itself, or e.g. `emit`)
 * @property {number} share 0..1 of the profile spent in the culprit under this caller
 * @property {boolean} [inlined] V8 ran the culprit inlined in this caller and charged (part of) this share to it
 */

/**
 * @typedef {object} CulpritOptions
 * @property {number} [limit] how many culprits (default 10)
 * @property {number} [minShare] leave out functions charged less than this share (default 0.005)
 * @property {number} [callLimit] how many calls and callers per culprit (default 5)
 * @property {import('./model.js').ProfileModel[]} [callProfiles] other profiles of the same code (the CPU profile of the
 *   same run): the calls they show from a package into app code count as this profile's, for heap profiles, where V8
 *   may have run that app code inlined into the package the whole time
 */

/**
 * @param {import('./model.js').ProfileModel} model
 * @param {CulpritOptions} [opts]
 * @returns {Culprit[]}
 */
export function findCulprits (model, opts = {}) {
  const limit = opts.limit ?? 10
  const minShare = opts.minShare ?? 0.005
  const callLimit = opts.callLimit ?? 5
  if (model.total <= 0) return []
  const { near, via } = nearestOwners(model)
  const ctx = culpritContext(model, opts.callProfiles ?? [])
  const owners = chargeOwners(model, near, via, threadsOf(model), dispatchRedirect(model, ctx.called, ctx.fnOf, ctx.appSites))
  const resolved = resolveOwners(owners, ctx, model.total * minShare / 10)
  foldCallbacks(resolved, ctx, near[0])
  const culprits = rankCulprits(resolved, ctx, near[0], via[0], { limit, minShare, callLimit })
  addThrough(culprits, owners, model)
  return culprits
}

/**
 * The packages each culprit's time went through below its first call, the most first, when two or more: what a
 * framework's call ran of other packages (a middleware patched into res.end, a store, an ORM).
 * @param {Culprit[]} culprits
 * @param {Map<number, import('./culprits/charge.js').Owner>} owners
 * @param {import('./model.js').ProfileModel} model
 */
function addThrough (culprits, owners, model) {
  /** @type {Map<string, Map<string, number>>} */
  const byPlace = new Map()
  for (const [f, o] of owners) {
    if (!o.through || o.through.size === 0) continue
    const frame = model.frames[f]
    byPlace.set(`${frame.file}:${frame.line}:${frame.name}`, o.through)
  }
  for (const c of culprits) {
    const through = byPlace.get(`${c.file}:${c.functionLine}:${c.function}`)
    if (!through) continue
    c.through = [...through].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([key, value]) => ({
      packages: key.split('\u0001').map(p => {
        const [name, fn, file] = p.split('\u0002')
        return { name, function: fn, file }
      }),
      share: value / model.total
    }))
  }
}

/**
 * The functions whose allocations make up a sampling heap profile, charged like CPU time: allocations in packages,
 * Node.js or the engine go to the nearest app function that asked for them. Take the profile with collected objects
 * included for allocation rate (GC pressure); without, for what stays alive (leaks).
 * @param {import('./cpuprofile.js').SamplingHeapProfile} heapProfile
 * @param {CulpritOptions & import('./model.js').ModelOptions} [opts]
 * @returns {Culprit[]}
 */
export function findAllocationCulprits (heapProfile, opts = {}) {
  return findCulprits(buildHeapProfile(heapProfile, opts), opts)
}
