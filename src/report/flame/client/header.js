/// <reference lib="dom" />
// Above the graph: the summary line, the legend of kinds with their shares, and the culprits to look at first, each a
// click away from its place in the graph.
/* global document */
import { el } from './dom.js'
import { KIND_LABEL, fmt, pct, shortFile } from './labels.js'
import { zoomToFunction } from './zoom.js'

/** @param {any} data */
export function summaryText (data) {
  const what = data.type === 'heap' ? 'sampled ' + fmt(data.unit, data.total) : fmt(data.unit, data.total) + ' of CPU'
  const parts = [what]
  if (data.type !== 'heap') {
    parts.push(data.samples + ' samples over ' + (data.durationMs / 1000).toFixed(1) + ' s')
    if (data.idle > 0) parts.push('idle ' + fmt(data.unit, data.idle) + ' (not shown)')
  }
  return parts.join(' · ')
}

/** @param {import('./graph.js').Graph} g */
export function renderLegend (g) {
  const { legend } = g.ui
  legend.textContent = ''
  for (const kind of ['app', 'dependency', 'node', 'v8']) {
    const item = el('span', 'hp-legend-item', undefined)
    const sw = el('span', 'hp-swatch hp-swatch-' + kind, undefined)
    item.appendChild(sw)
    item.appendChild(document.createTextNode(KIND_LABEL[/** @type {'app'} */ (kind)] + ' ' + pct(g.data.byKind[kind] / (g.data.total || 1))))
    legend.appendChild(item)
  }
}

/** @param {import('./graph.js').Graph} g */
export function renderCulprits (g) {
  const { culpritBox } = g.ui
  const { data } = g
  culpritBox.textContent = ''
  culpritBox.appendChild(el('h2', 'hp-culprits-title', data.type === 'heap' ? 'Where the memory goes' : 'What to look at first'))
  const list = el('ol', 'hp-culprit-list', undefined)
  for (const c of data.culprits || []) {
    const li = el('li', 'hp-culprit', undefined)
    li.appendChild(el('span', 'hp-culprit-share', pct(c.share)))
    const name = el('span', 'hp-culprit-fn', undefined)
    name.appendChild(el('span', 'hp-swatch hp-swatch-' + c.kind, undefined))
    name.appendChild(document.createTextNode(c.label || c.function))
    li.appendChild(name)
    if (c.file) li.appendChild(el('span', 'hp-culprit-where', shortFile(c.file) + ':' + c.line))
    if (c.calls.length) {
      li.appendChild(el('span', 'hp-culprit-calls', '→ ' + c.calls.map((/** @type {any} */ x) => x.function + ' (' + shortFile(x.file) + ') ' + pct(x.share)).join(', ')))
    }
    li.title = (c.file ? c.file + ':' + c.line : '') + ' — click to zoom'
    // A function V8 ran inlined has its bytes in the caller's box: that is where the click goes.
    li.addEventListener('click', () => zoomToFunction(g, c.zoom || { function: c.function, file: c.file, line: c.functionLine }))
    list.appendChild(li)
  }
  culpritBox.appendChild(list)
}
