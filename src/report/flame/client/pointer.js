/// <reference lib="dom" />
// The pointer on the canvas: the box under it outlined, with a tooltip (name, file, kind, total and self, hottest
// lines, why V8 did not optimise it); a click zooms to the box, or out of it when it is already the zoom.
import { el } from './dom.js'
import { draw, ROW } from './draw.js'
import { KIND_LABEL, fmt, pct } from './labels.js'
import { zoomTo } from './zoom.js'

/** @param {import('./graph.js').Graph} g */
export function listenPointer (g) {
  const { canvas, tip } = g.ui
  canvas.addEventListener('mousemove', (e) => {
    const v = nodeAt(g, e)
    if (v !== g.state.hover) {
      g.state.hover = v
      draw(g)
    }
    if (v === -1) {
      tip.style.display = 'none'
      return
    }
    showTip(g, v, e)
  })
  canvas.addEventListener('mouseleave', () => {
    g.state.hover = -1
    tip.style.display = 'none'
    draw(g)
  })
  canvas.addEventListener('click', (e) => {
    const v = nodeAt(g, e)
    if (v !== -1) zoomTo(g, v === g.state.zoom ? Math.max(0, g.view.parent[v]) : v)
  })
}

/**
 * The view node drawn under the pointer, or -1.
 * @param {import('./graph.js').Graph} g
 * @param {MouseEvent} e
 */
function nodeAt (g, e) {
  const r = g.ui.canvas.getBoundingClientRect()
  const x = e.clientX - r.left
  const d = Math.floor((e.clientY - r.top) / ROW)
  const row = g.drawn[d]
  if (!row) return -1
  for (let i = 0; i < row.length; i += 3) if (x >= row[i + 1] && x < row[i + 1] + row[i + 2]) return row[i]
  return -1
}

/**
 * @param {import('./graph.js').Graph} g
 * @param {number} v
 * @param {MouseEvent} e
 */
function showTip (g, v, e) {
  const { view, F, data, unit } = g
  const { tip, wrap } = g.ui
  const f = view.frame[v]
  const file = data.files[F.file[f]]
  const total = view.total[0] || 1
  tip.textContent = ''
  tip.appendChild(el('div', 'hp-tip-name', g.shownName(f)))
  if (g.shownName(f) !== F.name[f]) tip.appendChild(el('div', 'hp-tip-file', F.name[f] + ' to V8; named from its source'))
  if (file) tip.appendChild(el('div', 'hp-tip-file', file + (F.line[f] > 0 ? ':' + F.line[f] : '')))
  tip.appendChild(el('div', '', KIND_LABEL[/** @type {'app'} */ (g.frameKind[f])]))
  tip.appendChild(el('div', '', 'total ' + fmt(unit, view.total[v]) + ' (' + pct(view.total[v] / total) + ') · self ' + fmt(unit, view.self[v]) + ' (' + pct(view.self[v] / total) + ')'))
  const hot = F.hotLines[f]
  if (hot && hot.length) {
    const parts = []
    for (let i = 0; i < hot.length; i += 2) parts.push('line ' + hot[i] + ': ' + pct(hot[i + 1] / total))
    tip.appendChild(el('div', 'hp-tip-lines', 'hottest lines — ' + parts.join(', ')))
  }
  if (view.deopt[v] >= 0) tip.appendChild(el('div', 'hp-tip-deopt', 'not optimised: ' + data.deopts[view.deopt[v]]))
  tip.style.display = 'block'
  const r = wrap.getBoundingClientRect()
  const left = Math.min(e.clientX - r.left + 14, r.width - tip.offsetWidth - 4)
  tip.style.left = Math.max(0, left) + 'px'
  tip.style.top = (e.clientY - r.top + 16) + 'px'
}
