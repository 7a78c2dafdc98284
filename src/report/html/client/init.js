/// <reference lib="dom" />
// The report in the browser: draws the run's charts with uPlot, switches them between processes and threads, embeds
// the flame graph component, and links each culprit to its frames. The parts are joined into one inline script by
// assets.js: no imports in the page, no build step, no network. The same thing one layer down, for the flame graph
// component it embeds: src/report/flame/client/init.js.
// It defines window.HotpathReport = { init(data) } → { charts(), plot(i), views(), select(view), zoomToCulprit(i),
// showFlame(kind), flame() }: what tests and scripts drive the page through.
/* global window, performance */
import { viewOptions } from './chart-specs.js'
import { drawCharts, listenViewSelect } from './charts.js'
import { listenCulprits, listenFlameTabs, showFlame, zoomToCulprit } from './flame-panel.js'
import { HEIGHT } from './plot.js'
import { createReport } from './report.js'
import { listenProfileDownloads } from './saved-profiles.js'

/** @param {any} data what the page embeds (see src/report/html/doctor-page.js and compare-page.js) */
export function init (data) {
  const r = createReport(data)
  listenViewSelect(r)
  listenFlameTabs(r)
  listenCulprits(r)
  listenProfileDownloads()
  drawCharts(r)
  if (data.flame) showFlame(r, data.flame.cpu ? 'cpu' : 'heap')
  resizeChartsWithPage(r)
  if (performance.mark) performance.mark('hotpath-report-drawn')
  return controller(r)
}

/** @param {import('./report.js').Report} r */
function resizeChartsWithPage (r) {
  let width = r.host.clientWidth
  let timer = 0
  window.addEventListener('resize', () => {
    clearTimeout(timer)
    timer = window.setTimeout(() => {
      if (r.host.clientWidth === width) return
      width = r.host.clientWidth
      for (const c of r.charts) c.plot.setSize({ width: Math.max(240, c.box.clientWidth), height: HEIGHT })
    }, 100)
  })
}

/** @param {import('./report.js').Report} r */
function controller (r) {
  return {
    /** What each chart draws, for tests and for whoever reads the page from code. */
    charts () {
      return r.charts.map(c => ({
        id: c.id,
        run: c.run,
        title: c.spec.title,
        grid: c.spec.grid,
        series: c.spec.series.map(s => ({ label: s.label, points: s.values.filter(v => v !== null).length }))
      }))
    },
    /**
     * The uPlot instance of the i-th chart (in the order of charts()).
     * @param {number} i
     */
    plot (i) { return r.charts[i] ? r.charts[i].plot : null },
    /** @param {string} view 'all', 'p:<pid>' or 't:<pid>-<threadId>' */
    select (view) {
      r.views[0] = view
      if (r.select) r.select.value = view
      drawCharts(r)
      return this.charts()
    },
    views () { return viewOptions(r.data.runs[0]).map(o => o[0]) },
    /** @param {number} i */
    zoomToCulprit (i) { return zoomToCulprit(r, i) },
    /** @param {'cpu' | 'heap'} kind */
    showFlame (kind) { return showFlame(r, kind) },
    flame () { return r.flame }
  }
}
