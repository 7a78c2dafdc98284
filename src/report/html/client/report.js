/// <reference lib="dom" />
// One report page's shared state: its data, the charts drawn, the view each run shows, the flame graph shown. Every
// part of the page takes it as `r`.
/* global document */
import { defaultView } from './chart-specs.js'

/**
 * @typedef {{ id: string, run: number, spec: import('./chart-specs.js').ChartSpec, plot: any, box: HTMLElement }} Chart
 */

/**
 * @typedef {object} Report
 * @property {any} data what the page embeds (see src/report/html/doctor-page.js and compare-page.js)
 * @property {boolean} compare two runs side by side
 * @property {Chart[]} charts
 * @property {HTMLElement} host where the charts go
 * @property {string[]} views each run's view: 'all', 'p:<pid>' or 't:<pid>-<threadId>'
 * @property {HTMLSelectElement | null} select the process / thread selector
 * @property {HTMLElement | null} flameBox
 * @property {any} flame the flame graph's controller, or null
 * @property {string | null} flameKind which profile it shows
 */

/**
 * @param {any} data
 * @returns {Report}
 */
export function createReport (data) {
  return {
    data,
    compare: data.kind === 'compare',
    charts: [],
    host: /** @type {HTMLElement} */ (document.getElementById('hr-charts')),
    views: data.runs.map((/** @type {any} */ run) => defaultView(run)),
    select: /** @type {HTMLSelectElement | null} */ (document.getElementById('hr-thread')),
    flameBox: document.getElementById('hr-flame'),
    flame: null,
    flameKind: null
  }
}
