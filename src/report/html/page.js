// Pieces shared by the report pages: the document around the content, escaping, and number formatting.
import { culpritShare, formatBytes, formatCount, formatMs, formatPercent, formatValue } from '../format.js'
import { scriptJson } from '../flame/html.js'
import { reportAssets } from './assets.js'

export { culpritShare, formatBytes, formatCount, formatMs, formatPercent, formatValue }

/**
 * Escapes text for HTML content and attribute values.
 * @param {unknown} s
 */
export function esc (s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * A complete, self-contained document: the content, the data the client draws from, and every script and style
 * inlined. The content security policy forbids any fetch, so the page works offline and from file://.
 * @param {{ title: string, body: string, data: unknown, extra?: { id: string, data: unknown } }} page extra: more data
 *   the page only reads on demand (kept apart, so it is not parsed when the page opens)
 */
export function htmlDocument ({ title, body, data, extra }) {
  const { css, js } = reportAssets()
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title>
<link rel="icon" href="data:,">
<style>
${css}
</style>
</head>
<body>
${body}
<script type="application/json" id="hotpath-report-data">${scriptJson(data)}</script>
${extra ? `<script type="application/json" id="${esc(extra.id)}">${scriptJson(extra.data)}</script>\n` : ''}<script>
${js.replace(/<\/(script)/gi, '<\\/$1')}
window.hotpathReport = window.HotpathReport.init(JSON.parse(document.getElementById('hotpath-report-data').textContent))
</script>
</body>
</html>
`
}

/**
 * A table from a header row and body rows of HTML cells (already escaped).
 * @param {string[]} head
 * @param {string[][]} rows
 * @param {{ cls?: string, numeric?: number[] }} [opts] numeric: columns aligned right
 */
export function htmlTable (head, rows, opts = {}) {
  const num = new Set(opts.numeric ?? [])
  const cell = (/** @type {string} */ tag, /** @type {string} */ v, /** @type {number} */ i) => `<${tag}${num.has(i) ? ' class="hr-num"' : ''}>${v}</${tag}>`
  return `<table class="hr-table${opts.cls ? ` ${opts.cls}` : ''}">` +
    `<thead><tr>${head.map((h, i) => cell('th', h, i)).join('')}</tr></thead>` +
    `<tbody>${rows.map(r => `<tr>${r.map((v, i) => cell('td', v, i)).join('')}</tr>`).join('')}</tbody></table>`
}

export const CATEGORY_TITLE = /** @type {Record<string, string>} */ ({
  'target-failed': 'The target failed',
  'load-failed': 'The load failed',
  'event-loop': 'Event loop blocked',
  io: 'Waiting on I/O',
  gc: 'Garbage collection pressure',
  'memory-leak': 'Memory leak',
  healthy: 'Healthy',
  'insufficient-data': 'Not enough data'
})
