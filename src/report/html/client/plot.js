/// <reference lib="dom" />
// One chart drawn with uPlot (inlined in the page before this script): its scales, axes and lines, the load window
// shaded under it, and a rule's threshold dashed across it.
/* global window */
import { formatter, niceCeil, trim } from './units.js'

/** px: the height of every chart */
export const HEIGHT = 180

/**
 * @param {HTMLElement} box
 * @param {import('./chart-specs.js').ChartSpec} spec
 * @param {any} run
 * @param {number[] | null} range
 */
export function makePlot (box, spec, run, range) {
  const U = /** @type {any} */ (window).uPlot
  const grid = run.series[spec.grid]
  const win = run.series.window
  const fmt = formatter(spec.unit)
  const few = grid.x.length <= 90 && spec.grid === 'coarse'
  const opts = {
    width: Math.max(240, box.clientWidth || 560),
    height: HEIGHT,
    cursor: { sync: { key: 'hotpath' }, drag: { x: true, y: false } },
    scales: {
      x: { time: false, ...(range ? { range: () => range } : {}) },
      y: {
        range: (/** @type {any} */ u, /** @type {number | null} */ min, /** @type {number | null} */ max) => {
          if (spec.id === 'elu') return [0, 100]
          const top = Math.max(max ?? 0, spec.yMax ?? 0)
          return [0, top > 0 ? niceCeil(top * 1.08) : 1]
        }
      }
    },
    axes: [
      { stroke: '#666', grid: { stroke: '#eee', width: 1 }, ticks: { stroke: '#ddd', width: 1 }, values: (/** @type {any} */ u, /** @type {number[]} */ vals) => vals.map(v => trim(v) + ' s') },
      { stroke: '#666', size: axisSize, grid: { stroke: '#eee', width: 1 }, ticks: { stroke: '#ddd', width: 1 }, values: (/** @type {any} */ u, /** @type {number[]} */ vals) => vals.map(v => fmt(v, true)) }
    ],
    series: [
      { label: 'time', value: (/** @type {any} */ u, /** @type {number | null} */ v) => v === null || v === undefined ? '–' : trim(v) + ' s' },
      ...spec.series.map(s => ({
        label: s.label,
        stroke: s.color,
        width: 1.5,
        ...(s.dash ? { dash: s.dash } : {}),
        ...(s.fill ? { fill: s.fill } : {}),
        points: { show: few, size: 5 },
        value: (/** @type {any} */ u, /** @type {number | null} */ v) => v === null || v === undefined ? '–' : fmt(v, false)
      }))
    ],
    hooks: {
      drawClear: [(/** @type {any} */ u) => shadeWindow(u, win)],
      draw: [(/** @type {any} */ u) => { if (spec.threshold !== undefined) drawThreshold(u, spec.threshold) }]
    },
    legend: { live: true }
  }
  return new U(opts, [grid.x, ...spec.series.map(s => s.values)], box)
}

/**
 * The load window, shaded under everything else.
 * @param {any} u
 * @param {number[]} win
 */
function shadeWindow (u, win) {
  const { left, top, width, height } = u.bbox
  const x0 = Math.max(left, u.valToPos(win[0], 'x', true))
  const x1 = Math.min(left + width, u.valToPos(win[1], 'x', true))
  if (!(x1 > x0)) return
  const ctx = u.ctx
  ctx.save()
  ctx.fillStyle = 'rgba(255, 193, 7, 0.13)'
  ctx.fillRect(x0, top, x1 - x0, height)
  ctx.fillStyle = 'rgba(150, 110, 0, 0.75)'
  ctx.font = Math.round(10 * (window.devicePixelRatio || 1)) + 'px system-ui, sans-serif'
  ctx.textBaseline = 'top'
  ctx.fillText('load', x0 + 4, top + 3)
  ctx.restore()
}

/**
 * A rule's threshold, dashed, when it is within the chart.
 * @param {any} u
 * @param {number} value
 */
function drawThreshold (u, value) {
  const scale = u.scales.y
  if (!(value <= scale.max && value >= scale.min)) return
  const y = Math.round(u.valToPos(value, 'y', true)) + 0.5
  const { left, width } = u.bbox
  const ctx = u.ctx
  ctx.save()
  ctx.strokeStyle = 'rgba(200, 30, 30, 0.8)'
  ctx.lineWidth = window.devicePixelRatio || 1
  ctx.setLineDash([6, 4])
  ctx.beginPath()
  ctx.moveTo(left, y)
  ctx.lineTo(left + width, y)
  ctx.stroke()
  ctx.restore()
}

/**
 * Room for the longest tick label of a y axis.
 * @param {any} u
 * @param {string[] | null} values
 */
function axisSize (u, values) {
  let longest = 0
  for (const v of values || []) if (v && v.length > longest) longest = v.length
  return Math.max(40, Math.ceil(longest * 7.5) + 20)
}
