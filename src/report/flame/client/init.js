/// <reference lib="dom" />
// The flame graph component's entry point: window.HotpathFlame = { init(container, data, options) } → a controller
// (docs/flame.md and controller.js). The parts are joined into one inline script by assets.js: no imports in the
// page, no build step, no network. The same thing one layer up, for the report page that embeds the component:
// src/report/html/client/init.js.
/* global window, document, performance */
import { controller } from './controller.js'
import { draw } from './draw.js'
import { createElements } from './elements.js'
import { createGraph, rebuild } from './graph.js'
import { renderCulprits, renderLegend } from './header.js'
import { listenPointer } from './pointer.js'
import { addToggles, listenToolbar } from './toolbar.js'

/**
 * @param {HTMLElement} container
 * @param {any} data what flameData() produced
 * @param {{ title?: string, table?: boolean, toolbar?: boolean, tableRows?: number }} [options]
 */
export function init (container, data, options) {
  const opts = Object.assign({ table: true, toolbar: true, tableRows: 40 }, options || {})
  const g = createGraph(data, opts, createElements(container, data, opts))
  addToggles(g)
  listenPointer(g)
  const onKey = listenToolbar(g)
  const { wrap } = g.ui
  let lastWidth = 0
  const observer = new window.ResizeObserver(() => {
    if (wrap.clientWidth !== lastWidth) {
      lastWidth = wrap.clientWidth
      draw(g)
    }
  })

  renderLegend(g)
  renderCulprits(g)
  rebuild(g)
  lastWidth = wrap.clientWidth
  observer.observe(wrap)
  // When the first graph is on screen, for whoever measures how fast the page opens.
  if (performance.mark) performance.mark('hotpath-flame-drawn')

  return controller(g, () => {
    observer.disconnect()
    document.removeEventListener('keydown', onKey)
    container.textContent = ''
  })
}
