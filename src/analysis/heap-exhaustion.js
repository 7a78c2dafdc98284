// A target that died because its heap ran out: V8's "Reached heap limit … JavaScript heap out of memory" in its last
// lines of stderr. Which limit it met, from what its probe said at start (V8's heap limit, the container's memory) and
// from the load (the requests in flight when it died): the heap's own limit, far below the memory there is, is raised
// with a flag; the container's memory is raised where the container is defined; or fewer requests run at once.

/** V8's words as it gives up (Node 20–24). */
const OUT_OF_HEAP = /JavaScript heap out of memory|Reached heap limit|Ineffective mark-compacts near heap limit/

/** Share of the memory a heap limit may take: the rest is the process's other memory (buffers, code, stacks). */
export const HEAP_SHARE_OF_MEMORY = 0.75

/**
 * @typedef {object} HeapExhaustion
 * @property {number | null} heapLimit V8's heap limit, bytes (null: the probe did not say)
 * @property {number | null} memoryLimit the container's memory limit, bytes (null: none, or not known)
 * @property {number} memory the memory the heap could grow into: the container's, else the machine's
 * @property {number | null} inFlight requests in flight when it died (a closed loop's connections × pipelining)
 * @property {number | null} budgetPerRequest bytes of heap each request in flight could hold, at most, before the
 *   limit: the heap above what it held before the load, shared among them (the requests held more)
 * @property {'heap-limit' | 'container'} ceiling what it met: V8's limit, well below the memory there is, or the memory
 * @property {string | null} node the target's Node version
 */

/**
 * @param {import('./run-data.js').RunData} data
 * @returns {HeapExhaustion | null}
 */
export function heapExhaustion (data) {
  const run = data.run
  if (!run.exit.crashed || !run.stderr.some(l => OUT_OF_HEAP.test(l))) return null
  const main = data.threads.find(t => t.pid === run.listening.pid && t.threadId === 0)
  const limits = run.limits
  const heapLimit = limits?.heapLimit ?? (Number(main?.hello.heapLimit) || null)
  const memoryLimit = limits?.memoryLimit ?? null
  const memory = memoryLimit ?? run.host.memory
  const load = run.load
  const inFlight = load && !(load.hotpath?.rate && load.hotpath.rate.asked > 0) ? load.connections * load.pipelining : null
  const start = limits?.heapAtStart ?? main?.settled.start ?? null
  const budgetPerRequest = heapLimit !== null && inFlight !== null && inFlight > 0 ? Math.max(0, heapLimit - (start ?? 0)) / inFlight : null
  const ceiling = memoryLimit !== null && heapLimit !== null && heapLimit >= HEAP_SHARE_OF_MEMORY * memoryLimit ? 'container' : 'heap-limit'
  return { heapLimit, memoryLimit, memory, inFlight, budgetPerRequest, ceiling, node: limits?.node ?? (main ? String(main.hello.node ?? '') || null : null) }
}
