// Reading profiles written by others (`node --cpu-prof`, Chrome DevTools, hotpath itself): the input is untrusted, so
// every field is checked and the shape is normalised before anything walks it. A bad file is one UsageError naming
// what is wrong, never a crash or a hang.
import { stat } from 'node:fs/promises'
import { constants } from 'node:buffer'
import { readJsonFile } from '../read-json.js'
import { UsageError } from '../errors.js'
import { readJsonStream } from './json-stream.js'

/**
 * @typedef {object} CallFrame
 * @property {string} functionName
 * @property {string} url
 * @property {string} scriptId
 * @property {number} lineNumber 0-based, -1 when unknown
 * @property {number} columnNumber 0-based, -1 when unknown
 */

/**
 * @typedef {object} CpuProfileNode
 * @property {number} id
 * @property {CallFrame} callFrame
 * @property {number} [hitCount]
 * @property {number[]} [children]
 * @property {string} [deoptReason]
 * @property {{ line: number, ticks: number }[]} [positionTicks] line is 1-based
 */

/**
 * A V8 CPU profile: the `Profiler.Profile` object of the inspector protocol, i.e. the JSON of a `.cpuprofile` file.
 * @typedef {object} CpuProfile
 * @property {CpuProfileNode[]} nodes
 * @property {number} startTime µs
 * @property {number} endTime µs
 * @property {number[]} [samples] node id of each sample
 * @property {number[]} [timeDeltas] µs since the previous sample (the first: since startTime)
 */

/**
 * @typedef {object} SamplingHeapProfileNode
 * @property {CallFrame} callFrame
 * @property {number} selfSize bytes
 * @property {number} id
 * @property {SamplingHeapProfileNode[]} children
 */

/**
 * A V8 sampling heap profile: `HeapProfiler.SamplingHeapProfile`, the JSON of a `.heapprofile` file.
 * @typedef {object} SamplingHeapProfile
 * @property {SamplingHeapProfileNode} head
 * @property {{ size: number, nodeId: number, ordinal: number }[]} [samples]
 */

// Far beyond any real profile (a minute at 100 µs is 600k samples), small enough to refuse a hostile file quickly.
const MAX_NODES = 5_000_000
const MAX_SAMPLES = 50_000_000
const MAX_DEPTH = 100_000

/**
 * Reads a profile file: a `.cpuprofile` (also wrapped as `{ profile }`) or a `.heapprofile`.
 * @param {string} file
 * @returns {Promise<{ type: 'cpu', profile: CpuProfile } | { type: 'heap', profile: SamplingHeapProfile }>}
 */
export async function readProfileFile (file) {
  const expected = 'a .cpuprofile or .heapprofile'
  let size = 0
  try {
    size = (await stat(file)).size
  } catch {}
  // A file longer than V8's longest string cannot be read as one: it is parsed as it is read. (The hidden
  // HOTPATH_JSON_STREAM_ABOVE=<bytes> lowers the bound, so tests read small files the way big ones are read.)
  const streamAbove = Number(process.env.HOTPATH_JSON_STREAM_ABOVE) || constants.MAX_STRING_LENGTH
  const data = size > streamAbove ? await readJsonStream(file, expected) : await readJsonFile(file, expected)
  return parseProfile(data, file)
}

/**
 * Checks and normalises parsed JSON as a CPU or heap profile.
 * @param {unknown} data
 * @param {string} [name] for messages
 * @returns {{ type: 'cpu', profile: CpuProfile } | { type: 'heap', profile: SamplingHeapProfile }}
 */
export function parseProfile (data, name = 'the profile') {
  const d = /** @type {any} */ (data)
  if (isObject(d) && isObject(d.head)) return { type: 'heap', profile: parseHeapProfile(d, name) }
  return { type: 'cpu', profile: parseCpuProfile(d, name) }
}

/**
 * @param {unknown} data
 * @param {string} [name]
 * @returns {CpuProfile}
 */
