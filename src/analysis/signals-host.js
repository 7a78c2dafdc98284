// What else used the machine during the load: the local backends the server talks to (a database, a cache), and the
// CPU other processes took.

/** @typedef {import('./run-data.js').RunData} RunData */
/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {ThreadRecord['samples'][number]} Sample */
/** @typedef {import('./signals.js').Signals} Signals */

/**
 * @param {RunData} data
 * @param {(t: ThreadRecord) => Sample[]} samplesOf
 * @param {number} seconds
 * @param {Signals['backends']} backends
 */
export function otherCores (data, samplesOf, seconds, backends) {
  const host = data.run.host
  if (!host) return null
  let targetMs = 0
  for (const t of data.threads) {
    if (t.threadId === 0) for (const s of samplesOf(t)) targetMs += s.cpu.user + s.cpu.system
  }
  const backendMs = (backends?.cores ?? 0) * seconds * 1000
  return Math.max(0, host.busyMs - host.ownCpuMs - targetMs - backendMs) / (seconds * 1000)
}

const LOCAL = /^(127\.\d+\.\d+\.\d+|\[::1\]|\[::ffff:127\.\d+\.\d+\.\d+\]|localhost):(\d+)$/

/**
 * The machine's processes that serve the target's client sockets: those listening on a local port the serving
 * processes connected to, and their children (PostgreSQL serves each connection from a child of its postmaster).
 * @param {RunData} data
 * @param {ThreadRecord[]} threads the serving processes' threads
 * @param {number} seconds
 * @returns {Signals['backends']}
 */
export function localBackends (data, threads, seconds) {
  const processes = data.run.host?.processes
  if (!Array.isArray(processes) || processes.length === 0) return null
  /** @type {Set<number>} */
  const ports = new Set()
  for (const t of threads) {
    for (const snap of t.sockets) {
      for (const e of snap.endpoints) {
        const m = LOCAL.exec(String(e.endpoint))
        if (m) ports.add(Number(m[2]))
      }
    }
  }
  if (ports.size === 0) return null
  /** @type {Map<number, number>} pid → the port its family serves */
  const serving = new Map()
  for (const p of processes) {
    const port = (p.listens ?? []).find(x => ports.has(x))
    if (port !== undefined) serving.set(p.pid, port)
  }
  // Children of a backend that listen on nothing of their own: PostgreSQL serves each connection from such a child.
  for (let round = 0; round < 2; round++) {
    for (const p of processes) {
      if (!serving.has(p.pid) && serving.has(p.ppid) && (p.listens ?? []).length === 0) serving.set(p.pid, /** @type {number} */ (serving.get(p.ppid)))
    }
  }
  if (serving.size === 0) return null
  const list = processes.filter(p => serving.has(p.pid)).map(p => ({ pid: p.pid, name: p.name, cpuMs: p.cpuMs, port: /** @type {number} */ (serving.get(p.pid)) }))
  // A parent's time includes the children it reaped during the window, whole lives of them: never more than the
  // machine had to give.
  const host = /** @type {NonNullable<RunData['run']['host']>} */ (data.run.host)
  const spare = Math.max(0, host.busyMs - host.ownCpuMs)
  return { cores: Math.min(spare, list.reduce((a, p) => a + p.cpuMs, 0)) / (seconds * 1000), processes: list }
}
