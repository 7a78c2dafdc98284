// The functions to blame, most responsible first. Time spent in a package, in Node.js or in the engine is charged to
// the nearest app function that called it — "SHA-512 in node:crypto, 40%" becomes "etag() at util.js:31, 40%, via
// digest" — because that is the code the user can change. Without an app frame on the stack, the nearest package
// frame takes it, then the nearest Node.js frame. Engine-only stacks ((program), (garbage collector)) are nobody's.
// Heap profiles do not expand inlined frames: a call a function's source does not make, found in a function it calls
// (see inlined.js), is charged to that function, at its line, with a share of what the frame allocated itself. A
// package that runs app code it was given (a framework calling a route handler) is charged, when V8 inlined that code
// into it, with what the app code allocated: a call the package's source does not make is looked for in the app
// functions the profiles show it calling, and charged there.
import { buildHeapProfile, SOURCES } from './model.js'
import { callLines, functionSource } from './call-sites.js'
import { classifyFrame } from './classify.js'
import { InlineResolver } from './inlined.js'
import { SourceMapper } from './source-maps.js'
import { SourceCache } from './sources.js'

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
 * @property {number} [inlinedShare] heap profiles: the part of `share` V8 charged to callers it had inlined this
 *   function into, recovered from the source (those callers are in `callers`, marked `inlined`)
 * @property {CulpritCall[]} calls where its charged time goes, most first
 * @property {CulpritCaller[]} callers the nearest app functions that called it, most first: for a listener or a
 *   callback, the code that made it run (through `emit`, a framework, a timer)
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

const OWNER_KINDS = /** @type {const} */ (['app', 'dependency', 'node'])

/**
 * @param {import('./model.js').ProfileModel} model
 * @param {CulpritOptions} [opts]
 * @returns {Culprit[]}
 */
