// The call-tree model every consumer of a profile works from (culprits, flame graph, formats): nodes with self and
// total values, functions (frames) aggregated across the tree, per-line self values from positionTicks, and each
// frame's kind. Built from V8 CPU profiles (values in ms) or sampling heap profiles (values in bytes).
import { classifyFrame, fileOfUrl, KINDS } from './classify.js'
import { functionSource } from './call-sites.js'
import { functionLabel } from './function-labels.js'
import { scriptIndex } from './script-index.js'
import { parseCpuProfile, parseHeapProfile } from './cpuprofile.js'
import { SourceMapper } from './source-maps.js'
import { SourceCache } from './sources.js'

/** @typedef {import('./classify.js').FrameKind} FrameKind */
/** @typedef {import('./cpuprofile.js').CpuProfile} CpuProfile */
/** @typedef {import('./cpuprofile.js').SamplingHeapProfile} SamplingHeapProfile */
/** @typedef {import('./cpuprofile.js').CallFrame} CallFrame */

/**
 * One function, wherever it appears in the tree.
 * @typedef {object} ProfileFrame
 * @property {number} id its index in `model.frames`
 * @property {string} name function name as V8 gives it; `(anonymous)` when it has none
 * @property {string} [label] for an anonymous function, a name read from its source that a person recognises:
 *   `createServer callback`, `on('data') callback`, `(anonymous in buildReport)`, `map callback in buildReport`,
 *   `(top level)`; absent when the source says nothing (or was not read)
 * @property {string} file path as the target sees it (the original source when source-mapped), `node:…`, or ''
 * @property {number} line 1-based line where the function starts; 0 when unknown
 * @property {number} column 1-based; 0 when unknown
 * @property {FrameKind} kind
 * @property {number} self value spent in the function itself
 * @property {number} total value spent in it and what it called (recursion counted once)
 * @property {[number, number][]} lines `[line, self value]` for the lines its own time was spent on, hottest first
 * @property {{ file: string, line: number, column: number }} [generated] where it is in the script that ran (1-based
 *   line, 0-based column), when `file` and `line` come from a source map
 */

/**
 * One node of the call tree: a function called along one path.
 * @typedef {object} ProfileNode
 * @property {number} id its index in `model.nodes` (0 is the root; parents come before their children)
 * @property {number} frame index in `model.frames`
 * @property {number} parent -1 for the root
 * @property {number[]} children
 * @property {number} self
 * @property {number} total
 * @property {number} samples samples taken in this node itself
 * @property {[number, number][]} lines `[line, self value]`
 * @property {string} [deopt] why V8 would not optimise this function, when it said so
 */

/**
 * @typedef {object} ProfileModel
 * @property {'cpu' | 'heap'} type
 * @property {'ms' | 'bytes'} unit of every self and total value
 * @property {ProfileFrame[]} frames
 * @property {ProfileNode[]} nodes
 * @property {number} total everything measured except idle time: the denominator of shares
 * @property {number} idle ms the process was idle (CPU profiles)
 * @property {Record<FrameKind, number>} byKind self values added up by kind (idle excluded)
 * @property {number} samples
 * @property {number} durationMs wall time the profile covers (CPU profiles)
 * @property {number} intervalUs mean time between samples (CPU profiles)
 * @property {number} startTime µs, the profile's own clock (CPU profiles)
 * @property {string} [appRoot]
 * @property {{ label: string, node: number }[]} [threads] when built from several profiles: the node under the root
 *   that holds each one
 */

/**
 * @typedef {object} ModelOptions
 * @property {string} [appRoot] only files under this directory are the app's (default: every file outside
 *   node_modules)
 * @property {boolean} [sourceMaps] map frames to the original source when scripts ship source maps (default true)
 * @property {boolean} [readSources] read the profiled scripts at all (source maps, function extents); false inside a
 *   production process, where synchronous file reads would stall its event loop (default true)
 */

/**
 * A profile of one process or thread, labelled, for models that cover several.
 * @typedef {object} LabelledProfile
 * @property {CpuProfile} profile
 * @property {string} label e.g. `pid 4242` or `pid 4242 worker 1`
 */

// Where culprits find the scripts again; kept off the enumerable model so it stays plain data.
export const SOURCES = Symbol('hotpath.profile.sources')

const IDLE = '(idle)'

/**
 * Builds the model of a V8 CPU profile, or of several (one per process or thread, each under a node named by its
 * label).
 * @param {CpuProfile | LabelledProfile[]} input
 * @param {ModelOptions} [opts]
 * @returns {ProfileModel}
 */
