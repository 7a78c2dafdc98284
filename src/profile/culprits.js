// The functions to blame, most responsible first. Time spent in a package, in Node.js or in the engine is charged to
// the nearest app function that called it — "SHA-512 in node:crypto, 40%" becomes "etag() at util.js:31, 40%, via
// digest" — because that is the code the user can change. Without an app frame on the stack, the nearest package
// frame takes it, then the nearest Node.js frame. Engine-only stacks ((program), (garbage collector)) are nobody's.
// Heap profiles do not expand inlined frames: a call a function's source does not make, found in a function it calls
// (see inlined.js), is charged to that function, at its line, with a share of what the frame allocated itself.
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
  const { nodes, frames } = model
  if (model.total <= 0) return []

  // For each node, the nearest ancestor-or-self of each owner kind, and which of that owner's children leads here.
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

  /** @type {Map<number, { charged: number, own: number, lines: Map<number, number>, calls: Map<number, number> }>} */
  const owners = new Map()
  for (let i = 0; i < n; i++) {
    const node = nodes[i]
    if (node.self <= 0 || frames[node.frame].name === '(idle)') continue
    let k = 0
    while (k < OWNER_KINDS.length && near[k][i] === -1) k++
    if (k === OWNER_KINDS.length) continue
    const ownerFrame = nodes[near[k][i]].frame
    let o = owners.get(ownerFrame)
    if (!o) owners.set(ownerFrame, o = { charged: 0, own: 0, lines: new Map(), calls: new Map() })
    o.charged += node.self
    const v = via[k][i]
    if (v === -1) {
      o.own += node.self
      for (const [line, value] of node.lines) o.lines.set(line, (o.lines.get(line) ?? 0) + value)
    } else {
      const callee = nodes[v].frame
      o.calls.set(callee, (o.calls.get(callee) ?? 0) + node.self)
    }
  }

  const context = /** @type {any} */ (model)[SOURCES] ?? {}
  const sources = /** @type {SourceCache} */ (context.sources ?? new SourceCache())
  const mapper = /** @type {SourceMapper | null} */ (context.mapper ?? new SourceMapper(sources))
  // Functions V8 ran only inlined have no frame in the model: they get one here, after the model's own.
  /** @type {import('./model.js').ProfileFrame[]} */
  const extra = []
  const frameOf = (/** @type {number} */ f) => f < frames.length ? frames[f] : extra[f - frames.length]
  /** @type {Map<number, import('./call-sites.js').FunctionSource | null>} */
  const functionCache = new Map()
  const fnOf = (/** @type {number} */ f) => {
    let fn = functionCache.get(f)
    if (fn === undefined) functionCache.set(f, fn = readFunction(frameOf(f), sources))
    return fn
  }

  // Each owner's calls and lines, resolved in its own source: the line of each call is found where the call is made.
  const floor = model.total * minShare / 10
  /** @type {Map<number, Resolved>} */
  const resolved = new Map()
  // Heap profiles charge what an inlined function allocates to the function it was inlined into (CPU profiles expand
  // inlined frames): a call its own source does not make is looked for in the functions it calls.
  const inlining = model.type === 'heap' ? new InlineResolver(sources) : null
  const helperFrame = inlining ? helperFrames(model, extra, mapper) : null
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
      if (callLine === undefined && inlining && helperFrame && fn) {
        const sites = inlining.sites(scriptOf(frame).file, fn, frames[c].name)
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
    resolved.set(f, { ...emptyResolved(), charged, lines, calls })
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
    culprits.push(culprit)
  }
  return culprits
}

/**
 * What a function is charged with, resolved against its source.
 * @typedef {object} Resolved
 * @property {number} charged
 * @property {Map<number, number>} lines 1-based line → value
 * @property {Map<number, { value: number, callLine?: number }>} calls callee frame → value, and the line of the call
 * @property {Map<string, { caller: number, via: string, line: number, value: number }>} inlinedInto the frames V8
 *   charged with it, having inlined it: the line of each that leads to it, and what was recovered from there
 */

/** @returns {Resolved} */
function emptyResolved () {
  return { charged: 0, lines: new Map(), calls: new Map(), inlinedInto: new Map() }
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
 * The frame of a function found in the source: the model's, when V8 also ran it on its own, else a new one in `extra`
 * (numbered after the model's frames).
 * @param {import('./model.js').ProfileModel} model
 * @param {import('./model.js').ProfileFrame[]} extra
 * @param {SourceMapper | null} mapper
 * @returns {(site: import('./inlined.js').InlinedSite) => number}
 */
function helperFrames (model, extra, mapper) {
  /** @type {Map<string, number> | null} */
  let byPosition = null
  return (site) => {
    if (!byPosition) {
      byPosition = new Map()
      for (const frame of model.frames) {
        const where = scriptOf(frame)
        byPosition.set(`${where.file}\0${where.line}\0${where.column}`, frame.id)
      }
    }
    const { declaration: d } = site
    const key = `${site.file}\0${d.line}\0${d.column}`
    let id = byPosition.get(key)
    if (id !== undefined) return id
    const original = mapper?.original(site.file, d.line, d.column) ?? null
    const file = original ? original.file : site.file
    /** @type {import('./model.js').ProfileFrame} */
    const frame = {
      id: model.frames.length + extra.length,
      name: d.name,
      file,
      line: original ? original.line : d.line,
      column: (original ? original.column : d.column) + 1,
      kind: classifyFrame({ functionName: d.name, url: site.file, scriptId: '' }, file, model.appRoot),
      self: 0,
      total: 0,
      lines: []
    }
    if (original) frame.generated = { file: site.file, line: d.line, column: d.column }
    id = frame.id
    extra.push(frame)
    byPosition.set(key, id)
    return id
  }
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
