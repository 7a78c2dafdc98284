// The memory the process may use, as its container sets it: the cgroup's limit (v2 `memory.max`, v1
// `memory.limit_in_bytes`), read once at start, the lowest of its group's and its ancestors' (a group inside a limited
// one has no limit of its own, yet its parent's holds). A heap that dies at V8's limit is told from one that met the
// container's: what to raise is not the same. The group's directory goes with it, so that hotpath can read after a
// SIGKILL whether the kernel's out-of-memory killer sent it (its `oom_kill` count rose). Shared: the probe reads the
// limit inside the target, hotpath the count from outside (src/run/doctor-run.js).
import { readFileSync } from 'node:fs'

/** Above this a limit is "none" (v1 writes 2^63 rounded down to a page). */
const UNLIMITED = 2 ** 60

/**
 * @typedef {object} MemoryGroup
 * @property {number | null} limit bytes; null when none is set
 * @property {string} dir the group's directory, where its `oom_kill` count is read
 * @property {1 | 2} version cgroup v1 or v2
 */

/**
 * The process's memory cgroup and its limit, or null when it cannot be read (not Linux, no cgroup mounted).
 * @param {string} [self] the process's /proc/<pid>/cgroup
 * @returns {MemoryGroup | null}
 */
export function memoryGroup (self = '/proc/self/cgroup') {
  let groups = ''
  try {
    groups = readFileSync(self, 'utf8')
  } catch {
    return null
  }
  for (const line of groups.split('\n')) {
    const [, controllers, path] = line.split(':')
    if (path === undefined) continue
    // v2: one unified hierarchy (`0::/path`); inside a container its root is often the container's own group.
    if (controllers === '') {
      const found = lowestLimit('/sys/fs/cgroup', path, 'memory.max')
      if (found !== undefined) return { ...found, version: 2 }
    }
    if (controllers.split(',').includes('memory')) {
      const found = lowestLimit('/sys/fs/cgroup/memory', path, 'memory.limit_in_bytes')
      if (found !== undefined) return { ...found, version: 1 }
    }
  }
  return null
}

/**
 * The cgroup's memory limit in bytes, or null when none is set or it cannot be read.
 * @returns {number | null}
 */
export function containerMemoryLimit () {
  return memoryGroup()?.limit ?? null
}

/**
 * How many times the kernel's out-of-memory killer has killed a process of the group (v1 `memory.oom_control`, v2
 * `memory.events`), or null when it cannot be read.
 * @param {MemoryGroup['dir'] | null | undefined} dir
 * @returns {number | null}
 */
export function oomKills (dir) {
  if (!dir) return null
  for (const file of ['memory.events', 'memory.oom_control']) {
    try {
      const m = /^oom_kill (\d+)$/m.exec(readFileSync(`${dir}/${file}`, 'utf8'))
      if (m) return Number(m[1])
    } catch {}
  }
  return null
}

/**
 * The lowest limit from the group up to the hierarchy's root, and the group's own directory: undefined when the group's
 * file cannot be read (inside a container whose root is its own group, the mount's root is tried).
 * @param {string} mount
 * @param {string} path
 * @param {string} file
 * @returns {{ limit: number | null, dir: string } | undefined}
 */
function lowestLimit (mount, path, file) {
  const parts = path.split('/').filter(Boolean)
  for (const start of [parts, []]) {
    const dir = [mount, ...start].join('/')
    if (readLimit(`${dir}/${file}`) === undefined) continue
    /** @type {number | null} */
    let limit = null
    for (let k = start.length; k >= 0; k--) {
      const here = readLimit([mount, ...start.slice(0, k), file].join('/'))
      if (typeof here === 'number' && (limit === null || here < limit)) limit = here
    }
    return { limit, dir }
  }
  return undefined
}

/**
 * A limit file: its bytes, null for none, undefined when it cannot be read.
 * @param {string} file
 * @returns {number | null | undefined}
 */
function readLimit (file) {
  let text
  try {
    text = readFileSync(file, 'utf8').trim()
  } catch {
    return undefined
  }
  if (text === 'max') return null
  const bytes = Number(text)
  return Number.isFinite(bytes) && bytes > 0 && bytes < UNLIMITED ? bytes : null
}
