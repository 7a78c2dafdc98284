// What the gauge preloaded into each phase of doctor's experiments (src/probe/experiment-gauge.js) wrote of the
// target's processes, read over a phase's measured window.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * @typedef {object} Gauge
 * @property {number} gcShare GC pause time ÷ the window, mean over the listening processes
 * @property {number} scavengeShare the same for scavenges (young-generation collections)
 * @property {number} rss bytes, the listening processes together, highest reading in the window
 * @property {number} heapUsed bytes, the same
 * @property {number} newSpace bytes the young generation held at most (two semi-spaces): what its size grew to
 * @property {number | null} heapLimit V8's heap limit, bytes, the highest of the processes' (null: not written)
 * @property {{ agent: string, limits: number[], maxQueued: number }[]} agents for an agent's experiment: each outgoing
 *   agent (by name) with the limits it had and the most requests that waited for one of its sockets at once
 */

/**
 * The gauge's lines of the processes that listened, read over the window: GC time by difference from the last line
 * before the window to the last line in it, memory at its highest.
 * @param {string} dir
 * @param {Set<number>} pids
 * @param {number} start epoch ms
 * @param {number} end epoch ms
 * @returns {Gauge | null}
 */
export function readGauge (dir, pids, start, end) {
  const shares = []
  const scavenges = []
  let rss = 0
  let heapUsed = 0
  let newSpace = 0
  /** @type {number | null} */
  let heapLimit = null
  /** @type {Map<string, { limits: Set<number>, maxQueued: number }>} */
  const agents = new Map()
  for (const file of readdirSync(dir)) {
    const pid = Number(/^gauge-(\d+)\.ndjson$/.exec(file)?.[1])
    if (!pids.has(pid)) continue
    const lines = readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).flatMap((l) => {
      try { return [JSON.parse(l)] } catch { return [] }
    })
    const before = lines.filter(l => l.t <= start).at(-1) ?? lines[0]
    const inside = lines.filter(l => l.t > start && l.t <= end + 300)
    addAgents(agents, inside)
    const last = inside.at(-1)
    if (!before || !last || last.t <= before.t) continue
    shares.push((last.gcMs - before.gcMs) / (last.t - before.t))
    scavenges.push((last.scavengeMs - before.scavengeMs) / (last.t - before.t))
    rss += Math.max(...inside.map(l => l.rss))
    heapUsed += Math.max(...inside.map(l => l.heapUsed))
    newSpace = Math.max(newSpace, ...lines.map(l => l.newSpace))
    for (const l of lines) if (typeof l.heapLimit === 'number') heapLimit = Math.max(heapLimit ?? 0, l.heapLimit)
  }
  const pools = [...agents].map(([agent, a]) => ({ agent, limits: [...a.limits].sort((x, y) => x - y), maxQueued: a.maxQueued }))
  if (shares.length === 0) return null
  const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length
  return { gcShare: mean(shares), scavengeShare: mean(scavenges), rss, heapUsed, newSpace, heapLimit, agents: pools }
}

/**
 * The agents a process's gauge lines name, into `into` by name: the limits seen (JSON has no Infinity: an unlimited
 * agent's is null) and the most requests queued at once.
 * @param {Map<string, { limits: Set<number>, maxQueued: number }>} into
 * @param {any[]} lines
 */
function addAgents (into, lines) {
  for (const line of lines) {
    for (const a of Array.isArray(line.agents) ? line.agents : []) {
      const e = into.get(String(a.agent)) ?? { limits: new Set(), maxQueued: 0 }
      if (typeof a.maxSockets === 'number' && a.maxSockets > 0) e.limits.add(a.maxSockets)
      e.maxQueued = Math.max(e.maxQueued, Number(a.maxQueued) || 0)
      into.set(String(a.agent), e)
    }
  }
}
