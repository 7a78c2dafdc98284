// The doctor's HTML report: the verdict first (category, summary, the code to blame, what to do), then the charts of
// the run with the load window marked, the flame graph linked to the culprits, the evidence, the load result and the
// run's metadata. One self-contained file, from the run directory and its diagnosis, so `--analyse` regenerates it.
import { VERSION } from '../../version.js'
import {
  CATEGORY_TITLE, culpritShare, esc, formatBytes, formatCount, formatMs, formatPercent, formatValue, htmlDocument, htmlTable
} from './page.js'
import { readRunProfile } from '../../analysis/run-data.js'
import { placeText } from '../format.js'
import { damageNote, excerpt, threadCount, threadPlace } from '../doctor-text.js'
import { wordDiagnosis } from '../words/diagnosis.js'
import { CHART_THRESHOLDS, keyFigures, loadSection } from './figures.js'
import { reportProfiles } from './profiles.js'
import { runSeries } from './series.js'
import { experimentsSection, heapRetrySection } from './experiments.js'

/** @typedef {import('../words/diagnosis.js').Diagnosis} Diagnosis */
/** @typedef {import('../../analysis/run-data.js').RunData} RunData */
/** @typedef {import('../../load/result.js').LoadResult} LoadResult */

/**
 * @typedef {object} ReportOptions
 * @property {string} [title] of the page (default: the command)
 * @property {boolean} [embedProfiles] also embed each thread's raw CPU profile, to save from the page as a .cpuprofile
 *   (Chrome DevTools, speedscope); the page grows by their size
 */

/**
 * Which charts carry the verdict, by category: they are outlined and named in the page.
 * @type {Record<string, string[]>}
 */
const DECISIVE_CHARTS = {
  'event-loop': ['delay', 'cpu'],
  io: ['elu', 'latency'],
  gc: ['gc'],
  'memory-leak': ['memory'],
  healthy: [],
  'insufficient-data': []
}

/**
 * What ran after the load window and is not charted, for the charts' hint.
 * @param {import('./series.js').RunSeries} series
 */
function afterNote (series) {
  const after = series.after ?? []
  if (after.length === 0) return ''
  return ` · after the window, not charted (each its own load, not measured with it): ${after.map(a => `${esc(a.what)} (${esc(a.seconds.toFixed(1))} s)`).join(', ')}`
}

/**
 * Renders the report of one doctor run as a complete HTML document.
 * @param {Diagnosis | import('../../analysis/diagnose.js').Diagnosis} diagnosis what `diagnose(runData)` returned, in words
 *   or not
 * @param {RunData} runData the recorded run (`readRun(dir)`), for the time series and profiles
 * @param {ReportOptions} [opts]
 * @returns {string}
 */
export function renderReport (diagnosis, runData, opts = {}) {
  const d = wordDiagnosis(diagnosis)
  const command = d.run.command.join(' ')
  const title = opts.title ?? command
  const series = runSeries(runData)
  const profiles = reportProfiles(d, runData)
  const seconds = (d.run.window.end - d.run.window.start) / 1000
  const raw = opts.embedProfiles ? rawProfiles(runData) : []
  const body = `<main class="hr">
<header class="hr-top">
  <div class="hr-brand">hotpath doctor</div>
  <h1 class="hr-title">${esc(title)}</h1>
  <div class="hr-sub">${esc(new Date(runData.run.startedAt).toISOString().replace('T', ' ').slice(0, 19))} UTC · ${esc(seconds.toFixed(1))} s of load on ${esc(d.run.url)}</div>
</header>
${verdictSection(d)}
${culpritsSection(d, profiles)}
${recommendationsSection(d)}
${experimentsSection(d.experiments ?? [])}
${heapRetrySection(d.heapRetry)}
<section class="hr-section" id="charts">
  <div class="hr-section-head">
    <h2>Over the run</h2>
    <label class="hr-select" hidden>Show <select id="hr-thread" aria-label="process or thread"></select></label>
  </div>
  <p class="hr-hint"><span class="hr-key hr-key-load"></span> the load window · <span class="hr-key hr-key-threshold"></span> the threshold of a rule · time in seconds from the start of the load${afterNote(series)}${series.load ? '' : ` · <strong>no load-generator figures</strong>: the load was run by ${runData.run.onPort ? `<code>${esc(runData.run.onPort.command)}</code>` : 'another tool'} (--on-port), so requests/s are those the server finished`}</p>
  <div class="hr-charts" id="hr-charts"></div>
</section>
${flameSection(profiles, raw)}
${evidenceSection(d)}
${loadSection(d.load)}
${runSection(d, runData)}
<footer class="hr-foot">hotpath ${esc(VERSION)} · re-create this report with <code>hotpath doctor --analyse ${esc(d.run.dir)}</code></footer>
</main>`
  return htmlDocument({
    title: `${CATEGORY_TITLE[d.category]}: ${title} — hotpath doctor`,
    body,
    extra: raw.length > 0 ? { id: 'hotpath-raw-profiles', data: raw } : undefined,
    data: {
      kind: 'doctor',
      category: d.category,
      runs: [{ label: title, series, decisive: DECISIVE_CHARTS[d.category] ?? [], thresholds: CHART_THRESHOLDS }],
      culprits: d.culprits.map(c => {
        const zoom = profiles.zooms[c.measure === 'allocations' ? 'heap' : 'cpu'][`${c.function}|${c.file}`]
        return { function: c.function, label: c.label ?? c.function, file: c.file, line: c.line, measure: c.measure, ...(c.wait ? { wait: { role: c.wait.role } } : {}), ...(zoom ? { zoom } : {}) }
      }),
      flame: profiles
    }
  })
}

