// Two runs side by side in one page: each run's verdict and key figures, the change in every figure (with the load
// generator's figures judged against noise), and the main charts in pairs on the same scales.
import { compareResults } from '../../load/compare.js'
import { VERSION } from '../../version.js'
import { CHART_THRESHOLDS, keyFigures, loadTables } from './figures.js'
import {
  CATEGORY_TITLE, culpritShare, esc, formatBytes, formatCount, formatMs, formatValue, htmlDocument, htmlTable
} from './page.js'
import { formatChange, relativeChange, runFigures } from './run-figures.js'
import { loadOnlySeries, runSeries } from './series.js'

/**
 * One side of a comparison: a doctor run (its diagnosis, and its recorded data when the run directory is there) or a
 * plain load result.
 * @typedef {object} CompareRun
 * @property {string} label what the run is called in the page (e.g. its path)
 * @property {import('../words/diagnosis.js').Diagnosis | null} diagnosis
 * @property {import('../../analysis/run-data.js').RunData | null} runData
 * @property {import('../../load/result.js').LoadResult | null} load
 */

/**
 * @param {[CompareRun, CompareRun]} runs before, after
 * @param {{ title?: string }} [opts]
 * @returns {string} a complete HTML document
 */
export function renderCompareReport (runs, opts = {}) {
  const [a, b] = runs
  const title = opts.title ?? `${a.label} → ${b.label}`
  const body = `<main class="hr hr-compare">
<header class="hr-top">
  <div class="hr-brand">hotpath compare</div>
  <h1 class="hr-title">${esc(title)}</h1>
  <div class="hr-sub">before: ${esc(a.label)} · after: ${esc(b.label)}</div>
</header>
<div class="hr-runs">${runs.map((r, i) => runCard(r, i === 0 ? 'before' : 'after')).join('\n')}</div>
<section class="hr-section" id="figures">
  <h2>Change <small>load figures are judged against noise: each second of a run is a sample, Welch's t-test, p &lt; 0.05 and at least 2%</small></h2>
  ${figuresTable(a, b)}
</section>
<section class="hr-section" id="charts">
  <div class="hr-section-head"><h2>Over the runs</h2></div>
  <p class="hr-hint"><span class="hr-key hr-key-load"></span> the load window · <span class="hr-key hr-key-threshold"></span> the threshold of a rule · time in seconds from the start of each load · side by side, on the same scale</p>
  <div class="hr-charts hr-charts-pairs" id="hr-charts"></div>
</section>
${a.load || b.load ? `<section class="hr-section" id="load"><h2>Load</h2><div class="hr-runs">${runs.map((r, i) => `<div><h3>${i === 0 ? 'before' : 'after'}</h3>${r.load ? loadTables(r.load) : '<p class="hr-muted">no load result (the load came from --on-port)</p>'}</div>`).join('')}</div></section>` : ''}
<footer class="hr-foot">hotpath ${esc(VERSION)}</footer>
</main>`
  return htmlDocument({
    title: `${title} — hotpath compare`,
    body,
    data: {
      kind: 'compare',
      runs: runs.map(r => ({
        label: r.label,
        series: r.runData ? runSeries(r.runData) : loadOnlySeries(r.load),
        decisive: [],
        thresholds: CHART_THRESHOLDS
      })),
      culprits: [],
      flame: null
    }
  })
}

/**
 * @param {CompareRun} r
 * @param {string} side
 */
function runCard (r, side) {
  const d = r.diagnosis
  if (!d) {
    const l = r.load
    return `<section class="hr-verdict hr-cat-none"><div class="hr-side">${esc(side)}</div>
  <div class="hr-badge">Load result</div>
  <p class="hr-summary">${l ? esc(`${formatCount(l.requests.total)} requests in ${l.duration} s (${formatCount(l.requests.mean)} req/s), latency p50 ${formatMs(l.latency.p50)}, p99 ${formatMs(l.latency.p99)}`) : ''}</p>
  <p class="hr-muted">${esc(r.label)}</p>
</section>`
  }
  const culprits = d.culprits.slice(0, 3).map(c => `<li><span class="hr-c-fn">${esc(c.label ?? c.function)}</span> <span class="hr-c-where">${esc(c.file)}:${esc(c.line)}</span> <span class="hr-muted">${esc(culpritShare(c))}</span></li>`).join('')
  return `<section class="hr-verdict hr-cat-${esc(d.category)}"><div class="hr-side">${esc(side)}</div>
  <div class="hr-badge">${esc(CATEGORY_TITLE[d.category] ?? d.category)}</div>
  <p class="hr-summary">${esc(d.summary)}</p>
  <div class="hr-figures">${keyFigures(d).map(f => `<div class="hr-figure${f.bad ? ' hr-bad' : ''}" title="${esc(f.title)}"><div class="hr-figure-value">${esc(f.value)}</div><div class="hr-figure-label">${esc(f.label)}</div></div>`).join('')}</div>
  ${culprits ? `<ol class="hr-mini-culprits">${culprits}</ol>` : ''}
  <p class="hr-muted hr-run-info">${esc(d.run.command.join(' '))} · ${esc(r.label)}</p>
</section>`
}

/**
 * @param {CompareRun} a
 * @param {CompareRun} b
 */
function figuresTable (a, b) {
  /** @type {string[][]} */
  const rows = []
  if (a.diagnosis || b.diagnosis) {
    rows.push(['category', esc(a.diagnosis?.category ?? '–'), esc(b.diagnosis?.category ?? '–'), '', ''])
  }
  if (a.load && b.load) {
    const verdictText = { better: 'better', worse: 'worse', same: 'within noise', unknown: 'too few seconds to judge' }
    for (const r of compareResults(a.load, b.load)) {
      const fmt = (/** @type {number} */ v) => r.unit === 'ms' ? formatMs(v) : r.unit === 'B/s' ? formatBytes(v, '/s') : formatCount(v)
      rows.push([
        esc(r.figure),
        esc(fmt(r.a)),
        esc(fmt(r.b)),
        esc(formatChange(r.change)),
        `<span class="hr-${r.verdict}">${esc(verdictText[r.verdict])}${Number.isFinite(r.p) && r.verdict !== 'same' ? esc(` (p=${r.p < 0.001 ? '<0.001' : r.p.toFixed(3)})`) : ''}</span>`
      ])
    }
  }
  if (a.diagnosis || b.diagnosis) {
    const fa = runFigures(a.diagnosis)
    const fb = runFigures(b.diagnosis)
    fa.forEach((f, i) => {
      const g = fb[i]
      if (f.value === null && g.value === null) return
      rows.push([
        esc(f.figure),
        f.value === null ? '–' : esc(formatValue(f.value, f.unit)),
        g.value === null ? '–' : esc(formatValue(g.value, g.unit)),
        esc(formatChange(relativeChange(f.value, g.value))),
        '<span class="hr-muted">one value per run</span>'
      ])
    })
  }
  if (rows.length === 0) return '<p class="hr-muted">Nothing to compare.</p>'
  return htmlTable(['figure', 'before', 'after', 'change', 'verdict'], rows, { numeric: [1, 2, 3], cls: 'hr-change' })
}
