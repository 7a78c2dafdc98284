// Preloaded beside the listening reporter (preload.js) into each phase of doctor's experiments
// (src/experiments/run-experiments.js), never into the diagnosed run. It writes, four times a second, what an experiment weighs
// besides the load's figures: GC time so far, RSS, heap (and its limit) and the young generation's size — and, for an experiment on an
// outgoing agent's pool (HOTPATH_EXPERIMENT_AGENTS), each agent's maxSockets and the requests that waited for a
// socket, which say whether the limit followed the variable set (src/experiments/limit-variable.js). A baseline phase and a
// candidate phase carry the same gauge, so what it costs them (a GC observer: ~2.5% of a saturated hello server's
// throughput) cancels out in the comparison. It must never throw into the target nor keep it alive.
import { appendFileSync } from 'node:fs'
import { join } from 'node:path'
import { PerformanceObserver, constants } from 'node:perf_hooks'
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8'
import { isMainThread } from 'node:worker_threads'
import { AgentWatcher } from '../sampling/agents.js'

const dir = process.env.HOTPATH_EXPERIMENT_DIR
if (dir && isMainThread) {
  try {
    const file = join(dir, `gauge-${process.pid}.ndjson`)
    let gcMs = 0
    let scavengeMs = 0
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        gcMs += e.duration
        if (/** @type {any} */ (e).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavengeMs += e.duration
      }
    }).observe({ entryTypes: ['gc'] })
    // Agents are found when they first take a request (agents.js): one WeakSet lookup per outgoing request.
    const agents = process.env.HOTPATH_EXPERIMENT_AGENTS === '1' ? new AgentWatcher() : null
    agents?.start()
    // What a larger heap limit tried after a crash came to (src/run/phases/heap-retry-phase.js).
    const heapLimit = getHeapStatistics().heap_size_limit
    const write = () => {
      try {
        const m = process.memoryUsage()
        const young = getHeapSpaceStatistics().find(s => s.space_name === 'new_space')
        const line = { t: Date.now(), gcMs, scavengeMs, rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, heapLimit, newSpace: young?.space_size ?? 0 }
        const pools = agents?.snapshot().map(a => ({ agent: a.agent, maxSockets: a.maxSockets, maxQueued: a.maxQueued }))
        appendFileSync(file, JSON.stringify(pools ? { ...line, agents: pools } : line) + '\n')
      } catch {}
    }
    setInterval(write, 250).unref()
  } catch {}
}