/** @param {Diagnosis} d */
function verdictSection (d) {
  const notices = []
  if (d.run.exit.crashed || d.failure?.category === 'target-failed') {
    notices.push('<p class="hr-notice">This covers the run until the target failed. Its last lines of stderr:</p>' +
      (d.run.stderr.length > 0 ? `<pre class="hr-stderr">${esc(excerpt(d.run.stderr, d.failure?.error?.message).join('\n'))}</pre>` : ''))
  } else if (d.run.aborted) {
    notices.push('<p class="hr-notice">Stopped early (interrupted); this covers the run until then.</p>')
  }
  // Damaged files first: whoever reads the verdict must know what it rests on.
  const warnings = d.warnings ?? []
  const damage = warnings.length > 0
    ? `<div class="hr-notice" id="warnings"><p><strong>${esc(capitalise(damageNote(d).replace(/^ — /, '')) || (warnings.every(w => w.kind === 'sourceMap') ? 'Some lines are not your source\'s' : 'Files of the run are damaged'))}</strong></p><ul>${warnings.map(w => `<li>${esc(w.message)}</li>`).join('')}</ul></div>`
    : ''
  return `<section class="hr-verdict hr-cat-${esc(d.category)}" id="verdict">
  ${damage}
  <div class="hr-badge">${esc(CATEGORY_TITLE[d.category] ?? d.category)}</div>
  <p class="hr-summary">${esc(d.summary)}</p>
  ${notices.join('\n')}
  <div class="hr-figures">${keyFigures(d).map(f => `<div class="hr-figure${f.bad ? ' hr-bad' : ''}" title="${esc(f.title)}"><div class="hr-figure-value">${esc(f.value)}</div><div class="hr-figure-label">${esc(f.label)}</div></div>`).join('')}</div>
</section>`
}

/** @param {string} text */
const capitalise = (text) => text.charAt(0).toUpperCase() + text.slice(1)

/**
 * @param {Diagnosis} d
 * @param {import('./profiles.js').ReportProfiles} profiles
 */
