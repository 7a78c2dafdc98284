// Two CPU control groups of equal weight, for benchmarks that run two process trees side by side on one core: the
// kernel then gives each tree half the core whatever its threads (a profiler's thread, a tool's parent process) do,
// so what a tree costs itself shows in its own throughput and not in its neighbour's. A group must use that one core
// only: the kernel spreads a group's weight over the CPUs its tasks run on, in proportion to their load there, so a
// group with a task spinning on another core keeps less on this one. The load generators therefore leave the two
// groups, into a third that holds them all. Not the root group: there, with autogroup scheduling on (Linux's default
// on desktops and many VMs), each session is a scheduling entity of its own, so a load a tool starts in a session of
// its own (hotpath starts its --on-port command so, to stop the command's whole process group) is scheduled apart
// from its neighbour's load, and that alone read 0.95–0.97 of the neighbour for the uninstrumented server, where the
// same load in the bench's session read 1.0. Within a group, sessions make no difference.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const V1 = '/sys/fs/cgroup/cpu'
const V2 = '/sys/fs/cgroup'

/**
 * @typedef {object} CpuGroups
 * @property {string[]} paths the groups' directories: the two of the process trees, then the loads'
 * @property {(group: number, command: string[]) => string[]} wrap the command, run inside group 0 or 1, or -1: in the
 *   loads' group (a load generator, which must not share a tree's weight even when a tool in a group starts it)
 * @property {() => void} remove removes the groups, and kills what is still in them first (a stopped bench's servers)
 */

/**
 * Makes the groups, or returns null where this process may not (not root, no cpu controller).
 * @param {string} name
 * @returns {CpuGroups | null}
 */
export function cpuGroups (name) {
  const root = writableRoot()
  if (root === null) return null
  const paths = ['0', '1', 'loads'].map(i => join(root.dir, `${name}-${process.pid}-${i}`))
  try {
    for (const path of paths) {
      mkdirSync(path, { recursive: true })
      // Equal weights: v1's cpu.shares and v2's cpu.weight both default to equal values, set anyway.
      if (root.version === 1) writeFileSync(join(path, 'cpu.shares'), '1024')
      else writeFileSync(join(path, 'cpu.weight'), '100')
    }
  } catch {
    for (const path of paths) { try { rmdirSync(path) } catch {} }
    return null
  }
  return {
    paths,
    // The shell joins the group, then becomes the command: every process and thread it starts is in the group.
    wrap: (group, command) => ['sh', '-c', `echo $$ > ${paths[group < 0 ? 2 : group]}/cgroup.procs && exec "$@"`, 'sh', ...command],
    remove: () => {
      // What is still in a group is the bench's own (a server a stopped bench left running), and a group with tasks
      // cannot be removed: they go first, and the group as soon as the kernel has them gone.
      for (const path of paths) {
        try {
          for (const pid of readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
            try { process.kill(Number(pid), 'SIGKILL') } catch {}
          }
        } catch {}
      }
      const until = Date.now() + 2000
      for (const path of paths) {
        for (;;) {
          try {
            rmdirSync(path)
            break
          } catch (err) {
            if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT' || Date.now() > until) break
            // remove() runs in 'exit' too, where nothing asynchronous runs: a synchronous wait of 20 ms
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
          }
        }
      }
    }
  }
}

/** @returns {{ dir: string, version: 1 | 2 } | null} */
function writableRoot () {
  if (process.getuid?.() !== 0) return null
  if (existsSync(join(V1, 'cgroup.procs'))) return { dir: V1, version: 1 }
  try {
    if (readFileSync(join(V2, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('cpu')) {
      writeFileSync(join(V2, 'cgroup.subtree_control'), '+cpu')
      return { dir: V2, version: 2 }
    }
  } catch {}
  return null
}
