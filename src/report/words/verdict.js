import { formatBytes, formatMs, formatPercent } from '../format.js'
import { otherPortsSentence } from './ports.js'
import { topWaitSentence } from './waits.js'
import { avoidableAside, avoidableVerdict } from './avoidable.js'

/** @typedef {import('../../analysis/rules.js').VerdictFacts} VerdictFacts */

/**
 * The verdict in a sentence or two, from the facts it rests on.
 * @param {VerdictFacts} f
 * @returns {string}
 */
export function verdictSummary (f) {
  const busy = f.otherCores !== null
    ? ` Other processes used ${f.otherCores.toFixed(1)} cores during the run, so this may be the machine rather than the server: run again on a quiet one.`
    : ''
  // A large avoidable cost beside another verdict (a loop not busy enough for it to be the verdict) is said too.
  const aside = f.avoidable && f.kind !== 'avoidable' ? avoidableAside(f.avoidable) : ''
  return ruleSentence(f) + aside + (f.growingCost ? growingCostSentence(f.growingCost) : '') + (f.snapshots ? snapshotSentence(f.snapshots, f.kind === 'leak') : '') + busy +
    (f.otherPorts ? ` This is about the port that was loaded:${otherPortsSentence(f.otherPorts)}` : '')
}

/**
 * What the heap snapshots after the load add to the verdict: that they follow, or, when they were not taken, what the
 * verdict rests on instead and the command that takes them.
 * @param {import('../../analysis/rules.js').SnapshotFacts} s
 * @param {boolean} leak whether the verdict is a leak
 */
export function snapshotSentence (s, leak) {
  const heap = s.heapBytes === null ? '' : formatBytes(s.heapBytes)
  if (s.state === 'pending') {
    return s.reason === 'kept'
      ? ` Heap snapshots follow (about ${s.seconds} s; Ctrl-C skips them): they tell a leak from a heap that filled once, and name what keeps it.`
      : ` Heap snapshots follow (about ${s.seconds} s; Ctrl-C skips them): they name what grows with each request.`
  }
  if (s.state !== 'skipped') return ''
  const why = s.why === 'budget'
    ? `the heap holds ${heap}, which three snapshots would take about ${s.seconds} s to read, beyond the ${s.budget} s doctor gives them (--snapshot-time)`
    : s.why === 'interrupted' ? 'they were skipped (Ctrl-C)' : s.why === 'unfinished' ? 'hotpath stopped before it took them' : 'the target had ended'
  const look = `hotpath heap ${s.target} names what keeps it`
  if (s.reason === 'cost') return ` Heap snapshots, which name what grows with each request, were not taken: ${why}; ${look}.`
  if (leak) {
    const basis = [s.trend ? `R² ${s.trend.r2.toFixed(2)} over the window` : null, s.trend?.kept ? `${formatBytes(s.trend.kept)} kept by the full collections around the load` : null].filter(Boolean).join(', ')
    return ` This rests on the heap's trend alone${basis ? ` (${basis})` : ''}, not on heap snapshots: ${why}; ${look}.`
  }
  return ` The load left ${formatBytes(s.keptBytes)} alive, but heap snapshots, which tell a leak from a heap that filled once, were not taken: ${why}; ${look}.`
}

/**
 * @param {import('../../analysis/rules.js').GrowingCost} g
 */
export function growingCostSentence (g) {
  const rose = `CPU per request rose from ${formatMs(g.firstMs)} to ${formatMs(g.lastMs)} over ${Math.round(g.requests).toLocaleString('en-US')} requests at the same load`
  if (g.grows) {
    const w = g.grows
    const at = w.file ? `, ${w.file}${w.line ? `:${w.line}` : ''}` : ''
    return ` Each request costs more than the last because \`${w.holding}\` (${w.holder}${at}) grows by ${entries(w.perRequest, w.constructor)} per request: ${rose}, and whatever reads it whole gets slower the longer the server runs.`
  }
  const kept = g.keptPerRequest !== null ? `, while each request left ${formatBytes(g.keptPerRequest)} alive on the heap` : ''
  return ` Each request costs more than the last: ${rose}${kept} — state that grows with every request served (a list scanned, copied or serialised whole) makes the server slower the longer it runs.`
}

/**
 * "one `Object`", "2.0 `Object`s", "0.5 `Object`s"
 * @param {number} n
 * @param {string} constructor
 */
function entries (n, constructor) {
  const rounded = n >= 0.95 && n < 1.05 ? 'one' : n.toFixed(1)
  return `${rounded} \`${constructor}\`${rounded === 'one' ? '' : 's'}`
}

/**
 * @param {import('../../analysis/rules.js').RuleFacts} f
 * @returns {string}
 */
