// A target that died because its heap ran out: V8's "Reached heap limit … JavaScript heap out of memory" in its last
// lines of stderr. Which limit it met, from what its probe said at start (V8's heap limit, the container's memory) and
// from the load (the requests in flight when it died): the heap's own limit, far below the memory there is, is raised
// with a flag; the container's memory is raised where the container is defined; or fewer requests run at once.
// A target the kernel's out-of-memory killer killed (SIGKILL, its memory group's `oom_kill` count risen) met the
// container's memory before V8's limit: said as that, with the same figures.

/** V8's words as it gives up (Node 20–24). */
export const OUT_OF_HEAP = /JavaScript heap out of memory|Reached heap limit|Ineffective mark-compacts near heap limit/

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
 * @property {number | null} raiseTo the --max-old-space-size (MB) the advice proposes: twice what the command set (else
 *   V8's limit), within 75% of the memory; null when the container is the ceiling or there is no room to raise it
 * @property {number | null} lowerTo for a target the container's memory killed with V8's limit near or above it: the
 *   --max-old-space-size (MB) the advice proposes, 75% of the container, so that V8 collects harder within it (or
 *   fails with an error one can read); null otherwise
 * @property {string | null} node the target's Node version
 * @property {boolean | null} [oomKill] for a target killed by SIGKILL: whether its memory group's out-of-memory kills
 *   rose during the run (null: they could not be read)
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
  const oldLimit = limits?.oldGenerationLimit ?? (Number(main?.hello.oldGenerationLimit) || null)
  const raiseTo = ceiling === 'heap-limit' ? raisedLimit(run.command.join(' '), oldLimit ?? heapLimit, memory) : null
  return { heapLimit, memoryLimit, memory, inFlight, budgetPerRequest, ceiling, raiseTo, lowerTo: null, node: limits?.node ?? (main ? String(main.hello.node ?? '') || null : null) }
}

/**
 * A target killed by SIGKILL in a memory group whose out-of-memory kills rose during the run — or, where they cannot
 * be read, under a container limit — met the container's memory, whatever V8's limit said: the same figures as a heap
 * that ran out, with the container as the ceiling.
 * @param {import('./run-data.js').RunData} data
 * @returns {HeapExhaustion | null}
 */
export function memoryKilled (data) {
  const run = data.run
  const limits = run.limits
  if (!run.exit.crashed || run.exit.signal !== 'SIGKILL' || !limits) return null
  const before = limits.oomKillsAtStart ?? null
  const after = limits.oomKillsAtEnd ?? null
  const oomKill = before !== null && after !== null ? after > before : null
  if (oomKill === false || (oomKill === null && limits.memoryLimit === null)) return null
  const main = data.threads.find(t => t.pid === run.listening.pid && t.threadId === 0)
  const load = run.load
  const inFlight = load && !(load.hotpath?.rate && load.hotpath.rate.asked > 0) ? load.connections * load.pipelining : null
  const start = limits.heapAtStart ?? main?.settled.start ?? null
  const memory = limits.memoryLimit ?? run.host.memory
  const room = Math.min(limits.heapLimit, HEAP_SHARE_OF_MEMORY * memory)
  const budgetPerRequest = inFlight !== null && inFlight > 0 ? Math.max(0, room - (start ?? 0)) / inFlight : null
  const lowerTo = limits.memoryLimit !== null && limits.heapLimit >= HEAP_SHARE_OF_MEMORY * limits.memoryLimit ? Math.floor(HEAP_SHARE_OF_MEMORY * limits.memoryLimit / 1048576) : null
  return { heapLimit: limits.heapLimit, memoryLimit: limits.memoryLimit, memory, inFlight, budgetPerRequest, ceiling: 'container', raiseTo: null, lowerTo, node: limits.node, oomKill }
}

/**
 * The heap limit worth trying (MB): twice what the command set (the flag sets the old generation; V8's limit adds the
 * young one), else twice the old generation's limit the probe read (NODE_OPTIONS' flag) or V8's, never past 75% of the
 * memory; null when that is no raise.
 * @param {string} target the command
 * @param {number | null} heapLimit bytes
 * @param {number} memory bytes
 */
function raisedLimit (target, heapLimit, memory) {
  const set = /--max-old-space-size=(\d+)/.exec(target)
  const current = set ? Number(set[1]) : heapLimit !== null ? Math.round(heapLimit / 1048576) : null
  if (current === null) return null
  const raised = Math.min(2 * current, Math.floor(HEAP_SHARE_OF_MEMORY * memory / 1048576))
  return raised > current ? raised : null
}

/**
 * The heap as V8 last collected it before it gave up, from the "Last few GCs" it prints (`Mark-Compact 251.1 (258.6)
 * -> 250.5 (259.1) MB`): the most it held, bytes; null when those lines are not in the tail.
 * @param {string[]} lines the target's last lines of stderr
 */
export function heapAtCrash (lines) {
  let most = null
  for (const line of lines) {
    // V8 writes its GC lines without a newline between some of them: a line of stderr may hold several.
    for (const m of line.matchAll(/(\d+(?:\.\d+)?) \(\d+(?:\.\d+)?\) -> \d+(?:\.\d+)? \(\d+(?:\.\d+)?\) MB/g)) {
      most = Math.max(most ?? 0, Number(m[1]) * 1048576)
    }
  }
  return most
}
