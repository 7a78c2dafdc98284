// What a page needs to show the flame graph: its stylesheet and its script, as text to inline. The HTML report embeds
// the same component in a larger page with these: the same thing one layer up is src/report/html/assets.js.
import { readFileSync } from 'node:fs'
import { browserScript } from './browser-script.js'

/**
 * The parts of the graph's browser script (client/), in the order they are joined. Each declares functions only, so
 * the order is for a stable page, not for correctness; init.js hands the entry point to the page.
 */
const CLIENT = [
  'dom.js', 'labels.js', 'view-tree.js', 'graph.js', 'elements.js', 'colors.js', 'crumbs.js', 'draw.js', 'search.js',
  'zoom.js', 'pointer.js', 'header.js', 'table.js', 'toolbar.js', 'controller.js', 'init.js'
]

/** @type {{ css: string, js: string } | null} */
let cached = null

/**
 * The flame graph's CSS (scoped under `.hp-flame`) and JavaScript. The script defines
 * `window.HotpathFlame.init(container, data, options?)`, where `data` is `flameData(model)` and options are
 * `{ title?, table?: boolean, toolbar?: boolean, tableRows?: number }`; it returns a controller with
 * `zoomToFunction({ function, file?, line? } | name) → boolean`, `search(text) → summary`, `reset()`,
 * `setOptions({ colorBy?: 'kind' | 'heat', hide?: { node?, v8?, dependency? }, split? })`, `stats()` and `destroy()`.
 * @returns {{ css: string, js: string }}
 */
export function flameAssets () {
  cached ??= {
    css: readFileSync(new URL('./flame.css', import.meta.url), 'utf8'),
    js: browserScript(new URL('./client/', import.meta.url), CLIENT, 'window.HotpathFlame = { init }')
  }
  return cached
}
