// What the machine did during the load window: its cores' busy time, hotpath's own CPU, and the processes that used
// CPU besides the target (the database it waits on among them) — what tells a busy machine from a busy server.
import os from 'node:os'
import { busyProcesses, processTimes } from './processes.js'

/** @typedef {{ busy: number, own: number, processes: ReturnType<typeof processTimes> }} HostStart */

/**
 * The counters at the start of the window.
 * @returns {HostStart}
 */
export function hostNow () {
  return { busy: machineBusyMs(), own: ownCpuMs(), processes: processTimes() }
}

/**
 * The machine, and the CPU it, hotpath and other processes used since `start`.
 * @param {HostStart} start
 * @param {import('../target/target-process.js').TargetProcess} target
 * @returns {import('../doctor-run.js').RunRecord['host']}
 */
export function hostUseSince (start, target) {
  const cpus = os.cpus()
  return {
    cores: cpus.length,
    busyMs: machineBusyMs() - start.busy,
    ownCpuMs: ownCpuMs() - start.own,
    model: cpus[0]?.model ?? 'unknown',
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    memory: os.totalmem(),
    processes: busyProcesses(start.processes, processTimes(), new Set([process.pid, target.pid, ...[...target.channel.peers].map(p => Number(p.hello?.pid) || 0)]))
  }
}

/** CPU time every core of the machine has spent busy, in ms. */
function machineBusyMs () {
  return os.cpus().reduce((a, c) => a + c.times.user + c.times.nice + c.times.sys + c.times.irq, 0)
}

function ownCpuMs () {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
