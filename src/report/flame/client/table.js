/// <reference lib="dom" />
// The table under the graph: the top functions by self time (or bytes) in the current view, a click on a row zooms
// to where the function runs.
/* global document */
import { el } from './dom.js'
import { fmt, pct, shortFile } from './labels.js'
import { zoomToFunction } from './zoom.js'

/** @param {import('./graph.js').Graph} g */
export function renderTable (g) {
  const { opts, data, view, F } = g
  const { tableWrap } = g.ui
  if (!opts.table) return
  tableWrap.textContent = ''
  tableWrap.appendChild(el('h2', 'hp-table-title', 'Top functions by self ' + (data.type === 'heap' ? 'bytes' : 'time')))
  const table = el('table', 'hp-table', undefined)
  const head = el('tr', '', undefined)
  for (const h of ['Function', 'Where', 'Kind', 'Self', 'Self %', 'Total %']) head.appendChild(el('th', '', h))
  table.appendChild(head)
  const { selfNow, frameTotal } = functionTotals(view, F.name.length)
  const order = []
  for (let f = 0; f < F.name.length; f++) if (selfNow[f] > 0 && view.frame[0] !== f) order.push(f)
  order.sort((a, b) => selfNow[b] - selfNow[a])
  const total = view.total[0] || 1
  for (const f of order.slice(0, opts.tableRows)) {
    const tr = el('tr', 'hp-row', undefined)
    tr.dataset.frame = String(f)
    const file = data.files[F.file[f]]
    const name = el('td', 'hp-fn', undefined)
    name.appendChild(el('span', 'hp-swatch hp-swatch-' + g.frameKind[f], undefined))
    name.appendChild(document.createTextNode(g.shownName(f)))
    tr.appendChild(name)
    const where = el('td', 'hp-where', file ? shortFile(file) + (F.line[f] > 0 ? ':' + F.line[f] : '') : '')
    where.title = file
    tr.appendChild(where)
    tr.appendChild(el('td', '', g.frameKind[f]))
    tr.appendChild(el('td', 'hp-num', fmt(g.unit, selfNow[f])))
    tr.appendChild(el('td', 'hp-num', pct(selfNow[f] / total)))
    tr.appendChild(el('td', 'hp-num', pct(frameTotal[f] / total)))
    tr.addEventListener('click', () => zoomToFunction(g, { function: F.name[f], file: data.files[F.file[f]], line: F.line[f] }))
    table.appendChild(tr)
  }
  tableWrap.appendChild(table)
}

/**
 * Totals per function in the current view, each sample once.
 * @param {import('./view-tree.js').View} view
 * @param {number} frameCount
 */
function functionTotals (view, frameCount) {
  const frameTotal = new Float64Array(frameCount)
  const selfNow = new Float64Array(frameCount)
  const onPath = new Int32Array(frameCount)
  const stack = [0]
  const exit = -1
  /** @type {number[]} */
  const path = []
  while (stack.length) {
    const v = /** @type {number} */ (stack.pop())
    if (v === exit) {
      onPath[view.frame[/** @type {number} */ (path.pop())]]--
      continue
    }
    const f = view.frame[v]
    selfNow[f] += view.self[v]
    if (onPath[f] === 0) frameTotal[f] += view.total[v]
    onPath[f]++
    path.push(v)
    stack.push(exit)
    for (const c of view.children[v]) stack.push(c)
  }
  return { selfNow, frameTotal }
}
