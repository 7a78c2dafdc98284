// doctor's experiments for a terminal: per setting, each value tried against the baseline, and what came of it.
import { formatBytes, formatCount, formatMs, formatPercent, table } from './format.js'
import { settingText } from './words/experiments.js'

/** @typedef {import('./words/experiments.js').WordedExperiment} WordedExperiment */

const VERDICT = { helps: 'helps', 'no-gain': 'no gain beyond noise', worse: 'makes it worse', failed: 'could not run', 'not-run': 'not measured' }

/**
 * @param {WordedExperiment[]} experiments
 * @returns {string[]} lines, none when nothing was tried
 */
export function experimentLines (experiments) {
  if (experiments.length === 0) return []
  const lines = ['Experiments (the target restarted for each phase; baseline and candidate alternate)']
  for (const e of experiments) {
    const name = e.kind === 'try' ? `--try ${e.tried[0]?.value ?? ''}` : e.setting
    const chosen = e.chosen !== null ? ` — use ${settingText(e, e.chosen)}` : ''
    lines.push(`  ${name}: ${VERDICT[e.verdict]}${chosen}`)
    const rows = e.tried.filter(t => t.verdict !== 'failed')
    if (rows.length > 0) {
      const pair = (/** @type {{ baseline: number, candidate: number } | null} */ f, /** @type {(n: number) => string} */ fmt) => f ? `${fmt(f.candidate)} / ${fmt(f.baseline)}` : '–'
      lines.push(table([
        ['value', 'req/s (vs baseline)', 'p99', 'GC', 'RSS', 'verdict'],
        ...rows.map(t => [
          e.kind === 'try' ? 'as tried' : t.value,
          `${pair(t.requestsPerSecond, formatCount)} (${t.requestsPerSecond.change >= 0 ? '+' : ''}${Math.round(t.requestsPerSecond.change * 100)}%)`,
          pair(t.p99Ms, formatMs),
          pair(t.gcShare, v => formatPercent(v, 0)),
          pair(t.rssBytes, formatBytes),
          t.verdict === 'same' ? 'same (noise)' : t.verdict
        ])
      ], { align: ['left', 'right', 'right', 'right', 'right', 'left'] }).split('\n').map(l => `    ${l}`).join('\n'))
    }
    // What was measured is in the advice; a setting that was not measured says why here only.
    if (e.verdict === 'not-run') lines.push(`    ${e.summary}`)
  }
  lines.push('')
  return lines
}
