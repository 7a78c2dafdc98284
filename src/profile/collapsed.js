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
  const { nodes, frames } = model
  /** @type {string[]} */
  const names = frames.map(f => frameName(f))
  /** @type {string[]} the stack text of each node, built from its parent's */
  const paths = new Array(nodes.length)
  paths[0] = ''
  /** @type {string[]} */
  const lines = []
  for (let i = 1; i < nodes.length; i++) {
    const node = nodes[i]
    paths[i] = node.parent === 0 ? names[node.frame] : `${paths[node.parent]};${names[node.frame]}`
    const count = model.unit === 'ms' ? node.samples : Math.round(node.self)
    if (count > 0) lines.push(`${paths[i]} ${count}`)
  }
  return lines.length > 0 ? lines.join('\n') + '\n' : ''
}

/** @param {import('./model.js').ProfileFrame} f */
function frameName (f) {
  const where = f.file === '' ? '' : ` (${f.file}${f.line > 0 ? `:${f.line}` : ''})`
  // `;` separates frames and the last space separates the count: neither may appear inside a name.
  return `${f.name}${where}`.replace(/;/g, ':').replace(/[\r\n]/g, ' ')
}
