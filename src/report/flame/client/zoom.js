/// <reference lib="dom" />
// Zoom and navigation: zooming to a box (click, breadcrumbs, reset) and to the heaviest place a function runs (a
// culprit, a row of the table, or a caller from outside).
import { draw } from './draw.js'
import { applySearch } from './search.js'

/**
 * @param {import('./graph.js').Graph} g
 * @param {number} v a view node; anything else zooms out
 */
export function zoomTo (g, v) {
  g.state.zoom = v >= 0 && v < g.view.count ? v : 0
  draw(g)
}

/**
 * Zooms to the heaviest place a function runs and highlights every other place it runs.
 * @param {import('./graph.js').Graph} g
 * @param {{ function?: string, file?: string, line?: number } | string} target a culprit, or a function name
 * @returns {boolean} whether the function is in the graph
 */
export function zoomToFunction (g, target) {
  const { view, state } = g
  const framesFound = framesOf(g, typeof target === 'string' ? { function: target } : target)
  if (framesFound.size === 0) return false
  let heaviest = -1
  for (let v = 0; v < view.count; v++) {
    if (framesFound.has(view.frame[v]) && (heaviest === -1 || view.total[v] > view.total[heaviest])) heaviest = v
  }
  state.search = null
  g.ui.searchBox.value = ''
  state.focus = framesFound
  applySearch(g)
  if (heaviest === -1) {
    draw(g)
    return false
  }
  zoomTo(g, heaviest)
  g.ui.wrap.scrollIntoView({ block: 'nearest' })
  return true
}

/**
 * The frames of a function: by name (V8's, or the one read from the source), in a file.
 * @param {import('./graph.js').Graph} g
 * @param {{ function?: string, file?: string, line?: number }} want
 */
function framesOf (g, want) {
  const { F } = g
  /** @type {Set<number>} */
  const framesFound = new Set()
  for (let f = 0; f < F.name.length; f++) {
    if (want.function !== undefined && F.name[f] !== want.function && g.shownName(f) !== want.function) continue
    if (want.file !== undefined && want.file !== '' && g.data.files[F.file[f]] !== want.file) continue
    framesFound.add(f)
  }
  // A line inside the function narrows same-named functions of one file to the one starting at or before it.
  if (want.line !== undefined && framesFound.size > 1) {
    let best = -1
    for (const f of framesFound) if (F.line[f] <= /** @type {number} */ (want.line) && (best === -1 || F.line[f] > F.line[best])) best = f
    if (best !== -1) {
      framesFound.clear()
      framesFound.add(best)
    }
  }
  return framesFound
}