export function buildProfile (input, opts = {}) {
  const list = Array.isArray(input) ? input : [{ profile: input, label: '' }]
  const builder = new Builder('cpu', opts)
  let samples = 0
  let start = Infinity
  let end = -Infinity
  let intervalSum = 0
  /** @type {{ label: string, node: number }[]} */
  const threads = []
  for (const { profile: raw, label } of list) {
    const profile = parseCpuProfile(raw, label ? `the profile of ${label}` : undefined)
    const parent = list.length > 1 ? builder.labelNode(label) : 0
    if (list.length > 1) threads.push({ label, node: parent })
    const ids = builder.addTree(profile.nodes, parent)
    const { self, count, interval } = sampleValues(profile)
    for (const [id, ms] of self) builder.addSelf(/** @type {number} */ (ids.get(id)), ms, /** @type {number} */ (count.get(id)))
    // Per-line values: each node's self time split over its lines in proportion to their ticks.
    for (const n of profile.nodes) {
      if (!n.positionTicks?.length) continue
      const node = builder.nodes[/** @type {number} */ (ids.get(n.id))]
      const ticks = n.positionTicks.reduce((s, t) => s + t.ticks, 0)
      if (ticks === 0 || node.self === 0) continue
      for (const t of n.positionTicks) builder.addLine(node, t.line, node.self * t.ticks / ticks)
    }
    samples += profile.samples?.length ?? profile.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0)
    start = Math.min(start, profile.startTime)
    end = Math.max(end, profile.endTime)
    intervalSum += interval
  }
  const model = builder.finish()
  model.samples = samples
  model.startTime = Number.isFinite(start) ? start : 0
  model.durationMs = Number.isFinite(end) ? (end - start) / 1000 : 0
  model.intervalUs = list.length > 0 ? intervalSum / list.length : 0
  if (threads.length > 0) model.threads = threads
  return model
}

/**
 * Builds the model of a sampling heap profile: values are bytes allocated (and, unless the profile was taken with
 * collected objects included, still alive) per call path.
 * @param {SamplingHeapProfile} heapProfile
 * @param {ModelOptions} [opts]
 * @returns {ProfileModel}
 */
export function buildHeapProfile (heapProfile, opts = {}) {
  const profile = parseHeapProfile(heapProfile)
  const builder = new Builder('heap', opts)
  /** @type {import('./cpuprofile.js').CpuProfileNode[]} */
  const flat = []
  /** @type {Map<number, number>} */
  const selfById = new Map()
  let nextId = 1
  const stack = [profile.head]
  /** @type {Map<import('./cpuprofile.js').SamplingHeapProfileNode, number>} */
  const idOf = new Map([[profile.head, nextId++]])
  while (stack.length > 0) {
    const n = /** @type {import('./cpuprofile.js').SamplingHeapProfileNode} */ (stack.pop())
    const id = /** @type {number} */ (idOf.get(n))
    const children = n.children.map(c => {
      idOf.set(c, nextId)
      return nextId++
    })
    flat.push({ id, callFrame: n.callFrame, children })
    selfById.set(id, n.selfSize)
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i])
  }
  const ids = builder.addTree(flat, 0)
  for (const [id, bytes] of selfById) builder.addSelf(/** @type {number} */ (ids.get(id)), bytes, bytes > 0 ? 1 : 0)
  const model = builder.finish()
  model.samples = profile.samples?.length ?? 0
  return model
}

class Builder {
  /**
   * @param {'cpu' | 'heap'} type
   * @param {ModelOptions} opts
   */
  constructor (type, opts) {
    this.type = type
    this.appRoot = opts.appRoot
    this.sources = new SourceCache(opts.readSources !== false)
    this.mapper = opts.sourceMaps === false || opts.readSources === false ? null : new SourceMapper(this.sources)
    /** @type {ProfileFrame[]} */
    this.frames = []
    /** @type {Map<string, number>} */
    this.frameIndex = new Map()
    /** @type {ProfileNode[]} */
    this.nodes = [{ id: 0, frame: this.frame({ functionName: '(root)', url: '', scriptId: '0', lineNumber: -1, columnNumber: -1 }), parent: -1, children: [], self: 0, total: 0, samples: 0, lines: [] }]
    /** @type {Map<ProfileNode, Map<number, number>>} */
    this.lineValues = new Map()
    /** @type {Map<number, [number, number] | null>} */
    this.ranges = new Map()
  }

