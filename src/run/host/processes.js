import { readdirSync, readFileSync } from 'node:fs'
import { listeningOn, socketInodes } from '../target/proc-info.js'

/**
 * @typedef {object} ProcessCpu one process of the machine and the CPU it used during the load window
 * @property {number} pid
 * @property {number} ppid
 * @property {string} name its command name (`postgres`, `redis-server`)
 * @property {number} cpuMs
 * @property {number[]} listens TCP ports it listens on
 */

/** Linux's clock ticks per second for /proc's CPU times (USER_HZ; 100 on every architecture Node runs on). */
const TICK_MS = 10
/** Processes that used less than this much CPU over the window are left out of the record (ms). */
const MIN_CPU_MS = 20

/**
 * CPU time of every process of the machine now, from /proc (Linux; empty elsewhere). Taken at both ends of the load
 * window, it tells which other processes were busy — a database on the same machine among them.
 * @returns {Map<number, { ppid: number, name: string, ticks: number }>}
 */
export function processTimes () {
  /** @type {Map<number, { ppid: number, name: string, ticks: number }>} */
  const out = new Map()
  let pids
  try {
    pids = readdirSync('/proc').filter(d => /^\d+$/.test(d))
  } catch {
    return out
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      // The command name is in parentheses and may hold spaces or parentheses itself: fields resume after the last ')'.
      // Own time plus that of reaped children: PostgreSQL's parallel workers live for one query.
      const close = stat.lastIndexOf(')')
      const name = stat.slice(stat.indexOf('(') + 1, close)
      const f = stat.slice(close + 2).split(' ')
      out.set(Number(pid), { ppid: Number(f[1]), name, ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) })
    } catch {}
  }
  return out
}

/**
 * The processes that used CPU between two snapshots, with the TCP ports each listens on.
 * @param {Map<number, { ppid: number, name: string, ticks: number }>} before
 * @param {Map<number, { ppid: number, name: string, ticks: number }>} after
 * @param {Set<number>} skip pids not to report (hotpath, the target)
 * @returns {ProcessCpu[]}
 */
export function busyProcesses (before, after, skip) {
  /** @type {Set<number>} */
  const kept = new Set()
  for (const [pid, p] of after) {
    if (skip.has(pid)) continue
    if ((p.ticks - (before.get(pid)?.ticks ?? 0)) * TICK_MS < MIN_CPU_MS) continue
    kept.add(pid)
    // Its parent too, busy or not: PostgreSQL's postmaster idles while the children it forked serve.
    const parent = after.get(p.ppid)
    if (parent !== undefined && p.ppid > 1 && !skip.has(p.ppid)) kept.add(p.ppid)
  }
  const inodes = listeningInodes()
  /** @type {ProcessCpu[]} */
  const out = []
  for (const pid of kept) {
    const p = /** @type {{ ppid: number, name: string, ticks: number }} */ (after.get(pid))
    out.push({ pid, ppid: p.ppid, name: p.name, cpuMs: (p.ticks - (before.get(pid)?.ticks ?? 0)) * TICK_MS, listens: portsOf(pid, inodes) })
  }
  return out.sort((a, b) => b.cpuMs - a.cpuMs)
}

/**
 * Listening TCP sockets in hotpath's network namespace, by inode.
 * @returns {Map<string, number>} inode → port
 */
function listeningInodes () {
  return new Map(listeningOn(null).map(s => [s.inode, s.port]))
}

/**
 * @param {number} pid
 * @param {Map<string, number>} inodes
 * @returns {number[]}
 */
function portsOf (pid, inodes) {
  /** @type {Set<number>} */
  const ports = new Set()
  for (const inode of socketInodes(pid)) {
    const port = inodes.get(inode)
    if (port !== undefined) ports.add(port)
  }
  return [...ports]
}