function ruleSentence (f) {
  switch (f.kind) {
    case 'short-coverage':
      // logsMissing: event logs of the run are gone (said first, with their files): loading longer would not help.
      return f.logsMissing
        ? `Not enough data: the probe's samples left cover only ${f.coverage.toFixed(2)} s of the load (at least ${f.minCoverage} s are needed), because ${f.logsMissing === 1 ? 'the event log that held them is' : `${f.logsMissing} event logs that held them are`} missing.`
        : `Not enough data: the probe's samples cover only ${f.coverage.toFixed(2)} s of the load (at least ${f.minCoverage} s are needed); run the load longer.`
    case 'no-requests':
      return 'Not enough data: the server finished no request during the load, and its event loop was not blocked.'
    case 'leak': {
      const perRequest = f.bytesPerRequest !== null ? ` (about ${formatBytes(f.bytesPerRequest)} per request)` : ''
      return `Memory is leaking: what survives garbage collection grows by ${formatBytes(f.bytesPerSecond, '/s')}${perRequest} and never comes back down — ${formatBytes(f.growth)} over the ${f.seconds.toFixed(0)} s of load.`
    }
    case 'gc':
      return `Garbage collection is slowing the server: ${formatPercent(f.share, 0)} of the time goes to GC pauses` +
        (f.dominant ? `, mostly ${f.dominant === 'scavenge' ? 'scavenges of short-lived objects (young generation)' : `${f.dominant} collections of the old generation`}` : '') + '.'
    case 'no-request-finished':
      return `The event loop is blocked: no request finished during the load and the loop was held for up to ${formatMs(f.delayMaxMs)} at a time.`
    case 'cpu-per-request':
      return `The event loop is blocked: each request holds it for ${formatMs(f.cpuPerRequestMs)} of CPU, so requests queue behind each other (event-loop delay p99 ${formatMs(f.delayP99Ms)}).`
    case 'long-tasks':
      return `The event loop is blocked: single tasks hold it for up to ${formatMs(f.delayMaxMs)} (p99 ${formatMs(f.delayP99Ms)}), though requests cost ${f.cpuPerRequestMs > 0 ? `only ${cpuEach(f.cpuPerRequestMs)}` : cpuEach(0)} — look for synchronous I/O or occasional heavy work.`
    case 'waiting':
      return `The server is waiting on I/O: requests take ${formatMs(f.serverTimeMs)} on the server but ${f.cpuPerRequestMs > 0 ? `only ${cpuEach(f.cpuPerRequestMs)}` : cpuEach(0)}, and the event loop is idle ${formatPercent(f.idle, 0)} of the time` +
        (f.runQueue !== null && f.runQueue >= 0.1 ? `; its thread waited for a CPU ${formatPercent(f.runQueue, 0)} of the time (the machine is short of cores).` : '.') +
        (f.topWait ? topWaitSentence(f.topWait) : '') +
        (f.agent ? ` Outgoing requests queued for a free socket in ${f.agent.agent} (maxSockets ${f.agent.maxSockets}).` : '')
    case 'avoidable':
      return avoidableVerdict(f)
    case 'healthy':
      return `No problem found: ${Math.round(f.requestsPerSecond).toLocaleString('en-US')} requests/s at ${cpuEach(f.cpuPerRequestMs)}, event-loop delay p99 ${formatMs(f.delayP99Ms)}` +
        (f.busy ? '; the load keeps the CPU busy without blocking the event loop.' : '.')
  }
}

/**
 * A request's CPU in a verdict. It is measured net of the probe's own work (signals.js), and none is left when the
 * process's CPU does not exceed what the probe took: that is no measured 0 — the requests cost too little to tell.
 * @param {number} ms
 */
function cpuEach (ms) {
  return ms > 0 ? `${formatMs(ms)} of CPU each` : "too little CPU each to tell apart from hotpath's own"
}

/**
 * The headline of a run that failed: what happened first, then what the figures said until then.
 * @param {import('../../analysis/run-failure.js').RunFailure} f
 * @param {{ category: string, summary: string }} measured
 */
export function failureSummary (f, measured) {
  const when = f.at !== null ? `, ${f.at} s into the load` : ''
  const error = f.error ? `: ${f.error.message}${f.error.at ? ` (at ${f.error.at.file}:${f.error.at.line})` : ''}` : ''
  const head = f.category === 'target-failed'
    ? `The run did not measure the server: ${f.what}${when}${error}.`
    : `The run did not measure the server: ${f.what}.`
  return measured.category === 'insufficient-data' || measured.category === 'healthy'
    ? head
    : `${head} Until then, the figures said ${measured.category}: ${measured.summary}`
}
