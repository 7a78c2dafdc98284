import { placeText, formatBytes, formatCount, formatMs } from '../format.js'
import { experimentSentence } from './experiments.js'
import { avoidableAdviceText, overloadText, polyfillText, precompileText } from './avoidable.js'
import { connectionsText, oneConnection, whereWaited } from './waits.js'

/** @typedef {import('../../analysis/recommendations.js').Advice} Advice */
/** @typedef {import('../../analysis/recommendations.js').CodeAt} CodeAt */
/** @typedef {import('../../analysis/wait-line.js').WaitLine} WaitLine */

/**
 * A recommendation as a person reads it, from its facts.
 * @param {Advice} a
 * @returns {string}
 */
export function adviceText (a) {
  switch (a.kind) {
    case 'make-cheaper': return `Make ${where(a.culprit)} cheaper or move it off the request path: it is the hottest code while the loop is blocked.`
    case 'move-cpu-work': return 'Move CPU-heavy work (hashing, compression, big JSON, templating) to worker threads, or cache its result; prefer the async crypto and zlib APIs over the *Sync ones.'
    case 'profile': return `See where the time goes: hotpath flame -- ${a.command}`
    case 'pool-too-small':
    case 'n-plus-one':
    case 'parallel-round-trips':
    case 'slow-wait':
    case 'app-queue':
    case 'middleware-wait':
      return waitAdviceText(a.kind, a.wait)
    case 'agent-queue-grows': {
      const q = a.queue
      const made = q.created ? ` created at ${q.created.file}:${q.created.line}` : ''
      const starts = a.starts ? ` ${where(a.starts)} starts them faster than they finish and does not wait for them:` : ''
      return `Outgoing requests pile up in the queue of ${q.agent}${made} (maxSockets ${q.maxSockets}): up to ${q.maxQueued.toLocaleString('en-US')} waited for a socket at once, each holding its request and body in memory.${starts} await them, or bound how many are in flight (a queue with a limit), and raise maxSockets if the upstream can take more at once.`
    }
    case 'middleware-cpu': {
      const [first, ...rest] = a.packages
      return `${Math.round(a.share * 100)}% of the CPU is ${first.name}'s code, run inside ${where(a.culprit)} (${first.function}${rest.length > 0 ? ` → ${rest.map(p => `${p.name} ${p.function}`).join(' → ')}` : ''}): work the middleware does on every response. Configure it to do less per request (save or touch only what changed), or give it a cheaper store; the route itself costs the rest.`
    }
    case 'slow-outgoing':
      return `Requests spend ${Math.round(a.share * 100)}% of their time waiting on ${a.target} (${formatMs(a.meanMs)} a call${a.perRequest >= 1.05 ? `, ${a.perRequest.toFixed(1)} calls a request` : ''})${a.site ? `, called at ${placeText(a.site.file, a.site.line)}` : ''}: cache its answers, make the upstream faster, or call it in parallel with the other work of the request.`
    case 'find-waits': return 'Find what requests wait for: outgoing HTTP calls, database queries, file reads. Time them, cache what can be cached, and run independent calls in parallel.'
    case 'agent-queue': return `Outgoing requests queue in ${a.agent}: raise its maxSockets (now ${a.maxSockets}) or use a keep-alive agent sized for the concurrency you need; ${a.maxQueued} requests waited for a socket.`
    case 'check-pool-sizes': return 'Check the connection pool sizes of database and HTTP clients against the concurrency you serve.'
    case 'scavenges': return 'Most GC time is scavenges of short-lived objects: allocate less per request (reuse buffers, avoid intermediate arrays and copies), or give the young generation more room with node --max-semi-space-size=64 (MB; try 32–128).'
    case 'heap-near-limit': return `The heap reached ${formatBytes(a.heapUsed)} of a ${formatBytes(a.heapLimit)} limit: raise it with node --max-old-space-size=<MB>, and keep less data alive.`
    case 'old-generation': return 'Most GC time is spent on the old generation: keep fewer long-lived objects (caches, buffers held across requests).'
    case 'allocates-most': return `Start with ${where(a.culprit)}: it allocates the most.`
    case 'bound-holder': return `Bound ${where(a.culprit)}: it keeps what every request leaves behind. Evict from it (an LRU, a TTL), keep a count or a summary instead of each entry, or stop adding to it per request.`
    case 'keeps-alive': return `Look at what ${where(a.culprit)} keeps alive: it allocates the most of what stays on the heap.`
    case 'growing-collections': return 'Look for collections that only grow: module-level arrays, Maps and caches without eviction, listeners added per request, timers and promises never settled. Bound caches (an LRU) and remove listeners you add.'
    case 'heap-snapshots': return `See what keeps it alive: hotpath heap ${a.target} loads the server between three heap snapshots and names the variable or property that holds what grows.`
    case 'growing-state': {
      const w = a.growing.grows
      const what = w
        ? `\`${w.holding}\` (${w.holder}${w.file ? `, ${w.file}${w.line ? `:${w.line}` : ''}` : ''}) grows with every request:`
        : `find the state that grows with every request — hotpath heap ${a.target} names the variable or property that holds it — and`
      return `Each request costs more than the last (${formatMs(a.growing.firstMs)} of CPU at first, ${formatMs(a.growing.lastMs)} at the end): ${what} bound it, index it, or keep a running summary instead of the whole history.`
    }
    case 'worker-pool-busy':
      return `The worker threads are ${Math.round(a.utilization * 100)}% busy and requests wait for them: give the pool as many threads as there are cores, or make each task cheaper${a.task ? ` — ${where(a.task)} takes ${Math.round(a.task.share * 100)}% of their CPU` : ''}.`
    case 'one-core-busy': return 'The load keeps one core busy: to serve more, run one process per core (node:cluster or a process manager) behind the same port.'
    case 'one-core-hotspot': return `If you need more from one core, ${where(a.culprit)} takes ${Math.round(a.share * 100)}% of the CPU.`
    case 'compare-runs': return 'Compare before and after a change with hotpath load --json -o before.json, then hotpath compare before.json after.json.'
    case 'load-longer': return 'Load the server for longer (-d 20) or at a path that does real work (--path /api/...), and check that it answers requests (hotpath load shows status codes).'
    case 'listener-leak':
      return `${a.count.toLocaleString('en-US')} listeners for '${a.event}' were added to one ${a.emitter}${a.site ? ` at ${placeText(a.site.file, a.site.line)}` : ''}: the code adds a listener per request and never removes it, so every emit runs all of them. Add it once (or use once()), and do not raise defaultMaxListeners to hide the warning.`
    case 'long-task': return `One task held the loop for ${formatMs(a.delayMaxMs)}: look for synchronous I/O (fs.*Sync, require() inside handlers) and unbounded loops.`
    case 'fix-target-error':
      return `Fix what stopped the target first: ${a.error.message}${a.error.at ? `, thrown at ${placeText(a.error.at.file, a.error.at.line)}` : ''}. Its last lines of stderr are in the run (${a.stderrLines} kept).`
    case 'heap-exhausted': return heapExhaustedText(a.heap, a.target, a.retry)
    case 'memory-killed': return memoryKilledText(a.heap, a.retry)
    case 'await-or-bound': return floatingText(a.work)
    case 'find-why-target-stopped': return 'Find why the target stopped: its last lines of stderr are above; run it without hotpath to see it fail the same way.'
    case 'fix-on-port': return `Run the --on-port command yourself, with PORT set to the server's port, and make it exit 0: ${a.command}`
    case 'slower-than-timeout':
      return `${a.timeouts.toLocaleString('en-US')} requests got no answer within ${a.timeoutSeconds} s (-t): the server answers, too slowly at this load. What it did meanwhile is in the figures above; to measure what it serves, load it with fewer connections (-c) or a fixed rate (-R), or allow more time (-t ${a.timeoutSeconds * 3}).`
    case 'load-a-2xx-path': return 'Load a path the server answers with 2xx (--path /api/...), with the method, headers and body it expects (-m, -H, -b), and check it with hotpath load first.'
    case 'measured-setting': return experimentSentence(a.experiment)
    case 'record-again': return `Record the run again for a diagnosis that rests on everything it measured: hotpath doctor -- ${a.command || '<command>'}`
    case 'stop-stack-traces': return avoidableAdviceText(a.kind, a.cost, a.stackTraceLimit)
    case 'use-async-api':
    case 'read-files-once':
    case 'hoist-require':
      return avoidableAdviceText(a.kind, a.cost)
    case 'precompile': return precompileText(a.installed, a.stackTraceLimit)
    case 'remove-polyfill': return polyfillText(a.polyfill)
    case 'overload-protection': return overloadText(a)
    case 'fewer-calls': return fewerCallsText(a.calls)
  }
}

