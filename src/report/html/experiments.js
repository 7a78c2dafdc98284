// The HTML report's section on doctor's experiments: each setting measured after the run, every value tried against
// the baseline, and what came of it, in the words of the advice. The same thing as facts: src/analysis/experiments.js;
// in words: src/report/words/experiments.js.
import { esc, formatBytes, formatCount, formatMs, formatPercent, htmlTable } from './page.js'
import { agentLine, experimentName, settingText, verdictLabel } from '../words/experiments.js'

/** @typedef {import('../words/experiments.js').WordedExperiment} WordedExperiment */

/**
 * @param {WordedExperiment[]} all
 * @returns {string} the section, or '' when nothing was tried
 */
export function experimentsSection (all) {
  // A setting only proposed is advice (the command that measures it), not an experiment.
  const experiments = all.filter(e => e.stopped !== 'proposed')
  if (experiments.length === 0) return ''
  const blocks = experiments.map((e) => {
    const chosen = e.chosen !== null ? ` — use <code>${esc(settingText(e, e.chosen))}</code>` : ''
    const pair = (/** @type {{ baseline: number, candidate: number } | null | undefined} */ f, /** @type {(n: number) => string} */ fmt) => f ? `${esc(fmt(f.candidate))} <span class="hr-muted">/ ${esc(fmt(f.baseline))}</span>` : '–'
    const tried = e.tried.filter(t => t.verdict !== 'failed')
    const queued = tried.some(t => t.agent)
    const rows = tried.map(t => [
      esc(e.kind === 'try' ? 'as tried' : t.value),
      `${pair(t.requestsPerSecond, formatCount)} <span class="hr-muted">(${t.requestsPerSecond.change >= 0 ? '+' : ''}${Math.round(t.requestsPerSecond.change * 100)}%)</span>`,
      pair(t.p99Ms, formatMs),
      ...(queued ? [pair(t.agent?.queued, v => String(Math.round(v)))] : []),
      pair(t.gcShare, v => formatPercent(v, 0)),
      pair(t.rssBytes, formatBytes),
      pair(t.heapBytes, formatBytes),
      esc(t.verdict === 'same' ? 'same (noise)' : t.verdict)
    ])
    const head = ['value', 'req/s (vs baseline)', 'p99', ...(queued ? ['waiting for a socket'] : []), 'GC', 'RSS', 'heap', 'verdict']
    const figures = rows.length > 0 ? htmlTable(head, rows, { numeric: head.slice(1, -1).map((_, i) => i + 1) }) : ''
    const about = agentLine(e)
    return `<div class="hr-experiment" data-setting="${esc(e.setting)}" data-verdict="${esc(e.verdict)}">
    <h3><code>${esc(experimentName(e))}</code>: ${esc(verdictLabel(e))}${chosen}</h3>
    ${about ? `<p class="hr-muted">${esc(about)}</p>` : ''}
    ${figures}
    <p>${esc(e.summary)}</p>
  </div>`
  })
  return `<section class="hr-section" id="experiments">
  <h2>Settings measured before they are advised</h2>
  <p class="hr-hint">After the run, the target was restarted for short phases that alternate the baseline with each value (warmed up, then loaded as the run was), judged with <code>hotpath compare</code>'s noise test. A setting that helps under this load may not under production's.</p>
  ${blocks.join('\n')}
</section>`
}

/**
 * After a crash on heap exhaustion: the target loaded again with the larger limit the advice proposes, and what it gave.
 * @param {import('../words/diagnosis.js').Diagnosis['heapRetry']} r
 * @returns {string} the section, or '' when there was none
 */
export function heapRetrySection (r) {
  // One not tried is said in the advice, where the command to try it is.
  if (!r || r.outcome === 'not-run') return ''
  const measured = r.outcome !== 'interrupted' && r.outcome !== 'failed'
  const mb = (/** @type {number | null} */ v) => v === null ? '–' : esc(formatBytes(v))
  const outcome = { survived: 'survived the load', crashed: r.lowered ? 'heap exhausted (an error, not a kill)' : 'crashed again: heap exhausted', exited: 'exited during the load', failed: 'measured nothing', interrupted: 'skipped', 'not-run': 'not tried' }[r.outcome]
  const figures = measured
    ? htmlTable(['heap limit', 'outcome', 'load', 'req/s', 'peak heap', 'peak RSS'], [[
      mb(r.heapLimit),
      esc(outcome),
      esc(`${r.seconds ?? '?'} s${r.firstSeconds !== null ? ` (first run: ${r.firstSeconds} s)` : ''}`),
      r.requestsPerSecond === null ? '–' : esc(formatCount(r.requestsPerSecond)),
      mb(r.peakHeap),
      mb(r.peakRss)
    ]], { numeric: [0, 3, 4, 5] })
    : ''
  return `<section class="hr-section" id="heap-retry">
  <h2>${r.lowered ? 'A heap limit within the container, tried' : 'A larger heap limit, tried'}</h2>
  <p class="hr-hint">The target ${r.lowered ? 'was killed at its container\'s memory' : 'ran out of heap'}: it was started again with <code>${esc(r.flag)}</code>, the limit the advice proposes, and loaded as the run was, once.</p>
  <div class="hr-experiment" data-outcome="${esc(r.outcome)}">
    ${figures}
    <p>${esc(r.summary)}</p>
  </div>
</section>`
}