export function parseCpuProfile (data, name = 'the profile') {
  const fail = (/** @type {string} */ why) => new UsageError(`${name} is not a valid .cpuprofile: ${why}`)
  let d = /** @type {any} */ (data)
  // Profiler.stop answers { profile }; some tools save that answer as is.
  if (isObject(d) && !Array.isArray(d.nodes) && isObject(d.profile)) d = d.profile
  if (!isObject(d)) throw fail('expected a JSON object')
  if (!Array.isArray(d.nodes)) throw fail('no "nodes" array')
  if (d.nodes.length === 0) throw fail('"nodes" is empty')
  if (d.nodes.length > MAX_NODES) throw fail(`${d.nodes.length} nodes is more than hotpath reads (${MAX_NODES})`)
  const { nodes, byId } = readNodes(d.nodes, fail)
  checkTree(nodes, byId, fail)
  const startTime = isFiniteNumber(d.startTime) ? d.startTime : 0
  const endTime = isFiniteNumber(d.endTime) && d.endTime >= startTime ? d.endTime : startTime
  /** @type {CpuProfile} */
  const profile = { nodes, startTime, endTime }
  if (d.samples !== undefined) readSamples(profile, d, byId, fail)
  return profile
}

/**
 * Each node, checked and copied with only the fields hotpath reads.
 * @param {any[]} raw
 * @param {(why: string) => Error} fail
 * @returns {{ nodes: CpuProfileNode[], byId: Map<number, CpuProfileNode> }}
 */
function readNodes (raw, fail) {
  /** @type {Map<number, CpuProfileNode>} */
  const byId = new Map()
  /** @type {CpuProfileNode[]} */
  const nodes = []
  for (let i = 0; i < raw.length; i++) {
    const n = raw[i]
    if (!isObject(n)) throw fail(`node ${i} is not an object`)
    if (!isInt(n.id)) throw fail(`node ${i} has no integer id`)
    if (byId.has(n.id)) throw fail(`node id ${n.id} appears twice`)
    /** @type {CpuProfileNode} */
    const node = {
      id: n.id,
      callFrame: parseCallFrame(n.callFrame, () => fail(`node ${n.id} has no valid callFrame`)),
      hitCount: isCount(n.hitCount) ? n.hitCount : 0,
      children: []
    }
    if (n.children !== undefined) {
      if (!Array.isArray(n.children) || !n.children.every(isInt)) throw fail(`node ${n.id} has invalid children`)
      node.children = n.children.slice()
    }
    if (typeof n.deoptReason === 'string' && n.deoptReason !== '') node.deoptReason = n.deoptReason
    if (Array.isArray(n.positionTicks)) {
      node.positionTicks = n.positionTicks
        .filter((/** @type {any} */ t) => isObject(t) && isInt(t.line) && t.line > 0 && isCount(t.ticks))
        .map((/** @type {any} */ t) => ({ line: t.line, ticks: t.ticks }))
    }
    byId.set(n.id, node)
    nodes.push(node)
  }
  return { nodes, byId }
}

/**
 * Checks that the nodes form a tree: every child exists and has one parent, and exactly one node has none. Moves the
 * root first (in place).
 * @param {CpuProfileNode[]} nodes
 * @param {Map<number, CpuProfileNode>} byId
 * @param {(why: string) => Error} fail
 */
function checkTree (nodes, byId, fail) {
  /** @type {Set<number>} */
  const hasParent = new Set()
  for (const node of nodes) {
    for (const c of /** @type {number[]} */ (node.children)) {
      if (!byId.has(c)) throw fail(`node ${node.id} lists a child ${c} that does not exist`)
      if (hasParent.has(c) || c === node.id) throw fail(`node ${c} has more than one parent`)
      hasParent.add(c)
    }
  }
  const roots = nodes.filter(n => !hasParent.has(n.id))
  if (roots.length !== 1) throw fail(roots.length === 0 ? 'the nodes form a cycle (no root)' : `${roots.length} root nodes`)
  // Every node must hang from the root; a separate cycle would have no root of its own.
  let reached = 0
  const stack = [{ id: roots[0].id, depth: 0 }]
  while (stack.length > 0) {
    const { id, depth } = /** @type {{ id: number, depth: number }} */ (stack.pop())
    if (depth > MAX_DEPTH) throw fail(`the call tree is deeper than ${MAX_DEPTH}`)
    reached++
    for (const c of /** @type {number[]} */ (/** @type {CpuProfileNode} */ (byId.get(id)).children)) stack.push({ id: c, depth: depth + 1 })
  }
  if (reached !== nodes.length) throw fail(`${nodes.length - reached} nodes are not reachable from the root`)
  // The root must come first: consumers (DevTools, our model) start there.
  if (nodes[0] !== roots[0]) {
    nodes.splice(nodes.indexOf(roots[0]), 1)
    nodes.unshift(roots[0])
  }
}