  /**
   * The frame of a call frame, created on first sight. Frames are keyed by what identifies a function (name, script,
   * position), so the same function in two processes is one frame.
   * @param {CallFrame} cf
   */
  frame (cf) {
    const key = `${cf.functionName}\0${cf.url}\0${cf.lineNumber}\0${cf.columnNumber}`
    let id = this.frameIndex.get(key)
    if (id !== undefined) return id
    id = this.frames.length
    let file = fileOfUrl(cf.url)
    let line = cf.lineNumber + 1
    let column = cf.columnNumber + 1
    let name = cf.functionName
    /** @type {ProfileFrame['generated']} */
    let generated
    const original = this.mapper && file.startsWith('/') && line > 0 ? this.mapper.original(file, line, cf.columnNumber) : null
    if (original) {
      generated = { file, line, column: cf.columnNumber }
      file = original.file
      line = original.line
      column = original.column + 1
      if (original.name && name !== '') name = original.name
    }
    /** @type {ProfileFrame} */
    const frame = {
      id,
      name: name === '' ? '(anonymous)' : name,
      file,
      line: Math.max(0, line),
      column: Math.max(0, column),
      kind: classifyFrame(cf, file, this.appRoot),
      self: 0,
      total: 0,
      lines: []
    }
    if (generated) frame.generated = generated
    if (name === '' && cf.url !== '') {
      const where = generated ?? { file, line, column: column - 1 }
      const label = functionLabel(where.file.startsWith('/') ? scriptIndex(this.sources, where.file) : null, where.line, where.column)
      if (label) frame.label = label
    }
    this.frames.push(frame)
    this.frameIndex.set(key, id)
    return id
  }

  /**
   * A node under the root that stands for one process or thread.
   * @param {string} label
   */
  labelNode (label) {
    const frame = this.frame({ functionName: label, url: '', scriptId: '0', lineNumber: -1, columnNumber: -1 })
    const id = this.nodes.length
    this.nodes.push({ id, frame, parent: 0, children: [], self: 0, total: 0, samples: 0, lines: [] })
    this.nodes[0].children.push(id)
    return id
  }

  /**
   * Adds a profile's tree under `parent`; its root merges into `parent` (the root of the model, or a label node).
   * @param {import('./cpuprofile.js').CpuProfileNode[]} nodes the first is the profile's root
   * @param {number} parent
   * @returns {Map<number, number>} profile node id → model node index
   */
  addTree (nodes, parent) {
    /** @type {Map<number, import('./cpuprofile.js').CpuProfileNode>} */
    const byId = new Map(nodes.map(n => [n.id, n]))
    /** @type {Map<number, number>} */
    const ids = new Map([[nodes[0].id, parent]])
    // Pre-order, so a parent's index is always below its children's.
    const stack = [...(nodes[0].children ?? [])].reverse()
    /** @type {Map<number, number>} */
    const parentOf = new Map()
    for (const c of nodes[0].children ?? []) parentOf.set(c, parent)
    while (stack.length > 0) {
      const pid = /** @type {number} */ (stack.pop())
      const n = /** @type {import('./cpuprofile.js').CpuProfileNode} */ (byId.get(pid))
      const id = this.nodes.length
      const p = /** @type {number} */ (parentOf.get(pid))
      /** @type {ProfileNode} */
      const node = { id, frame: this.frame(n.callFrame), parent: p, children: [], self: 0, total: 0, samples: 0, lines: [] }
      if (n.deoptReason) node.deopt = n.deoptReason
      this.nodes.push(node)
      this.nodes[p].children.push(id)
      ids.set(pid, id)
      const children = n.children ?? []
      for (let i = children.length - 1; i >= 0; i--) {
        parentOf.set(children[i], id)
        stack.push(children[i])
      }
    }
    return ids
  }

  /**
   * @param {number} index
   * @param {number} value
   * @param {number} samples
   */
  addSelf (index, value, samples) {
    const node = this.nodes[index]
    node.self += value
    node.samples += samples
  }

  /**
   * @param {ProfileNode} node
   * @param {number} line 1-based, in the script that ran
   * @param {number} value
   */
  addLine (node, line, value) {
    const frame = this.frames[node.frame]
    // Code that V8 inlined reports its ticks with the inlined function's lines, which belong to another script; a line
    // outside the function's own source is one of those.
    const range = this.rangeOf(node.frame)
    if (range && (line < range[0] || line > range[1])) return
    let mapped = line
    if (frame.generated && this.mapper) {
      const original = this.mapper.original(frame.generated.file, line, -1)
      // A generated line that maps into another source is not a line of this function.
      if (!original || original.file !== frame.file) return
      mapped = original.line
    }
    let values = this.lineValues.get(node)
    if (!values) this.lineValues.set(node, values = new Map())
    values.set(mapped, (values.get(mapped) ?? 0) + value)
  }

  /**
   * The first and last line of a frame's function in the script that ran, when its source can be read.
   * @param {number} f
   * @returns {[number, number] | null}
   */
  rangeOf (f) {
    let range = this.ranges.get(f)
    if (range !== undefined) return range
    range = null
    const frame = this.frames[f]
    const where = frame.generated ?? { file: frame.file, line: frame.line, column: frame.column - 1 }
    const text = where.line > 0 && where.file.startsWith('/') ? this.sources.read(where.file) : null
    if (text !== null) {
      const fn = functionSource(text, where.line, where.column)
      if (fn) range = [fn.firstLine, fn.firstLine + fn.code.split('\n').length - 1]
    }
    this.ranges.set(f, range)
    return range
  }

