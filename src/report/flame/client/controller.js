/// <reference lib="dom" />
// What a page, a report or a test drives the graph through (docs/flame.md, From code): zoom to a function, search, reset,
// options, what is drawn, where a function is, and removal.
/* global window */
import { draw, ROW } from './draw.js'
import { rebuild } from './graph.js'
import { setSearch } from './search.js'
import { zoomTo, zoomToFunction } from './zoom.js'

/**
 * @param {import('./graph.js').Graph} g
 * @param {() => void} destroy stops what listens outside the graph and empties its container
 */
export function controller (g, destroy) {
  const { state } = g
  const { searchBox, searchInfo, colorSelect, toggles } = g.ui
  return {
    /** @param {{ function?: string, file?: string, line?: number } | string} target */
    zoomToFunction (target) { return zoomToFunction(g, target) },
    /** @param {string} text */
    search (text) {
      searchBox.value = text
      setSearch(g, text)
      return searchInfo.textContent
    },
    reset () { zoomTo(g, 0) },
    /** @param {{ colorBy?: 'kind' | 'heat', hide?: { node?: boolean, v8?: boolean, dependency?: boolean }, split?: boolean }} o */
    setOptions (o) {
      if (o.colorBy) { state.colorBy = o.colorBy; colorSelect.value = o.colorBy }
      if (o.hide) Object.assign(state.hide, o.hide)
      if (o.split !== undefined) state.split = o.split
      for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (toggles.querySelectorAll('input'))) {
        const name = input.name.replace('show-', '')
        input.checked = name === 'split' ? state.split : !state.hide[name]
      }
      if (o.hide || o.split !== undefined) rebuild(g)
      else draw(g)
    },
    /** What is drawn, for tests and for a report that wants to describe it. */
    stats () { return drawnStats(g) },
    /**
     * Where the widest box of a function is drawn, in page coordinates (its centre), or null.
     * @param {string} name
     */
    locate (name) { return whereDrawn(g, name) },
    destroy
  }
}

/** @param {import('./graph.js').Graph} g */
function drawnStats (g) {
  const { view, state, F } = g
  let boxes = 0
  let highlighted = 0
  /** @type {Record<string, number>} */
  const kindsDrawn = { app: 0, dependency: 0, node: 0, v8: 0 }
  let notOptimised = 0
  for (const row of g.drawn) {
    boxes += row.length / 3
    for (let i = 0; i < row.length; i += 3) {
      if (g.frameMatch[view.frame[row[i]]]) highlighted++
      if (view.deopt[row[i]] >= 0) notOptimised++
      if (row[i] !== 0) kindsDrawn[g.frameKind[view.frame[row[i]]]]++
    }
  }
  return { boxes, highlighted, notOptimised, kinds: kindsDrawn, zoomed: state.zoom === 0 ? null : F.name[view.frame[state.zoom]], viewNodes: view.count, maxDepth: g.maxDepth }
}

/**
 * @param {import('./graph.js').Graph} g
 * @param {string} name
 */
function whereDrawn (g, name) {
  const { view, F } = g
  let best = null
  for (let d = 0; d < g.drawn.length; d++) {
    const row = g.drawn[d]
    for (let i = 0; i < row.length; i += 3) {
      if ((F.name[view.frame[row[i]]] === name || g.shownName(view.frame[row[i]]) === name) && (!best || row[i + 2] > best.w)) best = { d, x: row[i + 1], w: row[i + 2] }
    }
  }
  if (!best) return null
  const r = g.ui.canvas.getBoundingClientRect()
  return { x: r.left + window.scrollX + best.x + best.w / 2, y: r.top + window.scrollY + best.d * ROW + ROW / 2 }
}