/**
 * @param {import('../../analysis/calls-after.js').CallsAfter} c
 */
function fewerCallsText (c) {
  const n = (/** @type {number} */ v) => v >= 3 ? String(Math.round(v)) : String(Math.round(v * 10) / 10)
  const to = c.to.length > 1 ? `${c.to.slice(0, -1).join(', ')} and ${c.to.at(-1)}` : c.to[0]
  const m = c.most
  const loop = m.loop ? `, one after another in the loop at ${placeText(m.loop.file, m.loop.line)}` : ''
  return `Each request made ${n(c.perRequest)} round trips to ${to}, ${n(m.perRequest)} of them at ${placeText(m.file, m.line)} (${m.op})${loop}: on a loop this busy each call is also the client's CPU — building the query, parsing the reply — so fetch what a request needs in fewer calls (a join, WHERE id IN (…), MGET) rather than one a row. (Counted in a traced load after the window, ${c.traced} requests: the server was too busy to trace in it.)`
}

/**
 * `handler (app.js:12)`: a culprit as advice names it.
 * @param {CodeAt} c
 */
function where (c) {
  return `${c.label ?? c.function} (${placeText(c.file, c.line)})`
}

/**
 * What to do about a line where requests wait: a pool too small, an N+1, round trips at once, a slow call.
 * @param {'pool-too-small' | 'n-plus-one' | 'parallel-round-trips' | 'slow-wait' | 'app-queue' | 'middleware-wait'} kind
 * @param {WaitLine} w
 */
