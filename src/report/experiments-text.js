// doctor's experiments for a terminal: per setting, each value tried against the baseline, and what came of it.
import { formatBytes, formatCount, formatMs, formatPercent, table } from './format.js'
import { agentLine, experimentName, settingText, verdictLabel } from './words/experiments.js'
import { advisedUnmeasured } from '../analysis/recommendations.js'

/** @typedef {import('./words/experiments.js').WordedExperiment} WordedExperiment */

/**
 * @param {WordedExperiment[]} all
 * @returns {string[]} lines, none when nothing was tried
 */
export function experimentLines (all) {
  // A setting only proposed is advice (the command that measures it), not an experiment.
  const experiments = all.filter(e => e.stopped !== 'proposed')
  if (experiments.length === 0) return []
  const lines = ['Experiments (the target restarted for each phase; baseline and candidate alternate)']
  for (const e of experiments) {
    const chosen = e.chosen !== null ? ` — use ${settingText(e, e.chosen)}` : ''
    lines.push(`  ${experimentName(e)}: ${verdictLabel(e)}${chosen}`)
    const about = agentLine(e)
    if (about) lines.push(`    ${about}`)
    const rows = e.tried.filter(t => t.verdict !== 'failed')
    if (rows.length > 0) {
      const pair = (/** @type {{ baseline: number, candidate: number } | null | undefined} */ f, /** @type {(n: number) => string} */ fmt) => f ? `${fmt(f.candidate)} / ${fmt(f.baseline)}` : '–'
      const queued = rows.some(t => t.agent)
      lines.push(table([
        ['value', 'req/s (vs baseline)', 'p99', ...(queued ? ['queued'] : []), 'GC', 'RSS', 'verdict'],
        ...rows.map(t => [
          e.kind === 'try' ? 'as tried' : t.value,
          `${pair(t.requestsPerSecond, formatCount)} (${t.requestsPerSecond.change >= 0 ? '+' : ''}${Math.round(t.requestsPerSecond.change * 100)}%)`,
          pair(t.p99Ms, formatMs),
          ...(queued ? [pair(t.agent?.queued, v => String(Math.round(v)))] : []),
          pair(t.gcShare, v => formatPercent(v, 0)),
          pair(t.rssBytes, formatBytes),
          t.verdict === 'same' ? 'same (noise)' : t.verdict
        ])
      ], { align: ['left', 'right', 'right', ...(queued ? /** @type {const} */ (['right']) : []), 'right', 'right', 'left'] }).split('\n').map(l => `    ${l}`).join('\n'))
    }
    // What was measured is in the advice; a setting that was not measured says why here only (where an agent's limit
    // is set is advice).
    if (e.verdict === 'not-run' && !advisedUnmeasured(e)) lines.push(`    ${e.summary}`)
  }
  lines.push('')
  return lines
}
