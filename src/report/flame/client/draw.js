/// <reference lib="dom" />
// The flame graph in the browser: one canvas, drawn from columns of numbers, so a busy minute of profile (tens of
// thousands of nodes) draws in milliseconds where an SVG of as many elements would freeze the page. This part paints
// the boxes of the current zoom, with their labels, and records where each went for the pointer.
/* global window, getComputedStyle */
import { colorOf } from './colors.js'
import { fmt, shortFile } from './labels.js'
import { renderCrumbs } from './crumbs.js'

/** px: the height of a row of boxes */
export const ROW = 18

/** @param {import('./graph.js').Graph} g */
export function draw (g) {
  const { view, ui, state } = g
  const { canvas, ctx } = ui
  const width = Math.max(200, ui.wrap.clientWidth || 800)
  const z = state.zoom
  const x0 = view.x[z]
  const w0 = view.total[z] || 1
  const scale = width / w0
  // Only as deep as something wide enough to see goes.
  let depthNeeded = view.depth[z]
  const stack = [z]
  while (stack.length) {
    const v = /** @type {number} */ (stack.pop())
    if (view.depth[v] > depthNeeded) depthNeeded = view.depth[v]
    for (const c of view.children[v]) if (view.total[c] * scale >= 1) stack.push(c)
  }
  const height = (depthNeeded + 1) * ROW + 1
  const dpr = window.devicePixelRatio || 1
  canvas.style.width = width + 'px'
  canvas.style.height = height + 'px'
  canvas.width = Math.round(width * dpr)
  canvas.height = Math.round(height * dpr)
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0)
  ctx.clearRect(0, 0, width, height)
  ctx.font = '12px ' + (getComputedStyle(ui.container).fontFamily || 'sans-serif')
  ctx.textBaseline = 'middle'
  g.drawn = []
  for (let d = 0; d <= depthNeeded; d++) g.drawn.push([])
  // The zoomed node's ancestors span the whole width, as context.
  for (let a = view.parent[z]; a >= 0; a = view.parent[a]) box(g, a, 0, width, true)
  const todo = [z]
  while (todo.length) {
    const v = /** @type {number} */ (todo.pop())
    const px = (view.x[v] - x0) * scale
    const pw = view.total[v] * scale
    box(g, v, px, pw, false)
    // Slivers under a pixel are not drawn: a flame graph of a busy minute has thousands, and none can be seen.
    for (const c of view.children[v]) if (view.total[c] * scale >= 1) todo.push(c)
  }
  renderCrumbs(g, draw)
}

/**
 * @param {import('./graph.js').Graph} g
 * @param {number} v
 * @param {number} px
 * @param {number} pw
 * @param {boolean} context an ancestor of the zoomed node
 */
function box (g, v, px, pw, context) {
  const { view, state } = g
  const ctx = g.ui.ctx
  const d = view.depth[v]
  const y = d * ROW
  const f = view.frame[v]
  const matched = g.frameMatch[f] === 1
  const dim = (state.search || state.focus) && !matched
  ctx.fillStyle = dim ? '#e4e4e4' : colorOf(g, v)
  ctx.globalAlpha = context ? 0.55 : 1
  ctx.fillRect(px, y, Math.max(pw - 0.5, 0.5), ROW - 1)
  if (view.deopt[v] >= 0) {
    // Not optimised: hatched, so split variants stand apart at a glance.
    ctx.strokeStyle = 'rgba(0,0,0,0.35)'
    ctx.beginPath()
    for (let hx = px - ROW; hx < px + pw; hx += 6) {
      ctx.moveTo(Math.max(px, hx), y + Math.min(ROW - 1, Math.max(0, px - hx)))
      ctx.lineTo(Math.min(px + pw, hx + ROW - 1), y + ROW - 1 - Math.max(0, hx + ROW - 1 - (px + pw)))
    }
    ctx.stroke()
  }
  if (v === state.hover) {
    ctx.strokeStyle = '#000'
    ctx.lineWidth = 1
    ctx.strokeRect(px + 0.5, y + 0.5, Math.max(pw - 1.5, 0.5), ROW - 2)
  }
  ctx.globalAlpha = 1
  if (pw > 28) {
    ctx.fillStyle = dim ? '#888' : '#111'
    const label = fit(g, labelOf(g, v), pw - 6)
    if (label) ctx.fillText(label, px + 3, y + ROW / 2)
  }
  g.drawn[d].push(v, px, pw)
}

/**
 * @param {import('./graph.js').Graph} g
 * @param {number} v
 */
function labelOf (g, v) {
  const { view, F } = g
  const f = view.frame[v]
  if (v === 0) return 'all: ' + fmt(g.unit, view.total[0])
  const file = g.data.files[F.file[f]]
  let label = g.shownName(f)
  if (view.deopt[v] >= 0) label += ' [not optimised]'
  if (file) label += '  ' + shortFile(file) + (F.line[f] > 0 ? ':' + F.line[f] : '')
  return label
}

/**
 * The label cut to fit, with an ellipsis; '' when too little of it would.
 * @param {import('./graph.js').Graph} g
 * @param {string} text
 * @param {number} room px
 */
function fit (g, text, room) {
  const measure = (/** @type {string} */ s) => {
    let w = g.widthCache.get(s)
    if (w === undefined) {
      w = g.ui.ctx.measureText(s).width
      if (g.widthCache.size < 20000) g.widthCache.set(s, w)
    }
    return w
  }
  if (measure(text) <= room) return text
  let lo = 0
  let hi = text.length
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (measure(text.slice(0, mid) + '…') <= room) lo = mid
    else hi = mid - 1
  }
  return lo < 2 ? '' : text.slice(0, lo) + '…'
}
