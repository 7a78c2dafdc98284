// The flame graph's data: the model's call tree in columns of numbers (parents before children) and a frame table,
// compact enough to inline a busy minute of profile in a page that opens in well under a second.
import { KINDS } from '../../profile/classify.js'
import { findCulprits } from '../../profile/find-culprits.js'

/**
 * @typedef {object} FlameData
 * @property {1} version
 * @property {'cpu' | 'heap'} type
 * @property {'us' | 'bytes'} unit of every value below
 * @property {number} total all values except idle
 * @property {number} idle
 * @property {Record<import('../../profile/classify.js').FrameKind, number>} byKind
 * @property {number} samples
 * @property {number} durationMs
 * @property {string[]} kinds the kind names, indexed by `frames.kind`
 * @property {string[]} files indexed by `frames.file`
 * @property {{ name: string[], label: string[], file: number[], line: number[], kind: number[], hotLines: number[][] }} frames
 *   label: the name read from the source for an anonymous function, '' when none (see ProfileFrame.label); hotLines:
 *   `[line, value, line, value, …]` of each frame's hottest lines
 * @property {{ frame: number[], parent: number[], self: number[], deopt: number[] }} nodes node 0 is the root; deopt
 *   indexes `deopts`, -1 when none
 * @property {string[]} deopts
 * @property {FlameCulprit[]} culprits the functions to blame, most first (shown above the graph; clicking one zooms)
 */

/**
 * @typedef {object} FlameCulprit
 * @property {string} function
 * @property {string} [label]
 * @property {string} file
 * @property {number} line the hottest line
 * @property {number} functionLine
 * @property {string} kind
 * @property {number} share
 * @property {{ function: string, file: string, share: number }[]} calls
 * @property {{ function: string, file: string, line: number }} [zoom] where a click on it zooms when that is not the
 *   function itself: the caller V8 ran it inlined in and charged, when that is most of its share (heap profiles)
 */

const HOT_LINES = 5

/**
 * @param {import('../../profile/model.js').ProfileModel} model
 * @param {{ culprits?: import('../../profile/find-culprits.js').Culprit[] }} [opts] culprits: as found by findCulprits
 *   (default: the top 5 of this model)
 * @returns {FlameData}
 */
export function flameData (model, opts = {}) {
  const culprits = (opts.culprits ?? findCulprits(model, { limit: 5 })).map(c => ({
    function: c.function,
    ...(c.label ? { label: c.label } : {}),
    file: c.file,
    line: c.line,
    functionLine: c.functionLine,
    kind: c.kind,
    share: c.share,
    calls: c.calls.filter(x => x.share >= c.share * 0.1).slice(0, 3).map(x => ({ function: x.function, file: x.file, share: x.share })),
    ...zoomOf(c)
  }))
  const scale = model.unit === 'ms' ? 1000 : 1
  const isIdle = (/** @type {import('../../profile/model.js').ProfileFrame} */ f) => f.kind === 'v8' && f.name === '(idle)'
  /** @type {Map<string, number>} */
  const fileIndex = new Map()
  const files = /** @type {string[]} */ ([])
  const frames = { name: /** @type {string[]} */ ([]), label: /** @type {string[]} */ ([]), file: /** @type {number[]} */ ([]), line: /** @type {number[]} */ ([]), kind: /** @type {number[]} */ ([]), hotLines: /** @type {number[][]} */ ([]) }
  for (const f of model.frames) {
    let fi = fileIndex.get(f.file)
    if (fi === undefined) {
      fi = files.length
      files.push(f.file)
      fileIndex.set(f.file, fi)
    }
    frames.name.push(f.name)
    frames.label.push(f.label ?? '')
    frames.file.push(fi)
    frames.line.push(f.line)
    frames.kind.push(KINDS.indexOf(f.kind))
    frames.hotLines.push(f.lines.slice(0, HOT_LINES).flatMap(([line, v]) => [line, Math.round(v * scale)]))
  }

  // Idle time is not work: it is left out of the graph (its total is in the header). So are nodes without samples.
  const nodes = { frame: /** @type {number[]} */ ([]), parent: /** @type {number[]} */ ([]), self: /** @type {number[]} */ ([]), deopt: /** @type {number[]} */ ([]) }
  /** @type {Map<string, number>} */
  const deoptIndex = new Map()
  const deopts = /** @type {string[]} */ ([])
  const newIndex = new Int32Array(model.nodes.length).fill(-1)
  for (const node of model.nodes) {
    if (node.id !== 0 && (node.total <= 0 || isIdle(model.frames[node.frame]))) continue
    const parent = node.parent === -1 ? -1 : newIndex[node.parent]
    if (node.parent !== -1 && parent === -1) continue
    newIndex[node.id] = nodes.frame.length
    nodes.frame.push(node.frame)
    nodes.parent.push(parent)
    nodes.self.push(Math.round(node.self * scale))
    let d = -1
    if (node.deopt) {
      d = deoptIndex.get(node.deopt) ?? -1
      if (d === -1) {
        d = deopts.length
        deopts.push(node.deopt)
        deoptIndex.set(node.deopt, d)
      }
    }
    nodes.deopt.push(d)
  }
  return {
    version: 1,
    type: model.type,
    unit: model.unit === 'ms' ? 'us' : 'bytes',
    total: Math.round(model.total * scale),
    idle: Math.round(model.idle * scale),
    byKind: {
      app: Math.round(model.byKind.app * scale),
      dependency: Math.round(model.byKind.dependency * scale),
      node: Math.round(model.byKind.node * scale),
      v8: Math.round(model.byKind.v8 * scale)
    },
    samples: model.samples,
    durationMs: model.durationMs,
    kinds: [...KINDS],
    files,
    frames,
    nodes,
    deopts,
    culprits
  }
}

/**
 * @param {import('../../profile/find-culprits.js').Culprit} c
 * @returns {{ zoom?: FlameCulprit['zoom'] }}
 */
function zoomOf (c) {
  const into = c.callers.find(x => x.inlined)
  if (!into || (c.inlinedShare ?? 0) < c.share / 2) return {}
  return { zoom: { function: into.function, file: into.file, line: into.line } }
}