export function findCulprits (model, opts = {}) {
  const limit = opts.limit ?? 10
  const minShare = opts.minShare ?? 0.005
  const callLimit = opts.callLimit ?? 5
  const { frames } = model
  if (model.total <= 0) return []

  const { near, via } = nearestOwners(model)
  const context = /** @type {any} */ (model)[SOURCES] ?? {}
  const sources = /** @type {SourceCache} */ (context.sources ?? new SourceCache())
  const mapper = /** @type {SourceMapper | null} */ (context.mapper ?? new SourceMapper(sources))
  // Functions V8 ran only inlined, or only in another profile, have no frame in the model: they get one here.
  const index = new FrameIndex(model, mapper)
  const frameOf = (/** @type {number} */ f) => index.frame(f)
  /** @type {Map<number, import('./call-sites.js').FunctionSource | null>} */
  const functionCache = new Map()
  const fnOf = (/** @type {number} */ f) => {
    let fn = functionCache.get(f)
    if (fn === undefined) functionCache.set(f, fn = readFunction(frameOf(f), sources))
    return fn
  }
  // Heap profiles charge what an inlined function allocates to the function it was inlined into (CPU profiles expand
  // inlined frames): a call its own source does not make is looked for in the functions it calls.
  const inlining = model.type === 'heap' ? new InlineResolver(sources) : null
  const called = inlining ? appCallees(model, index, opts.callProfiles ?? []) : /** @type {Map<number, number[]>} */ (new Map())
  /** @type {(f: number, fn: import('./call-sites.js').FunctionSource, name: string) => import('./inlined.js').InlinedSite[]} */
  const appSites = (f, fn, name) => {
    const dynamic = (called.get(f) ?? []).map(c => calledFunction(frameOf(c)))
    return inlining && dynamic.length > 0 ? inlining.sites(scriptOf(frameOf(f)).file, fn, name, { called: dynamic, calledOnly: true }) : []
  }
  /** @type {typeof appSites} */
  const inlineSites = (f, fn, name) => {
    if (!inlining) return []
    // The app's code first: a package's own helpers make many of the calls a route handler makes too.
    const fromApp = appSites(f, fn, name)
    return fromApp.length > 0 ? fromApp : inlining.sites(scriptOf(frameOf(f)).file, fn, name)
  }
  const owners = chargeOwners(model, near, via, threadsOf(model), dispatchRedirect(model, called, fnOf, appSites))

  // Each owner's calls and lines, resolved in its own source: the line of each call is found where the call is made.
  const floor = model.total * minShare / 10
  /** @type {Map<number, Resolved>} */
  const resolved = new Map()
  const helperFrame = (/** @type {import('./inlined.js').InlinedSite} */ site) => index.forDeclaration(site)
  /** @type {Map<number, Resolved>} */
  const recovered = new Map()
  for (const [f, o] of owners) {
    if (o.charged < floor) continue
    const frame = frames[f]
    const fn = fnOf(f)
    /** @type {Map<number, { value: number, callLine?: number }>} */
    const calls = new Map()
    const lines = new Map(o.lines)
    let ownCalls = 0
    /** @type {{ helper: number, callee: number, value: number, callLine: number | undefined, hop: { name: string, line: number } }[]} */
    const moved = []
    for (const [c, value] of o.calls) {
      const callLine = fn ? originalLine(frame, callLines(fn, frames[c].name)[0], mapper) : undefined
      if (callLine === undefined && inlining && fn) {
        const sites = inlineSites(f, fn, frames[c].name)
        for (const site of sites) {
          const helper = helperFrame(site)
          if (helper === f) continue
          const share = value / sites.length
          moved.push({ helper, callee: c, value: share, callLine: originalLine(frameOf(helper), site.callLine, mapper), hop: site.hop })
        }
        if (moved.some(m => m.callee === c)) continue
      }
      // A call no line of the source makes and no function it calls makes either comes from the function's own
      // syntax (for…of calls `values` and `next`): evidence of its own allocations, like the calls its lines make.
      ownCalls += value
      calls.set(c, callLine === undefined ? { value } : { value, callLine })
      if (callLine !== undefined) lines.set(callLine, (lines.get(callLine) ?? 0) + value)
    }
    let charged = o.charged
    if (moved.length > 0) {
      // What the frame allocated itself cannot be told apart by line: it is shared out like the calls whose place in
      // the source is known, between the function's own code and the functions inlined into it.
      const inHelpers = moved.reduce((sum, m) => sum + m.value, 0)
      const ownMoved = o.own * inHelpers / (inHelpers + ownCalls)
      const hopLine = originalLine(frame, moved[0].hop.line, mapper)
      for (const m of moved) {
        const value = m.value + ownMoved * m.value / inHelpers
        charged -= value
        let r = recovered.get(m.helper)
        if (!r) recovered.set(m.helper, r = emptyResolved())
        r.charged += value
        addThreads(r.threads, o.threads, value / o.charged)
        const call = r.calls.get(m.callee)
        if (call) call.value += m.value
        else r.calls.set(m.callee, m.callLine === undefined ? { value: m.value } : { value: m.value, callLine: m.callLine })
        if (m.callLine !== undefined) r.lines.set(m.callLine, (r.lines.get(m.callLine) ?? 0) + m.value)
        const line = m.hop === moved[0].hop ? hopLine : originalLine(frame, m.hop.line, mapper)
        const key = `${f}:${m.hop.name}:${line}`
        const into = r.inlinedInto.get(key)
        if (into) into.value += value
        else r.inlinedInto.set(key, { caller: f, via: m.hop.name, line: line ?? frame.line, value })
      }
    }
    const threads = new Map()
    addThreads(threads, o.threads, charged / o.charged)
    resolved.set(f, { ...emptyResolved(), charged, lines, calls, threads })
  }
  for (const [f, r] of recovered) {
    const into = resolved.get(f)
    if (into) mergeResolved(into, r)
    else resolved.set(f, r)
  }

  // An anonymous callback written inside the function that runs it (`rows.map(row => …)`, `list.forEach(…)`) is part
  // of that function to whoever reads the code: its time, lines and calls go to the enclosing function.
  /** @type {Map<number, number>} */
  const foldInto = new Map()
  for (const f of resolved.keys()) {
    const target = f < frames.length ? enclosingCaller(model, f, near[0], fnOf) : -1
    if (target !== -1) foldInto.set(f, target)
  }
  for (const [f, first] of foldInto) {
    let target = first
    for (let hops = 0; foldInto.has(target) && hops < 50; hops++) target = /** @type {number} */ (foldInto.get(target))
    const from = /** @type {Resolved} */ (resolved.get(f))
    let into = resolved.get(target)
    if (!into) resolved.set(target, into = emptyResolved())
    mergeResolved(into, from)
    resolved.delete(f)
  }

  const ranked = [...resolved].sort((a, b) => b[1].charged - a[1].charged).slice(0, limit)
  /** @type {Culprit[]} */
  const culprits = []
  for (const [f, o] of ranked) {
    const share = o.charged / model.total
    if (share < minShare) break
    const frame = frameOf(f)
    const calls = [...o.calls].sort((a, b) => b[1].value - a[1].value).slice(0, callLimit).map(([c, { value, callLine }]) => {
      const callee = frames[c]
      /** @type {CulpritCall} */
      const call = { function: callee.name, file: callee.file, line: callee.line, kind: callee.kind, share: value / model.total }
      if (callee.label) call.label = callee.label
      if (callLine !== undefined) call.callLine = callLine
      return call
    })
    /** @type {CulpritCaller[]} */
    const callers = f < frames.length
      ? findCallers(model, f, near[0], via[0], callLimit).map(({ caller, through, value }) => {
        const callerFrame = frames[caller]
        const viaName = frames[through].name
        const callerFn = fnOf(caller)
        const line = originalLine(callerFrame, callerFn ? callLines(callerFn, viaName)[0] : undefined, mapper) ?? callerFrame.line
        return withLabel({ function: callerFrame.name, file: callerFrame.file, line, via: viaName, share: value / model.total }, callerFrame)
      })
      : []
    let inlinedShare = 0
    for (const { caller, via: viaName, line, value } of o.inlinedInto.values()) {
      const callerFrame = frames[caller]
      inlinedShare += value / model.total
      const same = callers.find(c => c.function === callerFrame.name && c.file === callerFrame.file && c.line === line && c.via === viaName)
      if (same) {
        same.share += value / model.total
        same.inlined = true
      } else {
        callers.push(withLabel({ function: callerFrame.name, file: callerFrame.file, line, via: viaName, share: value / model.total, inlined: true }, callerFrame))
      }
    }
    if (o.inlinedInto.size > 0) {
      callers.sort((a, b) => b.share - a.share)
      callers.length = Math.min(callers.length, callLimit)
    }
    // The hottest line: its own lines and the lines of its calls, weighed together.
    let line = frame.line
    let best = 0
    for (const [l, v] of o.lines) {
      if (v > best) {
        best = v
        line = l
      }
    }
    /** @type {Culprit} */
    const culprit = { function: frame.name, file: frame.file, line, functionLine: frame.line, share, kind: frame.kind, calls, callers }
    if (frame.label) culprit.label = frame.label
    if (model.unit === 'ms') {
      culprit.selfMs = frame.self
      culprit.totalMs = frame.total
    } else {
      culprit.selfBytes = frame.self
      culprit.totalBytes = frame.total
      if (inlinedShare > 0) culprit.inlinedShare = inlinedShare
    }
    if (model.threads) culprit.threads = threadShares(model, o.threads)
    culprits.push(culprit)
  }
  return culprits
}

