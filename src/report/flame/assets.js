// What a page needs to show the flame graph: its stylesheet and its script, as text to inline. The HTML report embeds
// the same component in a larger page with these.
import { readFileSync } from 'node:fs'

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
    // The type-checking reference is for the editor; in the page it would be a stray comment at best.
    js: readFileSync(new URL('./client.js', import.meta.url), 'utf8').replace(/^\/\/\/ <reference lib="dom" \/>\n/, '')
  }
  return cached
}
