// The self-contained flame graph page: data, style and script inlined, nothing fetched, opens from disk.
import { flameAssets } from './assets.js'
import { flameData } from './data.js'
import { jsonChunks } from './json-chunks.js'

/**
 * @param {import('../../profile/model.js').ProfileModel} model
 * @param {{ title?: string, culprits?: import('../../profile/find-culprits.js').Culprit[] }} [opts] culprits: already found
 *   (default: found here)
 * @returns {string} a complete HTML document
 */
export function renderFlameHtml (model, opts = {}) {
  return [...flameHtmlChunks(model, opts)].join('')
}

/**
 * The page in pieces, for a file stream: the data of a profile with millions of nodes is longer than V8's longest
 * string, so it is never built as one.
 * @param {import('../../profile/model.js').ProfileModel} model
 * @param {{ title?: string, culprits?: import('../../profile/find-culprits.js').Culprit[] }} [opts]
 * @returns {Generator<string>}
 */
export function * flameHtmlChunks (model, opts = {}) {
  const { css, js } = flameAssets()
  const title = opts.title ?? (model.type === 'heap' ? 'Allocation flame graph' : 'CPU flame graph')
  yield `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)} — hotpath</title>
<link rel="icon" href="data:,">
<style>
body { margin: 16px 20px; background: #fff; }
${css}
</style>
</head>
<body>
<div id="flame"></div>
<script type="application/json" id="flame-data">`
  // Escaped piece by piece: each character that needs it is escaped on its own, wherever the pieces split.
  for (const piece of jsonChunks(flameData(model, { culprits: opts.culprits }))) yield escapeScript(piece)
  yield `</script>
<script>
${js}
window.flame = window.HotpathFlame.init(document.getElementById('flame'),
  JSON.parse(document.getElementById('flame-data').textContent), ${scriptJson({ title })})
</script>
</body>
</html>
`
}

/**
 * JSON that is safe inside a <script> element: no `</script>`, no `<!--`, no line separators JavaScript rejects.
 * @param {unknown} value
 */
export function scriptJson (value) {
  return escapeScript(JSON.stringify(value))
}

/** @param {string} json */
function escapeScript (json) {
  return json.replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
}

/** @param {string} s */
function escapeHtml (s) {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
