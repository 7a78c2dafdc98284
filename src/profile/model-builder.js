// The call tree as it is built: a frame for each function on first sight (named, placed through source maps,
// classified), nodes added profile by profile, per-line values kept to the function's own lines, then totals added
// up. model.js reads each kind of profile into it.
import { classifyFrame, fileOfUrl, KINDS } from './classify.js'
import { functionSource } from './function-source.js'
import { functionLabel } from './function-labels.js'
import { scriptIndex } from './script-index.js'
import { SourceCache } from './sources.js'

/** @typedef {import('./model.js').ProfileFrame} ProfileFrame */
/** @typedef {import('./model.js').ProfileNode} ProfileNode */
/** @typedef {import('./model.js').ProfileModel} ProfileModel */
/** @typedef {import('./classify.js').FrameKind} FrameKind */
/** @typedef {import('./cpuprofile.js').CallFrame} CallFrame */

// Where culprits find the scripts again; kept off the enumerable model so it stays plain data.
export const SOURCES = Symbol('hotpath.profile.sources')

const IDLE = '(idle)'

export class ModelBuilder {
  /**
   * @param {'cpu' | 'heap'} type
   * @param {import('./model.js').ModelOptions} opts
   */
  constructor (type, opts) {
    this.type = type
    this.appRoot = opts.appRoot
    this.sources = opts.readSources === false ? new SourceCache(false) : opts.sources ?? new SourceCache()
    this.mapper = opts.sourceMaps === false ? null : this.sources.mapper()
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
    } else if (this.mapper && file.startsWith('/') && line > 0 && (this.mapper.checkFits(file, line, cf.columnNumber), this.mapper.lost(file))) {
      // Compiled in memory, with no map: the position is in code nobody can open, and no line of the file's.
      generated = { file, line, column: cf.columnNumber }
      line = 0
      column = 0
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
      const original = this.mapper.originalLine(frame.generated.file, line)
      if (!original) {
        frame.unplaced = (frame.unplaced ?? 0) + value
        return
      }
      // A generated line that maps into another source is not a line of this function.
      if (original.file !== frame.file) return
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
    // A TypeScript file a later frame proved was not what ran (see SourceMapper.checkFits): its earlier frames' lines,
    // labels and per-line values were read against the wrong text.
    if (this.mapper && this.mapper.misfits.size > 0) {
      for (const frame of frames) {
        if (frame.generated || !this.mapper.misfits.has(frame.file)) continue
        frame.generated = { file: frame.file, line: frame.line, column: frame.column - 1 }
        frame.line = 0
        frame.column = 0
        delete frame.label
      }
      for (const node of this.lineValues.keys()) {
        if (this.mapper.misfits.has(frames[node.frame].file)) this.lineValues.delete(node)
      }
    }
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
