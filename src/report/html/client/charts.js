/// <reference lib="dom" />
// The charts of the run, or of both runs side by side on the same scales, and the process / thread selector that
// switches them (one run only; a comparison shows each run's default view).
/* global document */
import { maxOf, ORDER, specsFor, viewOptions } from './chart-specs.js'
import { el } from './dom.js'
import { makePlot } from './plot.js'

/** @param {import('./report.js').Report} r */
export function listenViewSelect (r) {
  const { select, data } = r
  if (!select || r.compare) return
  const options = viewOptions(data.runs[0])
  if (options.length <= 1) return
  for (const [value, label] of options) {
    const o = document.createElement('option')
    o.value = value
    o.textContent = label
    select.appendChild(o)
  }
  const label = /** @type {HTMLElement} */ (select.parentElement)
  label.hidden = false
  select.value = r.views[0]
  select.addEventListener('change', () => { r.views[0] = select.value; drawCharts(r) })
}

/** @param {import('./report.js').Report} r */
export function drawCharts (r) {
  const { data, compare, host } = r
  for (const c of r.charts) c.plot.destroy()
  r.charts = []
  host.textContent = ''
  const specsPerRun = data.runs.map((/** @type {any} */ run, /** @type {number} */ i) => specsFor(run, r.views[i]))
  /** @type {string[]} */
  const ids = []
  for (const specs of specsPerRun) for (const s of specs) if (!ids.includes(s.id)) ids.push(s.id)
  ids.sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b))
  if (compare) {
    const head = el('div', 'hr-pair hr-pair-head', undefined)
    data.runs.forEach((/** @type {any} */ run, /** @type {number} */ i) => head.appendChild(el('div', 'hr-run-label hr-run-' + i, run.label)))
    host.appendChild(head)
  }
  for (const id of ids) {
    const row = compare ? el('div', 'hr-pair', undefined) : host
    if (compare) host.appendChild(row)
    const pair = specsPerRun.map((/** @type {import('./chart-specs.js').ChartSpec[]} */ specs) => specs.find(s => s.id === id))
    // Side by side, the same scale: a taller line is a bigger number.
    let yMax = 0
    if (compare) for (const s of pair) if (s) yMax = Math.max(yMax, maxOf(s))
    pair.forEach((/** @type {import('./chart-specs.js').ChartSpec | undefined} */ spec, /** @type {number} */ i) => {
      if (!spec) {
        if (compare) row.appendChild(el('div', 'hr-chart hr-chart-missing', 'not recorded in this run'))
        return
      }
      if (compare) spec.yMax = yMax
      addChart(r, row, spec, i)
    })
  }
}

/**
 * @param {import('./report.js').Report} r
 * @param {HTMLElement} row
 * @param {import('./chart-specs.js').ChartSpec} spec
 * @param {number} i the run
 */
function addChart (r, row, spec, i) {
  const box = el('div', 'hr-chart', undefined)
  box.dataset.chart = spec.id
  if ((r.data.runs[i].decisive || []).includes(spec.id)) box.classList.add('hr-chart-decisive')
  const head = el('div', 'hr-chart-head', undefined)
  head.appendChild(el('h3', '', spec.title))
  head.appendChild(el('span', 'hr-chart-note', spec.note))
  box.appendChild(head)
  const plotBox = el('div', 'hr-plot', undefined)
  box.appendChild(plotBox)
  row.appendChild(box)
  const plot = makePlot(plotBox, spec, r.data.runs[i], xRange(r.data))
  r.charts.push({ id: spec.id, run: i, spec, plot, box: plotBox })
}

/**
 * The x range that holds every run, so charts line up in time (side by side too).
 * @param {any} data
 */
function xRange (data) {
  let lo = Infinity
  let hi = -Infinity
  for (const run of data.runs) {
    lo = Math.min(lo, run.series.range[0])
    hi = Math.max(hi, run.series.range[1])
  }
  return hi > lo ? [lo, hi] : null
}