/**
 * For each node, the nearest ancestor-or-self of each owner kind, and which of that owner's children leads there.
 * @param {import('./model.js').ProfileModel} model
 */
function nearestOwners (model) {
  const { nodes, frames } = model
  const n = nodes.length
  const near = OWNER_KINDS.map(() => new Int32Array(n).fill(-1))
  const via = OWNER_KINDS.map(() => new Int32Array(n).fill(-1))
  for (let i = 0; i < n; i++) {
    const node = nodes[i]
    const kind = frames[node.frame].kind
    const p = node.parent
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
 * @param {import('./model.js').ProfileModel} model
 * @returns {Int32Array | null}
 */
function threadsOf (model) {
  if (!model.threads) return null
  const { nodes } = model
  const of = new Int32Array(nodes.length).fill(-1)
  model.threads.forEach((t, i) => { if (t.node > 0 && t.node < nodes.length) of[t.node] = i })
  for (let i = 1; i < nodes.length; i++) if (of[i] === -1 && nodes[i].parent > 0) of[i] = of[nodes[i].parent]
  return of
}

/**
 * @typedef {object} Owner
 * @property {number} charged
 * @property {number} own what the samples in the owner itself took
 * @property {Map<number, number>} lines
 * @property {Map<number, number>} calls the owner's callee frame on the way → value
 * @property {Map<number, number>} threads
 */

/**
 * Every sample charged to its owner: the nearest app frame on its stack, else the nearest package frame, then the
 * nearest Node.js frame (or where `redirect` says), with the function the owner called on the way to it.
 * @param {import('./model.js').ProfileModel} model
 * @param {Int32Array[]} near
 * @param {Int32Array[]} via
 * @param {Int32Array | null} threadOf
 * @param {((node: number, owner: number) => { owner: number, via: number } | null) | null} redirect for stacks without
 *   an app frame
 * @returns {Map<number, Owner>} by owner frame
 */
function chargeOwners (model, near, via, threadOf, redirect) {
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
    if (!o) owners.set(ownerFrame, o = { charged: 0, own: 0, lines: new Map(), calls: new Map(), threads: new Map() })
    o.charged += node.self
    if (threadOf && threadOf[i] !== -1) o.threads.set(threadOf[i], (o.threads.get(threadOf[i]) ?? 0) + node.self)
    if (v === -1) {
      o.own += node.self
      for (const [line, value] of node.lines) o.lines.set(line, (o.lines.get(line) ?? 0) + value)
    } else {
      const callee = nodes[v].frame
      o.calls.set(callee, (o.calls.get(callee) ?? 0) + node.self)
    }
  }
  return owners
}

/**
 * Package frames that run app code they were given (a framework calling a route handler), with the app functions
 * they call: in this profile, and in `callProfiles` (a CPU profile shows every call, inlined or not).
 * @param {import('./model.js').ProfileModel} model
 * @param {FrameIndex} index
 * @param {import('./model.js').ProfileModel[]} callProfiles
 * @returns {Map<number, number[]>} package frame → app frames
 */
function appCallees (model, index, callProfiles) {
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

/** Package frames above an app frame that are taken to run it: the depth of a framework's dispatch (Fastify's is 3). */
const PACKAGE_RUN = 4

/**
 * Where a stack without an app frame goes when a package frame on it runs app code and V8 inlined that code there:
 * a call the package's source does not make, which an app function it runs (or one that function calls) does make,
 * goes to that package frame, whose unexplained calls are then looked for in the app code (see `appSites`).
 * @param {import('./model.js').ProfileModel} model
 * @param {Map<number, number[]>} called package frame → the app frames it calls
 * @param {(f: number) => import('./call-sites.js').FunctionSource | null} fnOf
 * @param {(f: number, fn: import('./call-sites.js').FunctionSource, name: string) => import('./inlined.js').InlinedSite[]} appSites
 * @returns {((node: number, owner: number) => { owner: number, via: number } | null) | null}
 */
function dispatchRedirect (model, called, fnOf, appSites) {
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

/**
 * A frame's function as the inline search takes it: where it starts in the script that ran.
 * @param {import('./model.js').ProfileFrame} frame
 * @returns {import('./inlined.js').CalledFunction}
 */
function calledFunction (frame) {
  return { name: frame.name, ...scriptOf(frame) }
}

/**
 * What a function is charged with, resolved against its source.
 * @typedef {object} Resolved
 * @property {number} charged
 * @property {Map<number, number>} lines 1-based line → value
 * @property {Map<number, { value: number, callLine?: number }>} calls callee frame → value, and the line of the call
 * @property {Map<string, { caller: number, via: string, line: number, value: number }>} inlinedInto the frames V8
 *   charged with it, having inlined it: the line of each that leads to it, and what was recovered from there
 * @property {Map<number, number>} threads index in `model.threads` → value, for models of several profiles
 */

/** @returns {Resolved} */
function emptyResolved () {
  return { charged: 0, lines: new Map(), calls: new Map(), inlinedInto: new Map(), threads: new Map() }
}

/**
 * Adds `from`'s values, scaled, into `into` (both thread index → value).
 * @param {Map<number, number>} into
 * @param {Map<number, number>} from
 * @param {number} factor
 */
function addThreads (into, from, factor) {
  if (!(factor > 0)) return
  for (const [t, v] of from) into.set(t, (into.get(t) ?? 0) + v * factor)
}

/**
 * @param {import('./model.js').ProfileModel} model
 * @param {Map<number, number>} byThread
 * @returns {{ label: string, share: number }[]}
 */
function threadShares (model, byThread) {
  const threads = model.threads ?? []
  return [...byThread]
    .filter(([t, v]) => v > 0 && threads[t] !== undefined)
    .sort((a, b) => b[1] - a[1])
    .map(([t, v]) => ({ label: threads[t].label, share: v / model.total }))
}

/**
 * @param {Resolved} into
 * @param {Resolved} from
 */
function mergeResolved (into, from) {
  into.charged += from.charged
  for (const [line, v] of from.lines) into.lines.set(line, (into.lines.get(line) ?? 0) + v)
  for (const [c, call] of from.calls) {
    const existing = into.calls.get(c)
    if (existing) existing.value += call.value
    else into.calls.set(c, { ...call })
  }
  for (const [key, entry] of from.inlinedInto) {
    const existing = into.inlinedInto.get(key)
    if (existing) existing.value += entry.value
    else into.inlinedInto.set(key, { ...entry })
  }
  addThreads(into.threads, from.threads, 1)
}

/**
 * @param {CulpritCaller} entry
 * @param {import('./model.js').ProfileFrame} frame
 * @returns {CulpritCaller}
 */
function withLabel (entry, frame) {
  if (frame.label) entry.label = frame.label
  return entry
}

/**
 * Where a frame's function is in the script that ran.
 * @param {import('./model.js').ProfileFrame} frame
 */
function scriptOf (frame) {
  return frame.generated ?? { file: frame.file, line: frame.line, column: frame.column - 1 }
}

/**
 * The model's frames by where their function is in the script that ran, and the frames of functions the model lacks
 * (V8 ran them only inlined, or they come from another profile of the same code), numbered after the model's own.
 */
class FrameIndex {
  /**
   * @param {import('./model.js').ProfileModel} model
   * @param {SourceMapper | null} mapper
   */
  constructor (model, mapper) {
    this.model = model
    this.mapper = mapper
    /** @type {import('./model.js').ProfileFrame[]} */
    this.extra = []
    /** @type {Map<string, number> | null} */
    this.byPosition = null
  }

  /** @param {number} f */
  frame (f) {
    const { frames } = this.model
    return f < frames.length ? frames[f] : this.extra[f - frames.length]
  }

  /**
   * The frame whose function starts at this place of the script that ran (1-based line, 0-based column).
   * @param {{ file: string, line: number, column: number }} where
   * @returns {number | undefined}
   */
  find (where) {
    return this.positions().get(positionKey(where))
  }

  /** @returns {Map<string, number>} */
  positions () {
    if (!this.byPosition) {
      this.byPosition = new Map()
      for (const frame of this.model.frames) this.byPosition.set(positionKey(scriptOf(frame)), frame.id)
    }
    return this.byPosition
  }

  /**
   * A frame of this model for one of another profile of the same code.
   * @param {import('./model.js').ProfileFrame} other
   */
  forFrame (other) {
    const where = scriptOf(other)
    const id = this.find(where)
    if (id !== undefined) return id
    return this.add({ ...other, id: 0, self: 0, total: 0, lines: [] }, where)
  }

  /**
   * The frame of a function found in the source.
   * @param {import('./inlined.js').InlinedSite} site
   */
  forDeclaration (site) {
    const { declaration: d } = site
    const where = { file: site.file, line: d.line, column: d.column }
    const id = this.find(where)
    if (id !== undefined) return id
    const original = this.mapper?.original(site.file, d.line, d.column) ?? null
    const file = original ? original.file : site.file
    /** @type {import('./model.js').ProfileFrame} */
    const frame = {
      id: 0,
      name: d.name,
      file,
      line: original ? original.line : d.line,
      column: (original ? original.column : d.column) + 1,
      kind: classifyFrame({ functionName: d.name, url: site.file, scriptId: '' }, file, this.model.appRoot),
      self: 0,
      total: 0,
      lines: []
    }
    if (original) frame.generated = where
    return this.add(frame, where)
  }

  /**
   * @param {import('./model.js').ProfileFrame} frame
   * @param {{ file: string, line: number, column: number }} where
   */
  add (frame, where) {
    frame.id = this.model.frames.length + this.extra.length
    this.extra.push(frame)
    this.positions().set(positionKey(where), frame.id)
    return frame.id
  }
}

/** @param {{ file: string, line: number, column: number }} where */
function positionKey (where) {
  return `${where.file}\0${where.line}\0${where.column}`
}

/**
 * A line found in the script that ran, as a line of the frame's own file (through its source map when it has one).
 * @param {import('./model.js').ProfileFrame} frame
 * @param {number | undefined} line
 * @param {SourceMapper | null} mapper
 * @returns {number | undefined}
 */
function originalLine (frame, line, mapper) {
  if (line === undefined || !frame.generated) return line
  const mapped = mapper?.original(frame.generated.file, line, -1)
  return mapped && mapped.file === frame.file ? mapped.line : undefined
}

/**
 * For an anonymous app function: the app function that runs it most, when the callback is written inside that
 * function's source (not the whole script's); else -1.
 * @param {import('./model.js').ProfileModel} model
 * @param {number} f
 * @param {Int32Array} nearApp
 * @param {(f: number) => import('./call-sites.js').FunctionSource | null} fnOf
 */
function enclosingCaller (model, f, nearApp, fnOf) {
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

/**
 * The nearest app callers of a frame, with the function each called on the way, weighed by the time under them.
 * @param {import('./model.js').ProfileModel} model
 * @param {number} frame
 * @param {Int32Array} nearApp nearest app ancestor-or-self of each node
 * @param {Int32Array} viaApp that ancestor's child on the path
 * @param {number} limit
 */
function findCallers (model, frame, nearApp, viaApp, limit) {
  const { nodes } = model
  /** @type {Map<string, { caller: number, through: number, value: number }>} */
  const found = new Map()
  for (const node of nodes) {
    if (node.frame !== frame || node.parent < 0) continue
    const p = node.parent
    const a = nearApp[p]
    if (a === -1 || nodes[a].frame === frame) continue
    const v = a === p ? node.id : viaApp[p]
    const key = `${nodes[a].frame}:${nodes[v].frame}`
    const entry = found.get(key)
    if (entry) entry.value += node.total
    else found.set(key, { caller: nodes[a].frame, through: nodes[v].frame, value: node.total })
  }
  return [...found.values()].sort((x, y) => y.value - x.value).slice(0, limit)
}

/**
 * The source of a frame's function in the script that ran (generated code, when source-mapped).
 * @param {import('./model.js').ProfileFrame} frame
 * @param {SourceCache} sources
 */
function readFunction (frame, sources) {
  const where = frame.generated ?? { file: frame.file, line: frame.line, column: frame.column - 1 }
  if (where.line < 1 || !where.file.startsWith('/')) return null
  const text = sources.read(where.file)
  if (text === null) return null
  try {
    return functionSource(text, where.line, where.column)
  } catch {
    return null
  }
}
