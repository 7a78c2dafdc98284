import { formatBytes, formatMs } from '../report/format.js'
import { dominantGc, THRESHOLDS } from './rules.js'

/** @typedef {import('./signals.js').Signals} Signals */
/** @typedef {import('./rules.js').Category} Category */
/** @typedef {{ function: string, label?: string, file: string, line: number, share: number, kind: string, measure?: string, threads?: { pid: number, threadId: number }[] }} CulpritLike */

/**
 * What to do next, most useful first: the fix for the category, then what else the evidence showed.
 * @param {Category} category
 * @param {Signals} s
 * @param {CulpritLike[]} culprits
 * @param {{ command: string[] }} run
 * @returns {string[]}
 */
export function recommend (category, s, culprits, run) {
  // The code that burns the serving threads' CPU (or allocates), not the place a leaking listener is added, nor what
  // keeps a worker pool busy: those get their own advice.
  const served = culprits.filter(c => c.measure !== 'listeners' && c.measure !== 'waits' && !inPool(c, s))
  const top = served.find(c => c.kind === 'app') ?? served[0]
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
      out.push(...waitAdvice(s))
      const waitLines = new Set(s.waits.sites.map(w => `${w.site.file}:${w.site.line}`))
      for (const o of s.outgoing) {
        if (o.share < THRESHOLDS.waitShare || (o.site && waitLines.has(`${o.site.file}:${o.site.line}`))) continue
        out.push(`Requests spend ${Math.round(o.share * 100)}% of their time waiting on ${o.target} (${formatMs(o.meanMs)} a call${o.perRequest >= 1.05 ? `, ${o.perRequest.toFixed(1)} calls a request` : ''})${o.site ? `, called at ${o.site.file}:${o.site.line}` : ''}: cache its answers, make the upstream faster, or call it in parallel with the other work of the request.`)
      }
      if (out.length === 0) out.push('Find what requests wait for: outgoing HTTP calls, database queries, file reads. Time them, cache what can be cached, and run independent calls in parallel.')
      // An agent whose queue the wait tracer blamed on its construction has had its say.
      const pooled = s.waits.sites.some(w => w.pool?.site && w.queue && w.queue.msPerWait >= THRESHOLDS.poolQueueMs)
      for (const a of pooled ? [] : s.agents) {
        out.push(`Outgoing requests queue in ${a.agent}: raise its maxSockets (now ${a.maxSockets}) or use a keep-alive agent sized for the concurrency you need; ${a.maxQueued} requests waited for a socket.`)
      }
      if (!s.waits.sites.some(w => w.share >= THRESHOLDS.waitShare)) out.push('Check the connection pool sizes of database and HTTP clients against the concurrency you serve.')
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
        const task = culprits.find(c => c.measure === 'cpu' && inPool(c, s))
        out.push(`The worker threads are ${Math.round(s.helpers.utilization * 100)}% busy and requests wait for them: give the pool as many threads as there are cores, or make each task cheaper${task ? ` — ${task.label ?? task.function} (${task.file}:${task.line}) takes ${Math.round(task.share * 100)}% of their CPU` : ''}.`)
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

/**
 * Whether a culprit was found only in threads that do not serve the load (a worker pool).
 * @param {CulpritLike} c
 * @param {Signals} s
 */
function inPool (c, s) {
  const threads = c.threads ?? []
  return threads.length > 0 && threads.every(t => s.threads.some(x => x.pid === t.pid && x.threadId === t.threadId && !x.serving))
}

/**
 * What to do about the lines where requests wait, most time first: a pool too small, an N+1, a slow call.
 * @param {Signals} s
 * @returns {string[]}
 */
function waitAdvice (s) {
  const out = []
  for (const w of s.waits.sites) {
    if (w.share < THRESHOLDS.waitShare) continue
    const at = `${w.site.file}:${w.site.line}`
    if (w.queue && w.queue.msPerWait >= THRESHOLDS.poolQueueMs && w.pool) {
      const made = w.pool.site ? ` created at ${w.pool.site.file}:${w.pool.site.line}${w.pool.limit ? ` with ${w.pool.limit.key}: ${w.pool.limit.value}` : ''}` : ''
      const call = callWord(w.resource.type)
      out.push(`Requests wait ${formatMs(w.queue.msPerWait)} for one of the ${w.pool.connections} connections to ${w.pool.endpoint} before their ${call} at ${at} even starts (it takes ${formatMs(w.msPerTrip ?? 0)}): the pool${made} is too small for the concurrency you serve. Raise its limit (and the backend's connection limit with it), or make each ${call} shorter.`)
      continue
    }
    if (w.sequential) {
      const batch = batchHint(w.resource.type)
      out.push(`Each request waits ${Math.round(w.sequential.perRequest)} times one after another at ${at} (${w.resource.name}, ${formatMs(w.msPerWait)} each)${w.sequential.loop !== null && `${w.sequential.loop.file}:${w.sequential.loop.line}` !== at ? `, called in a loop at ${w.sequential.loop.file}:${w.sequential.loop.line}` : ''}: an N+1. ${batch} would save ~${formatMs(w.sequential.savedMs)} a request.`)
      continue
    }
    if (w.parallel && w.perRequest >= THRESHOLDS.sequentialWaits) {
      out.push(`Each request makes ${Math.round(w.perRequest)} round trips at once at ${at} (${w.resource.name}): ${batchHint(w.resource.type)} would make it one.`)
      continue
    }
    out.push(`Requests spend ${Math.round(w.share * 100)}% of their time at ${at} waiting on ${w.resource.name} (${formatMs(w.msPerWait)} each): ${remedy(w.resource.type)}`)
  }
  return out
}

/**
 * What one operation on this kind of backend is called.
 * @param {string} type
 */
function callWord (type) {
  switch (type) {
    case 'postgres':
    case 'mysql':
    case 'mongodb':
      return 'query'
    case 'redis':
    case 'memcached':
      return 'command'
    case 'http': return 'request'
    default: return 'round trip'
  }
}

/**
 * What usually shortens a wait on this kind of thing.
 * @param {string} type
 */
function remedy (type) {
  switch (type) {
    case 'postgres':
    case 'mysql':
    case 'mongodb':
      return 'make the query faster (an index, a smaller result), cache its answer, or run it in parallel with the request\'s other work.'
    case 'redis':
    case 'memcached':
      return 'fetch it together with the request\'s other keys, or keep a short-lived copy in the process.'
    case 'http':
      return 'cache its answers, make the upstream faster, or call it in parallel with the request\'s other work.'
    case 'timer':
      return 'every request waits for this timer: remove it, or shorten it.'
    case 'worker':
      return 'requests wait for a worker thread\'s reply: make its task cheaper, or run more workers.'
    case 'child process':
      return 'starting a process per request is slow: keep one running and talk to it, or do the work in the server.'
    case 'fs':
      return 'read the file once and keep it, or stream it instead of waiting for all of it.'
    case 'dns':
      return 'cache the lookup or reuse connections (keep-alive): dns.lookup waits for libuv\'s thread pool.'
    case 'thread pool':
      return 'the call waits for a turn in libuv\'s thread pool (4 threads unless UV_THREADPOOL_SIZE says more): fewer such calls, or a bigger pool.'
    case 'client':
      return 'requests wait for their own bodies to arrive: slow clients or big uploads, not the server.'
    default:
      return 'make what answers it faster, cache its answer, or run it in parallel with the request\'s other work.'
  }
}

/**
 * How a backend batches many reads into one.
 * @param {string} type
 */
function batchHint (type) {
  switch (type) {
    case 'redis': return 'One MGET (or a pipeline)'
    case 'postgres':
    case 'mysql':
      return 'One query with WHERE id IN (…) or = ANY($1)'
    case 'mongodb': return 'One find with { _id: { $in: [...] } }'
    case 'http': return 'One batched call to the upstream, or Promise.all'
    default: return 'Batching them into one call, or running them at once with Promise.all,'
  }
}