function waitAdviceText (kind, w) {
  const at = whereWaited(w)
  if (kind === 'pool-too-small' && w.queue && w.pool) {
    const made = w.pool.site ? ` created at ${placeText(w.pool.site.file, w.pool.site.line)}${w.pool.limit ? ` with ${w.pool.limit.key}: ${w.pool.limit.value}` : ''}` : ''
    const call = callWord(w.resource.type)
    const wait = `Requests wait ${formatMs(w.queue.msPerWait)} for ${connectionsText(w.pool)} to ${w.pool.endpoint} before their ${call} ${at} even starts (it takes ${formatMs(w.msPerTrip ?? 0)})`
    // A client of one connection with no limit to raise (ioredis with auto-pipelining sends one batch at a time on it).
    if (oneConnection(w.pool)) return `${wait}: the client${made} carries every request's ${call}s on that connection, each held until those before it are sent. Send fewer ${call}s a request (batch them), or spread them over more connections.`
    return `${wait}: the pool${made} is too small for the concurrency you serve. Raise its limit (and the backend's connection limit with it), or make each ${call} shorter.`
  }
  if (kind === 'n-plus-one' && w.sequential) {
    const loop = w.sequential.loop !== null && placeText(w.sequential.loop.file, w.sequential.loop.line) !== placeText(w.site.file, w.site.line) ? `, called in a loop at ${placeText(w.sequential.loop.file, w.sequential.loop.line)}` : ''
    const what = w.lines && w.lines.length > 1 ? `: the same ${callWord(w.resource.type)} from ${w.lines.length} lines, each waiting for the last.` : ': an N+1.'
    return `Each request waits ${Math.round(w.sequential.perRequest)} times one after another ${at} (${w.resource.name}, ${formatMs(w.msPerWait)} each)${loop}${what} ${batchHint(w.resource.type, w.resource.op)} would save ~${formatMs(w.sequential.savedMs)} a request.`
  }
  if (kind === 'app-queue' && w.behind) {
    return `Requests wait ${formatMs(w.behind.msPerWait)} ${at} for other requests to finish: the app lets only so many through at once (a semaphore or a queue of its own; no connection pool was full). Raise that limit if what it guards can take more at once, or make the work it guards shorter.`
  }
  if (kind === 'middleware-wait' && w.via) {
    const first = w.via.chain[0]
    const store = w.via.created ? ` through the ${w.via.created.class} created at ${w.via.created.file}:${w.via.created.line}` : ''
    return `Every request waits ${formatMs(w.msPerWait)} ${at} for ${w.resource.name}${store} — ${first.name} does it on every request, before your route runs (${Math.round(w.share * 100)}% of their time). Index what that ${callWord(w.resource.type)} looks up, or give ${first.name} a faster store (a cache such as Redis), or put it only on the routes that need it.`
  }
  if (kind === 'parallel-round-trips') {
    return `Each request makes ${Math.round(w.perRequest)} round trips at once ${at} (${w.resource.name}): ${batchHint(w.resource.type, w.resource.op)} would make it one.`
  }
  const patched = w.via?.patched ? w.via.chain.slice(w.via.patched) : null
  const by = patched ? ` — ${patched[0].name}'s work, run inside that call (${patched.map(p => `${p.name} ${p.function}`).join(' → ')})` : ''
  return `Requests spend ${Math.round(w.share * 100)}% of their time ${whereWaited(w)} waiting on ${w.resource.name} (${formatMs(w.msPerWait)} each)${by}: ${remedy(w.resource.type)}`
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
 * @param {string} [op] the operation (a command, a folded query)
 */
function batchHint (type, op = '') {
  switch (type) {
    case 'redis': return /^(GET|HGET|HGETALL)\b/i.test(op) ? 'One MGET (or a pipeline)' : 'One pipeline (or MULTI)'
    case 'postgres':
    case 'mysql':
      return 'One query with WHERE id IN (…) or = ANY($1)'
    case 'mongodb': return 'One find with { _id: { $in: [...] } }'
    case 'http': return 'One batched call to the upstream, or Promise.all'
    default: return 'Batching them into one call, or running them at once with Promise.all,'
  }
}

/**
 * What to raise, or lower, when the heap ran out: V8's limit when it sits well below the memory there is, else the
 * container's memory; in both cases fewer requests at once in a process is the other way. After the larger limit was
 * loaded (a crash on heap exhaustion, by default), what that gave leads.
 * @param {import('../../analysis/heap-exhaustion.js').HeapExhaustion} h
 * @param {string} target
 * @param {import('../../analysis/heap-retry.js').HeapRetry} [retry]
 */
function heapExhaustedText (h, target, retry) {
  // V8's limit counts the young generation too: next to the old generation's size the command set, the two read as one
  // number that a raised flag would not seem to raise.
  const set = /--max-old-space-size=(\d+)/.exec(target)?.[1]
  const limit = h.heapLimit !== null ? `${mb(h.heapLimit)} MB${set ? ` (--max-old-space-size=${set} for the old generation, and the young one)` : ''}` : 'its limit'
  const each = h.budgetPerRequest !== null && h.inFlight !== null
    ? ` With ${h.inFlight} requests in flight, each may hold ${formatMb(h.budgetPerRequest)} at most; these held more.`
    : ''
  const where = h.memoryLimit !== null ? `the container's ${mb(h.memoryLimit)} MB` : `the machine's ${mb(h.memory)} MB`
  const fewer = 'Or run fewer requests at once in each process: a queue or a concurrency limit in front of the work, or more processes.'
  if (h.ceiling === 'container') {
    return `The heap ran out at ${limit}, most of ${where}: give the container more memory — raising --max-old-space-size alone would trade the heap's crash for the container's out-of-memory kill.${each} ${fewer}`
  }
  const flag = h.raiseTo !== null ? `--max-old-space-size=${h.raiseTo}` : '--max-old-space-size=<MB>'
  const percentage = nodeMajor(h.node) >= 22 ? ', or --max-old-space-size-percentage=75 to follow the memory the container is given (Node 22 and 24 have it; Node 20 does not)' : ' (on Node 22 and 24, --max-old-space-size-percentage=75 follows the memory given instead)'
  const c = h.inFlight !== null ? `-c ${h.inFlight} ` : ''
  const again = `hotpath doctor ${c}-- ${withFlag(target, flag)}`
  const ceiling = `The heap ran out at V8's limit of ${limit}, far below ${where}: the limit, not the memory, is the ceiling.${each}`
  if (retry && retry.outcome === 'crashed') {
    const at = retry.peakHeap !== null ? ` at ${formatBytes(retry.peakHeap)}` : ''
    const when = retry.seconds !== null ? ` after ${retry.seconds} s of load${retry.firstSeconds !== null ? ` (the first run: ${retry.firstSeconds} s)` : ''}` : ''
    return `Measured: with ${retry.flag} it crashed again${at}${when}: the heap grows with the load — a leak, or more requests held at once than any limit holds — and a larger limit only postpones the crash. ${ceiling} Find what each request keeps alive (hotpath heap, at a concurrency it survives), and bound the requests run at once in each process: a queue or a concurrency limit in front of the work, or more processes.`
  }
  if (retry && retry.outcome === 'survived') {
    const peak = retry.peakHeap !== null ? `, peak heap ${formatBytes(retry.peakHeap)}${retry.heapLimit !== null ? ` of its ${formatBytes(retry.heapLimit)} limit` : ''}` : ''
    const rate = retry.requestsPerSecond !== null ? ` (${retry.requestsPerSecond.toLocaleString('en-US')} req/s)` : ''
    const close = retry.peakHeap !== null && retry.heapLimit !== null && retry.peakHeap > 0.8 * retry.heapLimit ? ' It came close to that limit: more load, or a longer one, may need more still.' : ''
    return `Measured: with ${retry.flag} the load ran without a crash${rate}${peak}.${close} ${ceiling} Set node ${flag}${percentage}. ${fewer}`
  }
  const measured = retry ? ` ${retryNote(retry)}` : ''
  return `${ceiling} Raise it — node ${flag}${percentage} — and load it again at the same concurrency: ${again}.${measured} ${fewer}`
}

/**
 * A retry that did not say whether the larger limit holds: why, in a sentence.
 * @param {import('../../analysis/heap-retry.js').HeapRetry} r
 */
function retryNote (r) {
  if (r.outcome === 'exited') return `Loaded with ${r.flag}, the target exited ${r.exit?.signal ? `on signal ${r.exit.signal}` : `with code ${r.exit?.code}`} after ${r.seconds ?? '?'} s of load, before the load's end${r.peakHeap !== null ? ` (peak heap ${formatBytes(r.peakHeap)}${r.peakRss !== null ? `, RSS ${formatBytes(r.peakRss)}` : ''})` : ''}: not the heap's limit; its last lines of stderr say why.`
  if (r.outcome === 'interrupted') return `Loading it with ${r.flag} was skipped (interrupted).`
  if (r.outcome === 'not-run') return r.why === 'no-room' ? `Not tried here: the machine has less memory free than ${r.value} MB.` : 'Not tried: doctor cannot start the target again under the same load (--attach, --on-port).'
  return `Loading it with ${r.flag} measured nothing: ${r.error ?? 'no responses'}.`
}

/**
 * The kernel's out-of-memory killer ended the target at the container's memory: what the process holds (its heap and
 * its buffers, code, stacks) met the container's limit before V8's own.
 * @param {import('../../analysis/heap-exhaustion.js').HeapExhaustion} h
 * @param {import('../../analysis/heap-retry.js').HeapRetry} [retry] a heap limit within the container, loaded after the kill
 */
function memoryKilledText (h, retry) {
  const container = h.memoryLimit !== null ? `the container's ${mb(h.memoryLimit)} MB` : 'the container\'s memory'
  const by = h.oomKill ? 'The kernel\'s out-of-memory killer killed it (SIGKILL; its memory group counted the kill)' : 'It was killed by SIGKILL, most likely by the kernel\'s out-of-memory killer'
  const limit = h.heapLimit !== null ? `V8's heap limit of ${mb(h.heapLimit)} MB` : 'V8\'s heap limit'
  const above = h.heapLimit !== null && h.memoryLimit !== null && h.heapLimit >= HEAP_SHARE * h.memoryLimit
  const set = h.memoryLimit !== null ? Math.floor(HEAP_SHARE * mb(h.memoryLimit)) : null
  const flag = set !== null ? `--max-old-space-size=${set}` : '--max-old-space-size=<75% of the container, MB>'
  const each = h.budgetPerRequest !== null && h.inFlight !== null ? ` With ${h.inFlight} requests in flight, each may hold ${formatMb(h.budgetPerRequest)} of heap at most.` : ''
  const heap = above
    ? ` ${limit} is ${h.memoryLimit !== null && h.heapLimit !== null && h.heapLimit > h.memoryLimit ? 'above' : 'close to'} ${container}, so V8 never collected hard enough to stay within it: set node ${flag} (75% of the container: the rest is buffers, code and stacks) — or, on Node 22 and 24, --max-old-space-size-percentage=75 — so that the heap fails with an error you can see instead of a kill.`
    : ` ${limit} is well within ${container}: what took the memory is outside the heap — Buffers, native modules, or more processes in the container.`
  const measured = retry ? loweredNote(retry, container) : ''
  // Killed again within the lower limit: the limit is not the remedy, and its advice would read as one.
  const killedAgain = retry?.outcome === 'exited' && retry.exit?.signal === 'SIGKILL'
  return `${measured}${by} at ${container}.${killedAgain ? '' : heap}${each} Give the container more memory if the load needs it, or run fewer requests at once in each process: a queue or a concurrency limit in front of the work.`
}

/**
 * What loading the target with a heap limit within its container gave, as the sentence that leads its advice.
 * @param {import('../../analysis/heap-retry.js').HeapRetry} r
 * @param {string} container
 */
function loweredNote (r, container) {
  const peak = r.peakHeap !== null ? `, peak heap ${formatBytes(r.peakHeap)}${r.peakRss !== null ? `, RSS ${formatBytes(r.peakRss)}` : ''}` : ''
  const after = `after ${r.seconds ?? '?'} s of load${r.firstSeconds !== null ? ` (the first run: ${r.firstSeconds} s)` : ''}`
  if (r.outcome === 'survived') return `Measured: with ${r.flag} the load ran without a kill${r.requestsPerSecond !== null ? ` (${formatCount(r.requestsPerSecond)} req/s)` : ''}${peak}: V8 collects harder within ${container} — set it. `
  if (r.outcome === 'crashed') return `Measured: with ${r.flag} the heap ran out ${after}${peak}, with V8's error instead of a kill: the load holds more on the heap than ${container} has room for. `
  if (r.outcome === 'exited' && r.exit?.signal === 'SIGKILL') return `Measured: with ${r.flag} it was killed again ${after}${peak}: what fills ${container} is outside V8's heap — Buffers, native modules, or more processes. `
  if (r.outcome === 'not-run' || r.outcome === 'interrupted' || r.outcome === 'failed' || r.outcome === 'exited') return `${retryNote(r)} `
  return ''
}

const mb = (/** @type {number} */ b) => Math.round(b / 1048576)

/**
 * The command with the heap flag in it: replacing the one it has, after `node` when it starts with node, else in
 * NODE_OPTIONS.
 * @param {string} target
 * @param {string} flag
 */
function withFlag (target, flag) {
  if (/--max-old-space-size=\S+/.test(target)) return target.replace(/--max-old-space-size=\S+/, flag)
  const [first, ...rest] = target.split(' ')
  return /(^|\/)node(\.exe)?$/.test(first) ? [first, flag, ...rest].join(' ') : `NODE_OPTIONS=${flag} ${target}`
}

const HEAP_SHARE = 0.75

/** @param {number} bytes */
function formatMb (bytes) {
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MB` : `${Math.round(bytes / 1024)} kB`
}

/** @param {string | null} version `v22.1.0` */
function nodeMajor (version) {
  const m = /^v?(\d+)\./.exec(version ?? '')
  return m ? Number(m[1]) : 0
}

/**
 * Work fired on the request path and not awaited, with how much is left per request and how long it lives.
 * @param {import('../../analysis/floating-work.js').FloatingWork} w
 */
function floatingText (w) {
  const at = placeText(w.site.file, w.site.line)
  // With no app caller above the site, the request's own code made the promise there (a `.catch()` on a call).
  const fired = w.fired ? `${w.fired.label ?? w.fired.function} (${placeText(w.fired.file, w.fired.line)}) starts ${w.site.function} and does not await it` : `${w.site.function} does not await the promise it makes at ${at}`
  const pending = w.pendingShare >= 0.05 ? `; ${Math.round(w.pendingShare * 100)}% were still pending when hotpath last looked` : ''
  const each = w.perRequest >= 1.5 ? ` (${w.perRequest.toFixed(1)} promises a request)` : ''
  const traced = w.after ? 'requests traced in a load after the window (a busy window is not traced)' : 'traced requests'
  return `Work fired and not awaited: ${fired} — ${Math.round(w.requestShare * 100)}% of the ${traced} left it pending at ${at}${each} when their response finished, living ${formatMs(w.meanAgeMs)} after it on average (${formatMs(w.maxAgeMs)} at most)${pending}. Each keeps what it was given until it is done: await it, or bound it (a queue with a limit that drops or refuses work beyond it).`
}
