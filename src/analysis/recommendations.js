import { formatBytes, formatMs } from '../report/format.js'
import { dominantGc, THRESHOLDS } from './rules.js'

/** @typedef {import('./signals.js').Signals} Signals */
/** @typedef {import('./rules.js').Category} Category */
/** @typedef {{ function: string, label?: string, file: string, line: number, share: number, kind: string, measure?: string }} CulpritLike */

/**
 * What to do next, most useful first: the fix for the category, then what else the evidence showed.
 * @param {Category} category
 * @param {Signals} s
 * @param {CulpritLike[]} culprits
 * @param {{ command: string[] }} run
 * @returns {string[]}
 */
export function recommend (category, s, culprits, run) {
  // The code that burns the CPU (or allocates), not the place a leaking listener is added: that gets its own advice.
  const top = culprits.find(c => c.kind === 'app' && c.measure !== 'listeners' && c.measure !== 'waits') ?? culprits.find(c => c.measure !== 'listeners' && c.measure !== 'waits')
  const where = top ? `${top.label ?? top.function} (${top.file}:${top.line})` : null
  const command = run.command.join(' ')
  /** @type {string[]} */
  const out = []
  switch (category) {
    case 'event-loop':
      if (where) out.push(`Make ${where} cheaper or move it off the request path: it is the hottest code while the loop is blocked.`)
      out.push('Move CPU-heavy work (hashing, compression, big JSON, templating) to worker threads, or cache its result; prefer the async crypto and zlib APIs over the *Sync ones.')
      out.push(`See where the time goes: hotpath flame -- ${command}`)
      break
    case 'io': {
      for (const o of s.outgoing) {
        if (o.share < THRESHOLDS.waitShare) continue
        out.push(`Requests spend ${Math.round(o.share * 100)}% of their time waiting on ${o.target} (${formatMs(o.meanMs)} a call${o.perRequest >= 1.05 ? `, ${o.perRequest.toFixed(1)} calls a request` : ''})${o.site ? `, called at ${o.site.file}:${o.site.line}` : ''}: cache its answers, make the upstream faster, or call it in parallel with the other work of the request.`)
      }
      out.push('Find what requests wait for: outgoing HTTP calls, database queries, file reads. Time them, cache what can be cached, and run independent calls in parallel.')
      for (const a of s.agents) {
        out.push(`Outgoing requests queue in ${a.agent}: raise its maxSockets (now ${a.maxSockets}) or use a keep-alive agent sized for the concurrency you need; ${a.maxQueued} requests waited for a socket.`)
      }
      out.push('Check the connection pool sizes of database and HTTP clients against the concurrency you serve.')
      break
    }
    case 'gc': {
      const kind = dominantGc(s)
      if (kind === 'scavenge') {
        out.push('Most GC time is scavenges of short-lived objects: allocate less per request (reuse buffers, avoid intermediate arrays and copies), or give the young generation more room with node --max-semi-space-size=64 (MB; try 32–128).')
      } else {
        const near = s.memory.heapLimit > 0 && s.memory.heapUsed > 0.7 * s.memory.heapLimit
        out.push(near
          ? `The heap is at ${formatBytes(s.memory.heapUsed)} of a ${formatBytes(s.memory.heapLimit)} limit: raise it with node --max-old-space-size=<MB>, and keep less data alive.`
          : 'Most GC time is spent on the old generation: keep fewer long-lived objects (caches, buffers held across requests).')
      }
      if (where) out.push(`Start with ${where}: it allocates the most.`)
      break
    }
    case 'memory-leak':
      if (where) out.push(`Look at what ${where} keeps alive: it allocates the most of what stays on the heap.`)
      out.push('Look for collections that only grow: module-level arrays, Maps and caches without eviction, listeners added per request, timers and promises never settled. Bound caches (an LRU) and remove listeners you add.')
      out.push(`Take heap snapshots a minute apart and compare them in Chrome DevTools (node --inspect ${run.command.slice(1).join(' ')}).`)
      break
    case 'healthy':
      if (s.helpers.utilization >= THRESHOLDS.busy) {
        out.push(`The worker threads are ${Math.round(s.helpers.utilization * 100)}% busy and requests wait for them: give the pool as many threads as there are cores, or make each task cheaper.`)
      }
      if (s.loop.utilization >= THRESHOLDS.busy) {
        out.push('The load keeps one core busy: to serve more, run one process per core (node:cluster or a process manager) behind the same port.')
      }
      if (where && top && top.share >= 0.2) out.push(`If you need more from one core, ${where} takes ${Math.round(top.share * 100)}% of the CPU.`)
      out.push('Compare before and after a change with hotpath load --json -o before.json, then hotpath compare before.json after.json.')
      break
    case 'insufficient-data':
      out.push('Load the server for longer (-d 20) or at a path that does real work (--path /api/...), and check that it answers requests (hotpath load shows status codes).')
      break
  }
  const leak = s.listeners.find(l => l.count >= THRESHOLDS.listeners)
  if (leak) {
    out.unshift(`${leak.count.toLocaleString('en-US')} listeners for '${leak.event}' were added to one ${leak.emitter}${leak.site ? ` at ${leak.site.file}:${leak.site.line}` : ''}: the code adds a listener per request and never removes it, so every emit runs all of them. Add it once (or use once()), and do not raise defaultMaxListeners to hide the warning.`)
  }
  if (category === 'event-loop' && s.loop.delayMax >= 1000) {
    out.push(`One task held the loop for ${formatMs(s.loop.delayMax)}: look for synchronous I/O (fs.*Sync, require() inside handlers) and unbounded loops.`)
  }
  return out
}