  /** @returns {ProfileModel} */
  finish () {
    const { nodes, frames } = this
    for (let i = nodes.length - 1; i > 0; i--) {
      nodes[i].total += nodes[i].self
      nodes[nodes[i].parent].total += nodes[i].total
    }
    nodes[0].total += nodes[0].self
    /** @type {Map<number, Map<number, number>>} */
    const frameLines = new Map()
    for (const [node, values] of this.lineValues) {
      node.lines = [...values].sort((a, b) => b[1] - a[1])
      let fl = frameLines.get(node.frame)
      if (!fl) frameLines.set(node.frame, fl = new Map())
      for (const [line, v] of values) fl.set(line, (fl.get(line) ?? 0) + v)
    }
    for (const [f, values] of frameLines) frames[f].lines = [...values].sort((a, b) => b[1] - a[1])

    // A frame's total counts each sample once, even when the function is on the stack several times (recursion).
    const onStack = new Int32Array(frames.length)
    /** @type {number[]} */
    const stack = [0]
    const exit = -1
    /** @type {number[]} */
    const path = []
    while (stack.length > 0) {
      const i = /** @type {number} */ (stack.pop())
      if (i === exit) {
        onStack[nodes[/** @type {number} */ (path.pop())].frame]--
        continue
      }
      const node = nodes[i]
      const frame = frames[node.frame]
      frame.self += node.self
      if (onStack[node.frame] === 0) frame.total += node.total
      onStack[node.frame]++
      path.push(i)
      stack.push(exit)
      for (let c = node.children.length - 1; c >= 0; c--) stack.push(node.children[c])
    }

    const idleFrame = frames.findIndex(f => f.name === IDLE && f.kind === 'v8')
    const idle = idleFrame === -1 ? 0 : frames[idleFrame].self
    /** @type {Record<FrameKind, number>} */
    const byKind = { app: 0, dependency: 0, node: 0, v8: 0 }
    for (const f of frames) if (f.id !== idleFrame) byKind[f.kind] += f.self
    /** @type {ProfileModel} */
    const model = {
      type: this.type,
      unit: this.type === 'cpu' ? 'ms' : 'bytes',
      frames,
      nodes,
      total: KINDS.reduce((s, k) => s + byKind[k], 0),
      idle,
      byKind,
      samples: 0,
      durationMs: 0,
      intervalUs: 0,
      startTime: 0
    }
    if (this.appRoot !== undefined) model.appRoot = this.appRoot
    Object.defineProperty(model, SOURCES, { value: { sources: this.sources, mapper: this.mapper }, enumerable: false })
    return model
  }
}

/**
 * The time each node was on CPU, from the samples and their timestamps: a sample stands for the time until the next
 * one, as Chrome DevTools counts it. Profiles without samples fall back to hit counts at the mean interval.
 * @param {CpuProfile} profile
 * @returns {{ self: Map<number, number>, count: Map<number, number>, interval: number }} ms per node id, samples per
 *   node id, mean interval in µs
 */
function sampleValues (profile) {
  /** @type {Map<number, number>} */
  const self = new Map()
  /** @type {Map<number, number>} */
  const count = new Map()
  const span = profile.endTime - profile.startTime
  const { samples, timeDeltas } = profile
  if (samples && samples.length > 0) {
    const n = samples.length
    const interval = span > 0 ? span / n : 1000
    /** @type {number[]} */
    const times = new Array(n)
    let t = profile.startTime
    for (let i = 0; i < n; i++) {
      t += timeDeltas ? timeDeltas[i] : interval
      times[i] = t
    }
    for (let i = 0; i < n; i++) {
      let dt = i + 1 < n ? times[i + 1] - times[i] : profile.endTime - times[i]
      // Out-of-order timestamps must not make negative times; the last sample has no successor to measure to.
      if (!(dt >= 0)) dt = i + 1 < n ? 0 : interval
      const id = samples[i]
      self.set(id, (self.get(id) ?? 0) + dt / 1000)
      count.set(id, (count.get(id) ?? 0) + 1)
    }
    return { self, count, interval }
  }
  const hits = profile.nodes.reduce((s, node) => s + (node.hitCount ?? 0), 0)
  const interval = hits > 0 && span > 0 ? span / hits : 1000
  for (const node of profile.nodes) {
    if (!node.hitCount) continue
    self.set(node.id, node.hitCount * interval / 1000)
    count.set(node.id, node.hitCount)
  }
  return { self, count, interval }
}
