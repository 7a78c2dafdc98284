// `hotpath heap`'s HTML page: the verdict, then each growing group with its retainer path as a chain from the leaked
// object up to the name that holds it. Self-contained (no script, no external file): it opens from a CI artifact.
import { basename } from 'node:path'
import { formatBytes, shortFile } from '../heap-text.js'

/** @param {unknown} text */
function esc (text) {
  return String(text).replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)
}

const number = new Intl.NumberFormat('en-US')

/**
 * @param {import('../../heap/report-data.js').HeapReport} report
 * @param {string} cwd
 * @returns {string}
 */
export function renderHeapPage (report, cwd) {
  const culprits = report.culprits.map((c, i) => {
    const where = c.file ? ` <span class="where">${esc(shortFile(c.file, cwd))}${c.line ? `:${c.line}` : ''}</span>` : ''
    const steps = c.retainers.map((r, k) => {
      const at = r.file ? ` <span class="where">${esc(shortFile(r.file, cwd))}${r.line ? `:${r.line}` : ''}</span>` : ''
      const holding = r.name === c.holding && r.kind !== 'internal' ? ' class="holding"' : ''
      return `<li${holding}>${k === 0 ? '' : '← '}<code>${esc(r.name)}</code> <span class="kind">${esc(r.kind)}</span> in ${esc(r.holder)}${at}</li>`
    }).join('')
    return `<section><h2>${i + 1}. ${number.format(c.count)} <code>${esc(c.constructor)}</code>, kept by ${c.holding ? `<code>${esc(c.holding)}</code> (${esc(c.holder)})` : esc(c.holder)}${where}</h2>
<p>${formatBytes(c.bytes)}${c.bytesPerRequest !== null ? `, ${formatBytes(c.bytesPerRequest)} per request of the growth phase` : ''}${c.function ? `; function <code>${esc(c.function)}</code>` : ''}</p>
<ol class="path">${steps}</ol></section>`
  }).join('\n')
  const phases = report.load.phases.map(p => `<tr><td>${esc(p.name)}</td><td>${number.format(p.requests)}</td><td>${p.duration.toFixed(1)} s</td><td>${p.failed ? esc(p.failed) : ''}</td></tr>`).join('')
  const snapshots = report.snapshots.map(s => `<tr><td>${esc(shortFile(s.file, cwd))}</td><td>${formatBytes(s.bytes)}</td><td>${s.nodes !== undefined ? number.format(s.nodes) : ''}</td><td>${(s.ms / 1000).toFixed(1)} s</td></tr>`).join('')
  const stderr = report.failure && report.failure.stderr.length > 0 ? `<pre>${esc(report.failure.stderr.join('\n'))}</pre>` : ''
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>hotpath heap — ${esc(report.target.join(' '))}</title>
<style>
body { font: 14px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 60em; padding: 0 1em; color: #222 }
h1 { font-size: 1.3em } h2 { font-size: 1.05em; margin-bottom: .2em } code { background: #f3f3f3; padding: 0 .2em }
.verdict { font-size: 1.1em; padding: .6em .8em; border-left: 4px solid ${report.culprits.length > 0 || report.failure ? '#c0392b' : '#27ae60'}; background: #fafafa }
.path { list-style: none; padding-left: 1em; font-family: ui-monospace, monospace; font-size: 13px }
.holding { font-weight: bold } .kind { color: #888; font-size: 11px } .where { color: #2c6fb7 }
table { border-collapse: collapse; margin: .5em 0 } td, th { padding: .2em .8em; border-bottom: 1px solid #eee; text-align: left }
</style></head><body>
<h1>hotpath heap</h1>
<p class="verdict">${esc(report.verdict.replace(/^hotpath heap: /, ''))}</p>${stderr}
${culprits}
${allocationsSection(report, cwd)}
<h2>Load</h2><table><tr><th>phase</th><th>requests</th><th>time</th><th>failed</th></tr>${phases}</table>
<h2>Snapshots</h2><table><tr><th>file</th><th>size</th><th>nodes</th><th>taken in</th></tr>${snapshots}</table>
<p>Objects made in the growth phase and still alive after the settle phase and a full GC, grouped by the older object
that holds them; a group grows with load at ${report.threshold ? `${number.format(report.threshold.minCount)} objects or more` : 'enough objects'}.
Target: <code>${esc(report.target.join(' '))}</code>, hotpath ${esc(report.version)}.</p>
</body></html>
`
}

/**
 * Where the survivors were allocated, and a link to the flame graph page beside this one.
 * @param {import('../../heap/report-data.js').HeapReport} report
 * @param {string} cwd
 */
function allocationsSection (report, cwd) {
  const alloc = report.allocations
  if (!alloc) return ''
  if ('error' in alloc) return `<h2>Allocations</h2><p>No allocation flame graph: ${esc(alloc.error)}</p>`
  const rows = alloc.sites.map(s => `<tr><td><code>${esc(s.function)}</code></td><td class="where">${esc(shortFile(s.file, cwd))}${s.line ? `:${s.line}` : ''}</td><td>${Math.round(s.share * 100)}%</td></tr>`).join('')
  return `<h2>Allocations</h2>
<p>Where the objects still alive after the settle phase were allocated (${formatBytes(alloc.bytes)} sampled):
<a href="${esc(encodeURI(basename(alloc.flame)))}">the allocation flame graph</a>.</p>
<table><tr><th>function</th><th>line</th><th>of the bytes</th></tr>${rows}</table>`
}
