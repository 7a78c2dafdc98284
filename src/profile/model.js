// The call-tree model every consumer of a profile works from (culprits, flame graph, formats): nodes with self and
// total values, functions (frames) aggregated across the tree, per-line self values from positionTicks, and each
// frame's kind. Built from V8 CPU profiles (values in ms) or sampling heap profiles (values in bytes).
// The model is built by model-builder.js: this module reads each kind of profile into it.
import { parseCpuProfile, parseHeapProfile } from './cpuprofile.js'
import { ModelBuilder } from './model-builder.js'

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
 *   line, 0-based column), when `file` and `line` come from a source map — or are unknown (`line` 0): a loader compiled
 *   the script in memory and left no map
 * @property {number} [unplaced] self value on lines of the script that ran that its source map could not place (one
 *   generated line holding code of several source lines, as whitespace-free output does): in no line of `lines`
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
 * @property {import('./sources.js').SourceCache} [sources] the scripts as they ran, shared by the models of one run:
 *   the code loaders compiled in memory that the probe copied, each map read once and each problem with one said once
 *   (default: the files on disk, for this model alone)
 */

/**
 * A profile of one process or thread, labelled, for models that cover several.
 * @typedef {object} LabelledProfile
 * @property {CpuProfile} profile
 * @property {string} label e.g. `pid 4242` or `pid 4242 worker 1`
 */

export { SOURCES } from './model-builder.js'

/**
 * Builds the model of a V8 CPU profile, or of several (one per process or thread, each under a node named by its
 * label).
 * @param {CpuProfile | LabelledProfile[]} input
 * @param {ModelOptions} [opts]
 * @returns {ProfileModel}
 */
export function buildProfile (input, opts = {}) {
  const list = Array.isArray(input) ? input : [{ profile: input, label: '' }]
  const builder = new ModelBuilder('cpu', opts)
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
  const builder = new ModelBuilder('heap', opts)
  /** @type {import('./cpuprofile.js').CpuProfileNode[]} */
  const flat = []
  // Samples per node where the profile lists them (by the profiler's ids); else one for each node that allocated.
  /** @type {Map<number, number>} */
  const counts = new Map()
  for (const sample of profile.samples ?? []) counts.set(sample.nodeId, (counts.get(sample.nodeId) ?? 0) + 1)
  /** @type {Map<number, { bytes: number, samples: number }>} */
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
    selfById.set(id, { bytes: n.selfSize, samples: counts.size > 0 ? counts.get(n.id) ?? 0 : n.selfSize > 0 ? 1 : 0 })
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i])
  }
  const ids = builder.addTree(flat, 0)
  for (const [id, { bytes, samples }] of selfById) builder.addSelf(/** @type {number} */ (ids.get(id)), bytes, samples)
  const model = builder.finish()
  model.samples = profile.samples?.length ?? 0
  return model
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
