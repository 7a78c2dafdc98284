// Collapsed stacks, the text format of Brendan Gregg's flamegraph.pl (and speedscope, inferno, many others): one line
// per distinct stack, `frame;frame;frame count`, root first.
import { buildProfile } from './model.js'

/**
 * @param {import('./cpuprofile.js').CpuProfile | import('./model.js').LabelledProfile[]} cpuProfile
 * @param {import('./model.js').ModelOptions} [opts]
 * @returns {string} one line per stack; counts are samples
 */
export function toCollapsed (cpuProfile, opts = {}) {
  return modelToCollapsed(buildProfile(cpuProfile, opts))
}

/**
 * @param {import('./model.js').ProfileModel} model
 * @returns {string} counts are samples (CPU) or bytes (heap)
 */
export function modelToCollapsed (model) {
  return [...collapsedChunks(model)].join('')
}

// Lines are handed out in chunks of about this many characters, for a file stream.
const CHUNK = 1 << 20

/**
 * The collapsed stacks in chunks of whole lines, for writing to a file: the whole text is the sum of every stack's
 * depth (a recursion 5,000 calls deep is 12 million frames of text) and may be longer than V8's longest string (~512 MB).
 * Each line is built from the node's ancestors when it is due, so no stack text is kept beyond its chunk.
 * @param {import('./model.js').ProfileModel} model
 * @returns {Generator<string>} counts are samples (CPU) or bytes (heap)
 */
export function * collapsedChunks (model) {
  const { nodes, frames } = model
  /** @type {(string | undefined)[]} built when first needed: most frames never have samples of their own */
  const names = new Array(frames.length)
  /** @type {string[]} */
  let lines = []
  let length = 0
  /** @type {string[]} */
  const stack = []
  for (let i = 1; i < nodes.length; i++) {
    const node = nodes[i]
    const count = model.unit === 'ms' ? node.samples : Math.round(node.self)
    if (count <= 0) continue
    stack.length = 0
    for (let n = i; n > 0; n = nodes[n].parent) {
      const f = nodes[n].frame
      stack.push(names[f] ??= frameName(frames[f]))
    }
    const line = `${stack.reverse().join(';')} ${count}\n`
    lines.push(line)
    length += line.length
    if (length >= CHUNK) {
      yield lines.join('')
      lines = []
      length = 0
    }
  }
  if (lines.length > 0) yield lines.join('')
}

/** @param {import('./model.js').ProfileFrame} f */
function frameName (f) {
  const where = f.file === '' ? '' : ` (${f.file}${f.line > 0 ? `:${f.line}` : ''})`
  // `;` separates frames and the last space separates the count: neither may appear inside a name.
  return `${f.name}${where}`.replace(/;/g, ':').replace(/[\r\n]/g, ' ')
}
