/// <reference lib="dom" />
// One flame graph's shared state: its data and options, what the reader chose (hidden kinds, split, colours, search,
// zoom), the view tree built from them, and its elements. Every part of the graph takes it as `g`.
import { buildView } from './view-tree.js'
import { applySearch } from './search.js'
import { renderTable } from './table.js'
import { draw } from './draw.js'

/**
 * @typedef {object} Options
 * @property {string} [title]
 * @property {boolean} table the table of top functions under the graph
 * @property {boolean} toolbar search, colours, toggles, reset
 * @property {number} tableRows
 */

/**
 * @typedef {object} Ui the graph's elements (see elements.js)
 * @property {HTMLElement} container
 * @property {HTMLElement} legend
 * @property {HTMLElement} culpritBox
 * @property {HTMLInputElement} searchBox
 * @property {HTMLElement} searchInfo
 * @property {HTMLSelectElement} colorSelect
 * @property {HTMLElement} toggles
 * @property {HTMLElement} reset
 * @property {HTMLElement} crumbs
 * @property {HTMLElement} wrap
 * @property {HTMLCanvasElement} canvas
 * @property {HTMLElement} tip
 * @property {HTMLElement} tableWrap
 * @property {CanvasRenderingContext2D} ctx
 */

/**
 * @typedef {object} State what the reader chose
 * @property {Record<string, boolean>} hide kinds folded into their callers
 * @property {boolean} split not-optimised calls apart
 * @property {string} colorBy 'kind' or 'heat'
 * @property {RegExp | null} search
 * @property {Set<number> | null} focus frames to highlight (a function focused from outside)
 * @property {number} zoom the view node zoomed to
 * @property {number} hover the view node under the pointer, or -1
 */

/**
 * @typedef {object} Graph
 * @property {any} data what flameData() produced
 * @property {any} F data.frames
 * @property {string} unit data.unit
 * @property {Options} opts
 * @property {string[]} frameKind each frame's kind
 * @property {(f: number) => string} shownName
 * @property {State} state
 * @property {Float64Array} frameSelf each frame's self, over the whole profile (heat colours)
 * @property {number} maxFrameSelf
 * @property {import('./view-tree.js').View} view
 * @property {number} maxDepth
 * @property {number[][]} drawn rows of [node, x, width] drawn, for hit testing
 * @property {Uint8Array} frameMatch 1 for a frame the search or focus matches
 * @property {Map<string, number>} widthCache text widths measured
 * @property {Ui} ui
 */

/**
 * @param {any} data
 * @param {Options} opts
 * @param {Ui} ui
 * @returns {Graph}
 */
export function createGraph (data, opts, ui) {
  const F = data.frames
  // Per-frame totals for the table and heat colours: self added up, total counted once per path (no recursion).
  const frameSelf = new Float64Array(F.name.length)
  for (let i = 0; i < data.nodes.frame.length; i++) frameSelf[data.nodes.frame[i]] += data.nodes.self[i]
  let maxFrameSelf = 1
  for (let f = 0; f < frameSelf.length; f++) if (frameSelf[f] > maxFrameSelf) maxFrameSelf = frameSelf[f]
  return {
    data,
    F,
    unit: data.unit,
    opts,
    frameKind: F.kind.map((/** @type {number} */ k) => data.kinds[k]),
    // The name to show: a label read from the source for an anonymous function (data from older versions has none).
    shownName: (f) => (F.label && F.label[f]) || F.name[f],
    state: {
      hide: { node: false, v8: false, dependency: false, app: false },
      split: false,
      colorBy: 'kind',
      search: null,
      focus: null,
      zoom: 0,
      hover: -1
    },
    frameSelf,
    maxFrameSelf,
    view: /** @type {any} */ (null),
    maxDepth: 0,
    drawn: [],
    frameMatch: new Uint8Array(F.name.length),
    widthCache: new Map(),
    ui
  }
}

/**
 * Builds the view tree again after a toggle, and everything drawn from it.
 * @param {Graph} g
 */
export function rebuild (g) {
  const built = buildView(g.data, g.frameKind, g.state.hide, g.state.split)
  g.view = built.view
  g.maxDepth = built.maxDepth
  // Keep the zoom on the same function path if it survived, else start over.
  g.state.zoom = 0
  g.state.hover = -1
  applySearch(g)
  renderTable(g)
  draw(g)
}