function culpritsSection (d, profiles) {
  if (d.culprits.length === 0) {
    return `<section class="hr-section" id="culprits"><h2>Culprits</h2><p class="hr-muted">${d.category === 'insufficient-data' ? 'None: there is not enough data to blame any code.' : 'No function stands out.'}</p></section>`
  }
  const linked = profiles.cpu !== null || profiles.heap !== null
  const manyThreads = threadCount(d) > 1
  const items = d.culprits.map((c, i) => {
    const share = culpritShare(c, profiles.heapKind === 'retained' ? 'what stays alive' : 'allocations')
    const calls = (c.calls ?? []).filter(k => k.share >= 0.02).slice(0, 3)
    const bar = c.measure === 'listeners' ? '' : `<span class="hr-bar"><span style="width:${Math.round(Math.min(1, c.share) * 100)}%"></span></span>`
    return `<li class="hr-culprit${linked ? ' hr-linked' : ''}" data-culprit="${i}"${linked ? ' tabindex="0" role="button" title="show it in the flame graph"' : ''}>
    <div class="hr-c-head"><span class="hr-c-fn"${c.label ? ` title="${esc(c.function)} to V8; named from its source"` : ''}>${esc(c.label ?? c.function)}</span> <span class="hr-c-where">${esc(placeText(c.file, c.line))}</span> <span class="hr-c-share hr-m-${esc(c.measure)}">${esc(share)}</span>${bar}<span class="hr-c-kind">${esc(c.kind)}</span>${manyThreads && c.threads?.length ? ` <span class="hr-c-thread">in ${esc(threadPlace(c.threads))}</span>` : ''}</div>
    ${c.reason ? `<div class="hr-c-reason">${esc(c.reason)}</div>` : ''}
    ${calls.length > 0 ? `<div class="hr-c-calls">time goes to ${calls.map(k => `${esc(k.label ?? k.function)} <span class="hr-muted">(${esc(k.kind === 'app' ? `${placeText(k.file, k.line)}` : k.file || k.kind)})</span> ${esc(formatPercent(k.share, 0))}`).join(', ')}</div>` : ''}
    <div class="hr-c-note" hidden></div>
  </li>`
  })
  return `<section class="hr-section" id="culprits">
  <h2>Culprits${linked ? ' <small>click one to see it in the flame graph</small>' : ''}</h2>
  <ol class="hr-culprits">${items.join('\n')}</ol>
</section>`
}

/** @param {Diagnosis} d */
function recommendationsSection (d) {
  if (d.recommendations.length === 0) return ''
  return `<section class="hr-section" id="recommendations">
  <h2>What to do</h2>
  <ul class="hr-recs">${d.recommendations.map(r => `<li>${codeSpans(r)}</li>`).join('')}</ul>
</section>`
}

/**
 * Recommendations name commands and flags; set them in code type.
 * @param {string} text
 */
function codeSpans (text) {
  return esc(text)
    .replace(/(^|[\s(])([\w@./-]+\.(?:[cm]?js|[cm]?ts|jsx|tsx):\d+)/g, '$1<code>$2</code>')
    .replace(/(hotpath \w+ -- [^:;]+?)(?=$|[;]|\.\s)/g, '<code>$1</code>')
    .replace(/(^|\s)(--[\w-]+(?:=[^\s,;)]+)?)/g, '$1<code>$2</code>')
}

/**
 * The CPU profiles the probes wrote, as they are, each with the file name it is saved under.
 * @param {RunData} data
 * @returns {{ name: string, label: string, profile: unknown }[]}
 */
function rawProfiles (data) {
  return data.threads.flatMap(t => {
    const profile = t.profiles.cpu ? readRunProfile(data, t.profiles.cpu) : null
    return profile ? [{ name: String(t.profiles.cpu), label: `pid ${t.pid}${t.threadId ? ` thread ${t.threadId}` : ''}`, profile }] : []
  })
}

/**
 * @param {import('./profiles.js').ReportProfiles} p
 * @param {{ name: string, label: string }[]} raw profiles embedded in the page, offered for saving
 */
function flameSection (p, raw) {
  if (p.cpu === null && p.heap === null) {
    return '<section class="hr-section" id="flame"><h2>Where the CPU goes</h2><p class="hr-muted">No CPU profile was recorded in this run (--no-profile, or the target exited before writing it).</p></section>'
  }
  const tabs = p.cpu !== null && p.heap !== null
    ? `<div class="hr-tabs" role="tablist"><button class="hr-tab" data-flame="cpu" role="tab">CPU time</button><button class="hr-tab" data-flame="heap" role="tab">${p.heapKind === 'retained' ? 'Memory that stays alive' : 'Allocations'}</button></div>`
    : ''
  const save = raw.length > 0
    ? `<span class="hr-save">Save the CPU profile${raw.length > 1 ? 's' : ''} (Chrome DevTools, speedscope): ${raw.map((r, i) => `<button class="hr-save-profile" data-profile="${i}" title="${esc(r.name)}">${esc(raw.length > 1 ? r.label : r.name)}</button>`).join(' ')}</span>`
    : ''
  return `<section class="hr-section" id="flame">
  <div class="hr-section-head"><h2>${p.cpu !== null ? 'Where the CPU goes' : 'Where the memory goes'}</h2>${tabs}${save}</div>
  <div id="hr-flame"></div>
</section>`
}

