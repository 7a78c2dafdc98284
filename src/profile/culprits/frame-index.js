// Where each frame's function is in the script that ran, and the frames culprit finding adds: functions V8 ran only
// inlined, or that come from another profile of the same code, have no frame in the model and get one here.
import { functionSource } from '../function-source.js'
import { classifyFrame } from '../classify.js'

/** @typedef {import('../model.js').ProfileFrame} ProfileFrame */
/** @typedef {{ file: string, line: number, column: number }} ScriptPosition 1-based line, 0-based column */

/**
 * The model's frames by where their function is in the script that ran, and the frames of functions the model lacks
 * (V8 ran them only inlined, or they come from another profile of the same code), numbered after the model's own.
 */
export class FrameIndex {
  /**
   * @param {import('../model.js').ProfileModel} model
   * @param {import('../source-maps.js').SourceMapper | null} mapper
   */
  constructor (model, mapper) {
    this.model = model
    this.mapper = mapper
    /** @type {ProfileFrame[]} */
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
   * @param {ScriptPosition} where
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
   * @param {ProfileFrame} other
   */
  forFrame (other) {
    const where = scriptOf(other)
    const id = this.find(where)
    if (id !== undefined) return id
    return this.add({ ...other, id: 0, self: 0, total: 0, lines: [] }, where)
  }

  /**
   * The frame of a function found in the source.
   * @param {import('../inlined.js').InlinedSite} site
   */
  forDeclaration (site) {
    const { declaration: d } = site
    const where = { file: site.file, line: d.line, column: d.column }
    const id = this.find(where)
    if (id !== undefined) return id
    const original = this.mapper?.original(site.file, d.line, d.column) ?? null
    const file = original ? original.file : site.file
    /** @type {ProfileFrame} */
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
   * @param {ProfileFrame} frame
   * @param {ScriptPosition} where
   */
  add (frame, where) {
    frame.id = this.model.frames.length + this.extra.length
    this.extra.push(frame)
    this.positions().set(positionKey(where), frame.id)
    return frame.id
  }
}

/** @param {ScriptPosition} where */
function positionKey (where) {
  return `${where.file}\0${where.line}\0${where.column}`
}

/**
 * Where a frame's function is in the script that ran.
 * @param {ProfileFrame} frame
 * @returns {ScriptPosition}
 */
export function scriptOf (frame) {
  return frame.generated ?? { file: frame.file, line: frame.line, column: frame.column - 1 }
}

/**
 * A line found in the script that ran, as a line of the frame's own file (through its source map when it has one).
 * With the column of what was found there, the map places it exactly; a line alone maps only when all its code comes
 * from one line of the source (see SourceMapper.originalLine).
 * @param {ProfileFrame} frame
 * @param {number | undefined} line
 * @param {import('../source-maps.js').SourceMapper | null} mapper
 * @param {number} [column] 0-based, in the script that ran
 * @returns {number | undefined}
 */
export function originalLine (frame, line, mapper, column = -1) {
  if (line === undefined || !frame.generated) return line
  const mapped = column >= 0 ? mapper?.original(frame.generated.file, line, column) : mapper?.originalLine(frame.generated.file, line)
  return mapped && mapped.file === frame.file ? mapped.line : undefined
}

/**
 * The source of a frame's function in the script that ran (generated code, when source-mapped).
 * @param {ProfileFrame} frame
 * @param {import('../sources.js').SourceCache} sources
 */
export function readFunction (frame, sources) {
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