/**
 * Checks the samples and their time deltas, and adds them to `profile`.
 * @param {CpuProfile} profile
 * @param {any} d the raw profile, with `samples`
 * @param {Map<number, CpuProfileNode>} byId
 * @param {(why: string) => Error} fail
 */
function readSamples (profile, d, byId, fail) {
  if (!Array.isArray(d.samples)) throw fail('"samples" is not an array')
  if (d.samples.length > MAX_SAMPLES) throw fail(`${d.samples.length} samples is more than hotpath reads (${MAX_SAMPLES})`)
  for (let i = 0; i < d.samples.length; i++) {
    if (!byId.has(d.samples[i])) throw fail(`sample ${i} refers to node ${String(d.samples[i]).slice(0, 20)}, which does not exist`)
  }
  profile.samples = d.samples
  if (d.timeDeltas !== undefined) {
    if (!Array.isArray(d.timeDeltas) || d.timeDeltas.length !== d.samples.length || !d.timeDeltas.every(isFiniteNumber)) {
      throw fail('"timeDeltas" must be numbers, one per sample')
    }
    profile.timeDeltas = d.timeDeltas
  }
}

/**
 * @param {unknown} data
 * @param {string} [name]
 * @returns {SamplingHeapProfile}
 */
export function parseHeapProfile (data, name = 'the profile') {
  const fail = (/** @type {string} */ why) => new UsageError(`${name} is not a valid .heapprofile: ${why}`)
  const d = /** @type {any} */ (data)
  if (!isObject(d) || !isObject(d.head)) throw fail('no "head" node')
  let count = 0
  /** @type {Set<any>} */
  const seen = new Set()
  /** @param {any} n @param {number} depth @returns {SamplingHeapProfileNode} */
  const convert = (n, depth) => {
    // Recursion is bounded: the depth check comes before the children are visited.
    if (depth > 10_000) throw fail('the allocation tree is deeper than 10000')
    if (!isObject(n)) throw fail('a node is not an object')
    if (seen.has(n)) throw fail('a node appears twice')
    seen.add(n)
    if (++count > MAX_NODES) throw fail(`more than ${MAX_NODES} nodes`)
    const children = n.children === undefined ? [] : n.children
    if (!Array.isArray(children)) throw fail('a node has invalid children')
    return {
      callFrame: parseCallFrame(n.callFrame, () => fail('a node has no valid callFrame')),
      selfSize: isCount(n.selfSize) ? n.selfSize : 0,
      id: isInt(n.id) ? n.id : 0,
      children: children.map((/** @type {any} */ c) => convert(c, depth + 1))
    }
  }
  /** @type {SamplingHeapProfile} */
  const profile = { head: convert(d.head, 0) }
  if (Array.isArray(d.samples)) {
    profile.samples = d.samples
      .filter((/** @type {any} */ s) => isObject(s) && isCount(s.size) && isInt(s.nodeId))
      .map((/** @type {any} */ s) => ({ size: s.size, nodeId: s.nodeId, ordinal: isFiniteNumber(s.ordinal) ? s.ordinal : 0 }))
  }
  return profile
}

/**
 * @param {any} f
 * @param {() => Error} fail
 * @returns {CallFrame}
 */
function parseCallFrame (f, fail) {
  if (!isObject(f)) throw fail()
  const str = (/** @type {unknown} */ v) => typeof v === 'string' ? v : typeof v === 'number' ? String(v) : ''
  return {
    functionName: str(f.functionName),
    url: str(f.url),
    scriptId: str(f.scriptId) || '0',
    lineNumber: isInt(f.lineNumber) && f.lineNumber >= -1 ? f.lineNumber : -1,
    columnNumber: isInt(f.columnNumber) && f.columnNumber >= -1 ? f.columnNumber : -1
  }
}

/** @param {unknown} v @returns {v is Record<string, any>} */
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v)
/** @param {unknown} v @returns {v is number} */
const isInt = (v) => Number.isSafeInteger(v)
/** @param {unknown} v @returns {v is number} */
const isCount = (v) => Number.isSafeInteger(v) && /** @type {number} */ (v) >= 0
/** @param {unknown} v @returns {v is number} */
const isFiniteNumber = (v) => typeof v === 'number' && Number.isFinite(v)