/** @param {Diagnosis} d */
function evidenceSection (d) {
  const rows = d.evidence.map(e => [
    `${e.decisive ? '<span class="hr-decisive" title="decided the verdict">▸</span> ' : ''}${esc(e.label)}`,
    esc(formatValue(e.value, e.unit)),
    e.threshold === null ? '' : `≥ ${esc(formatValue(e.threshold, e.unit))}`,
    esc(e.verdict)
  ])
  return `<section class="hr-section" id="evidence">
  <h2>Evidence <small>▸ decided the verdict · the rules: docs/diagnosis.md</small></h2>
  ${htmlTable(['signal', 'value', 'threshold', 'verdict'], rows, { numeric: [1, 2], cls: 'hr-evidence' })}
</section>`
}

/**
 * The machine the run was recorded on, as far as run.json says (cores always; a model, OS and memory when recorded).
 * @param {any} host
 */
function machine (host) {
  if (!host) return 'not recorded'
  const parts = [`${host.cores} cores`]
  if (typeof host.model === 'string') parts.push(host.model)
  if (typeof host.platform === 'string') parts.push([host.platform, host.release, host.arch].filter(x => typeof x === 'string').join(' '))
  if (typeof host.memory === 'number') parts.push(`${formatBytes(host.memory)} of memory`)
  return parts.join(', ')
}

/**
 * @param {Diagnosis} d
 * @param {RunData} data
 */
function runSection (d, data) {
  const main = data.threads.find(t => t.pid === data.run.listening.pid && t.threadId === 0) ?? data.threads[0]
  const hello = main?.hello ?? {}
  const flags = Array.isArray(hello.execArgv) && hello.execArgv.length > 0 ? hello.execArgv.join(' ') : 'none'
  const host = data.run.host
  const exit = d.run.exit
  /** @type {[string, string][]} */
  const facts = [
    ['command', d.run.command.join(' ')],
    ['working directory', String(data.run.cwd)],
    ['loaded', d.run.url],
    ['Node.js', String(hello.node ?? 'unknown')],
    ['Node.js flags', flags],
    ['heap limit', hello.heapLimit ? formatBytes(Number(hello.heapLimit)) : 'unknown'],
    ['machine', machine(host)],
    ['started', new Date(data.run.startedAt).toISOString()],
    ['load window', `${((d.run.window.end - d.run.window.start) / 1000).toFixed(2)} s`],
    ['probe', `sampled every ${data.run.probe?.interval ?? 10} ms; CPU profile every ${data.run.probe?.profileInterval ?? 1000} µs${data.run.probe?.profileInterval === 0 ? ' (off)' : profiledPart(data.run.probe?.profileSlice)}`],
    ['target exit', exit.crashed ? `crashed (${exit.signal ?? `code ${exit.code}`})` : `stopped by hotpath (${exit.signal ?? `code ${exit.code}`})`],
    ['run directory', d.run.dir],
    ['hotpath', `${d.version}`]
  ]
  const rows = d.processes.flatMap(p => p.threads.map(t => [
    esc(`${t.pid}${t.threadId ? ` / thread ${t.threadId}` : ''}`),
    esc(t.role) + (t.serving ? ' <span class="hr-tag">serving</span>' : ''),
    esc(formatCount(t.samples)),
    esc(formatPercent(t.utilization, 0)),
    t.cpuPercent === null ? '' : esc(formatPercent(t.cpuPercent, 0)),
    esc(formatMs(t.delayP99)),
    esc(formatBytes(t.heapUsed)),
    esc(formatPercent(t.gcShare, 1)),
    esc(formatCount(t.requests))
  ]))
  return `<section class="hr-section" id="run">
  <h2>Run</h2>
  <dl class="hr-facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>
  ${rows.length > 0 ? htmlTable(['pid', 'role', 'samples', 'ELU', 'CPU', 'delay p99', 'heap used', 'GC', 'requests'], rows, { numeric: [2, 3, 4, 5, 6, 7, 8], cls: 'hr-processes' }) : ''}
</section>`
}

/**
 * Which part of the load window the CPU profile covers, in words.
 * @param {{ from: number, seconds: number } | null | undefined} slice
 */
function profiledPart (slice) {
  if (!slice) return ', all the load window'
  return `, from ${slice.from} s into the load window for ${slice.seconds} s`
}
