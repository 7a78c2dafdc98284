// Why a culprit is blamed, in words. The same thing one layer down, as facts: src/analysis/culprits.js.
import { placeText, formatBytes, formatMs, formatPercent } from '../format.js'
import { viaPackages, waitCounts } from './waits.js'
import { avoidableWhat } from './avoidable.js'

/**
 * Why a culprit is blamed, in words, from its facts.
 * @param {import('../../analysis/culprits.js').CulpritFacts} f
 * @returns {string}
 */
export function culpritReason (f) {
  switch (f.kind) {
    case 'adds-listener':
      return `adds a listener for '${f.event}' to ${f.emitter} on every request (${f.count.toLocaleString('en-US')} by the end of the load); each emit runs them all`
    case 'outgoing-calls':
      return `waits on ${f.target}: ${f.calls.toLocaleString('en-US')} calls, ${formatMs(f.meanMs)} each on average (max ${formatMs(f.maxMs)})${f.failed > 0 ? `, ${f.failed.toLocaleString('en-US')} failed` : ''}`
    case 'waits': {
      const queued = f.queue ? `; ${formatMs(f.queue.msPerWait)} of each is spent queueing before the round trip (${formatMs(f.msPerTrip ?? 0)}) starts` : ''
      const seq = f.sequential ? `; one after another${f.sequential.loop ? ` from ${placeText(f.sequential.loop.file, f.sequential.loop.line)}` : ''}: batching would save ~${formatMs(f.sequential.savedMs)} a request` : ''
      const at = f.resource.target && !f.resource.name.includes(f.resource.target) ? ` at ${f.resource.target}` : ''
      const gate = f.behind ? ': a limit of the app\'s own on how many requests go on at once (no connection pool was full)' : ''
      const backend = f.backend ? `; ${formatMs(f.backend.queuedMs)} of each round trip queued behind other operations at ${f.resource.target || 'the backend'}, ${formatMs(f.backend.serviceMs)} its own` : ''
      return `waits on ${f.resource.name}${at}: ${waitCounts(f)}${gate}${queued}${backend}${seq}${byLine(f.breakdown)}${viaPackages(f)}`
    }
    case 'keeps': {
      const per = f.bytesPerRequest !== null ? `, ${formatBytes(f.bytesPerRequest)} a request` : ''
      return `keeps alive ${f.count.toLocaleString('en-US')} \`${f.constructor}\` the load made (${formatBytes(f.bytes)}${per}), found in heap snapshots after it: ${f.path.join(' ← ')}`
    }
    case 'runs-middleware': {
      const [first, ...rest] = f.packages
      return `${formatPercent(f.of, 0)} of its CPU is ${first.name}'s code run inside its call (${first.function}${rest.length > 0 ? ` → ${rest.map(p => `${p.name} ${p.function}`).join(' → ')}` : ''}): work the middleware patched into what it called`
    }
    case 'avoidable': {
      const c = f.cost
      const via = c.via ? ` inside ${c.via.package ?? 'a package'}'s ${c.via.label ?? c.via.function}` : ''
      const installed = c.installed ? `, ${formatPercent(c.installed.share, 0)} in ${c.installed.package ?? c.installed.file}'s ${c.installed.hook}${c.installed.installer && c.installed.installer !== c.installed.package ? ` (installed by ${c.installed.installer})` : ''}` : ''
      return `${avoidableWhat(c)}${via}: ${formatPercent(c.share, 0)} of the CPU${installed}, work the request path need not do`
    }
    case 'allocates-itself':
      return `${formatPercent(f.of, 0)} of it is its own allocations — object and array literals, strings it builds — which heap sampling gives no line: ` +
        (f.lineFrom === 'cpu-time' ? 'the line shown is where its CPU time goes' : 'shown at its first line')
    case 'creates-pool': {
      const pool = /** @type {NonNullable<typeof f.pool>} */ (f.pool)
      const limit = [pool.class, pool.limit ? `${pool.limit.key}: ${pool.limit.value}` : null].filter(Boolean).join(', ')
      return `creates the pool of connections to ${pool.endpoint} (${limit}), all ${pool.connections} busy: requests wait ${formatMs(f.queue?.msPerWait ?? 0)} for a connection, then ${formatMs(f.msPerTrip ?? 0)} for ${f.resource.name}`
    }
  }
}

/**
 * `; by line: 65 6% (20 a request), 68 14% (60, at util/helpers.js:20, 21, 24)` — a handler's waits, line by line.
 * @param {import('../../analysis/waits.js').WaitBreakdown[] | null | undefined} breakdown
 */
function byLine (breakdown) {
  if (!breakdown || breakdown.length === 0) return ''
  const at = (/** @type {{ file: string, line: number }[]} */ sites) => {
    /** @type {Map<string, number[]>} */
    const byFile = new Map()
    for (const x of sites) byFile.set(x.file, [...(byFile.get(x.file) ?? []), x.line])
    return [...byFile].map(([file, lines]) => `${file}:${lines.join(', ')}`).join('; ')
  }
  const count = (/** @type {number} */ n) => n >= 10 ? Math.round(n).toString() : n.toFixed(1).replace(/\.0$/, '')
  return `; by line: ${breakdown.map(b => `${b.line} ${formatPercent(b.share, 0)} (${count(b.perRequest)} a request${b.sites.length > 0 ? `, at ${at(b.sites)}` : ''})`).join(', ')}`
}
