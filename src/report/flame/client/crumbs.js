/// <reference lib="dom" />
// The breadcrumbs above the graph: the path from the root to the zoomed box, each step a button that zooms back to it.
// Drawn with every frame of the graph; the redraw is handed in, so this part imports nothing that draws.
/* global document */
import { el } from './dom.js'

/**
 * @param {import('./graph.js').Graph} g
 * @param {(g: import('./graph.js').Graph) => void} redraw draws the graph at the zoom a crumb picks
 */
export function renderCrumbs (g, redraw) {
  const { crumbs, reset } = g.ui
  const { view, state } = g
  crumbs.textContent = ''
  /** @type {number[]} */
  const path = []
  for (let a = state.zoom; a >= 0; a = view.parent[a]) path.unshift(a)
  path.forEach((v, i) => {
    if (i > 0) crumbs.appendChild(document.createTextNode(' › '))
    const b = el('button', 'hp-crumb', v === 0 ? 'all' : g.shownName(view.frame[v]))
    b.addEventListener('click', () => {
      // A crumb is a box on the path drawn now: always a node of this view.
      state.zoom = v
      redraw(g)
    })
    crumbs.appendChild(b)
  })
  reset.toggleAttribute('disabled', state.zoom === 0)
}
