/// <reference lib="dom" />
// The graph's elements, top to bottom: header (title, summary, legend), culprits, toolbar, breadcrumbs, the canvas with
// its tooltip, the table. Made empty here; the other parts fill them and listen to them.
import { el } from './dom.js'
import { summaryText } from './header.js'

/**
 * @param {HTMLElement} container emptied, then filled
 * @param {any} data
 * @param {import('./graph.js').Options} opts
 * @returns {import('./graph.js').Ui}
 */
export function createElements (container, data, opts) {
  container.classList.add('hp-flame')
  container.innerHTML = ''
  const header = el('div', 'hp-head', undefined)
  if (opts.title) header.appendChild(el('h1', 'hp-title', opts.title))
  header.appendChild(el('div', 'hp-summary', summaryText(data)))
  const legend = el('div', 'hp-legend', undefined)
  header.appendChild(legend)
  container.appendChild(header)
  const culpritBox = el('div', 'hp-culprits', undefined)
  if (data.culprits && data.culprits.length) container.appendChild(culpritBox)
  const bar = createToolbar()
  const crumbs = el('div', 'hp-crumbs', '')
  if (opts.toolbar) container.appendChild(bar.element)
  container.appendChild(crumbs)

  const wrap = el('div', 'hp-canvas-wrap', undefined)
  const canvas = /** @type {HTMLCanvasElement} */ (el('canvas', 'hp-canvas', undefined))
  canvas.setAttribute('role', 'img')
  canvas.setAttribute('aria-label', 'flame graph')
  const tip = el('div', 'hp-tip', undefined)
  tip.style.display = 'none'
  wrap.appendChild(canvas)
  wrap.appendChild(tip)
  container.appendChild(wrap)
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'))

  const tableWrap = el('div', 'hp-table-wrap', undefined)
  if (opts.table) container.appendChild(tableWrap)
  const { searchBox, searchInfo, colorSelect, toggles, reset } = bar
  return { container, legend, culpritBox, searchBox, searchInfo, colorSelect, toggles, reset, crumbs, wrap, canvas, tip, tableWrap, ctx }
}

/** The toolbar: search, colour choice, the toggles (added by toolbar.js), reset. */
function createToolbar () {
  /** @type {HTMLInputElement} */
  const searchBox = /** @type {any} */ (el('input', 'hp-search', undefined))
  searchBox.type = 'search'
  searchBox.placeholder = 'Search functions and files (/regex/)'
  searchBox.setAttribute('aria-label', 'search')
  const searchInfo = el('span', 'hp-search-info', '')
  const colorSelect = /** @type {HTMLSelectElement} */ (el('select', 'hp-color', undefined))
  colorSelect.setAttribute('aria-label', 'colour by')
  for (const [value, label] of [['kind', 'colour by kind'], ['heat', 'colour by self time']]) {
    const o = /** @type {HTMLOptionElement} */ (el('option', '', label))
    o.value = value
    colorSelect.appendChild(o)
  }
  const toggles = el('span', 'hp-toggles', undefined)
  const reset = el('button', 'hp-reset', 'Reset zoom')
  const element = el('div', 'hp-toolbar', undefined)
  element.appendChild(searchBox)
  element.appendChild(searchInfo)
  element.appendChild(colorSelect)
  element.appendChild(toggles)
  element.appendChild(reset)
  return { element, searchBox, searchInfo, colorSelect, toggles, reset }
}
