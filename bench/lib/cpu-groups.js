// Two CPU control groups of equal weight, for benchmarks that run two process trees side by side on one core: the
// kernel then gives each tree half the core whatever its threads (a profiler's thread, a tool's parent process) do,
// so what a tree costs itself shows in its own throughput and not in its neighbour's. A group must use that one core
// only: the kernel spreads a group's weight over the CPUs its tasks run on, in proportion to their load there, so a
// group with a task spinning on another core keeps less on this one (the load generators stay in the root group).
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const V1 = '/sys/fs/cgroup/cpu'
const V2 = '/sys/fs/cgroup'

/**
 * @typedef {object} CpuGroups
 * @property {string[]} paths the two groups' directories
 * @property {(group: number, command: string[]) => string[]} wrap the command, run inside group 0 or 1, or -1: back in
 *   the root group (a load generator started by a tool in a group, which must not share the group's weight)
 * @property {() => void} remove removes the groups, and kills what is still in them first (a stopped bench's servers)
 */

/**
 * Makes the two groups, or returns null where this process may not (not root, no cpu controller).
 * @param {string} name
 * @returns {CpuGroups | null}
 */
export function cpuGroups (name) {
  const root = writableRoot()
  if (root === null) return null
  const paths = [0, 1].map(i => join(root.dir, `${name}-${process.pid}-${i}`))
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
    wrap: (group, command) => ['sh', '-c', `echo $$ > ${group < 0 ? root.dir : paths[group]}/cgroup.procs && exec "$@"`, 'sh', ...command],
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
