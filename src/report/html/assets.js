// What a report page inlines: uPlot (the charting library, read from its package at report time), the flame graph
// component, and the report's own stylesheet and script. Nothing is fetched when the page opens. The same thing one
// layer down, for the flame graph component alone: src/report/flame/assets.js.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { browserScript } from '../flame/browser-script.js'
import { flameAssets } from '../flame/assets.js'

const require = createRequire(import.meta.url)

/** The parts of the report's browser script (client/), in the order they are joined; init.js is its entry point. */
const CLIENT = [
  'dom.js', 'units.js', 'chart-specs.js', 'plot.js', 'report.js', 'charts.js', 'flame-panel.js', 'saved-profiles.js',
  'init.js'
]

/** @type {{ css: string, js: string } | null} */
let cached = null

/**
 * The report's CSS (uPlot's, the flame graph's, the report's) and JavaScript (uPlot, the flame graph, the report's
 * client, which defines `window.HotpathReport.init(data)`).
 * @returns {{ css: string, js: string }}
 */
export function reportAssets () {
  if (cached) return cached
  const uplotDir = require.resolve('uplot/package.json').replace(/package\.json$/, 'dist/')
  const flame = flameAssets()
  const own = (/** @type {string} */ name) => readFileSync(new URL(name, import.meta.url), 'utf8')
  cached = {
    css: [readFileSync(uplotDir + 'uPlot.min.css', 'utf8'), flame.css, own('./report.css')].join('\n'),
    js: [
      // uPlot's IIFE declares a global `uPlot`; the source map comment would point at a file the page does not have.
      readFileSync(uplotDir + 'uPlot.iife.min.js', 'utf8').replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, ''),
      flame.js,
      browserScript(new URL('./client/', import.meta.url), CLIENT, 'window.HotpathReport = { init }')
    ].join('\n;\n')
  }
  return cached
}
