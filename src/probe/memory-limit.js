// The memory the process may use, as its container sets it: the cgroup's limit (v2 `memory.max`, v1
// `memory.limit_in_bytes`), read once at start. A heap that dies at V8's limit is told from one that met the
// container's: what to raise is not the same.
import { readFileSync } from 'node:fs'

/** Above this a limit is "none" (v1 writes 2^63 rounded down to a page). */
const UNLIMITED = 2 ** 60

/**
 * The cgroup's memory limit in bytes, or null when none is set or it cannot be read (not Linux, no cgroup mounted).
 * @returns {number | null}
 */
export function containerMemoryLimit () {
  let groups = ''
  try {
    groups = readFileSync('/proc/self/cgroup', 'utf8')
  } catch {
    return null
  }
  for (const line of groups.split('\n')) {
    const [, controllers, path] = line.split(':')
    if (path === undefined) continue
    // v2: one unified hierarchy (`0::/path`); inside a container its root is often the container's own group.
    if (controllers === '') {
      const limit = firstLimit([`/sys/fs/cgroup${path}/memory.max`, '/sys/fs/cgroup/memory.max'])
      if (limit !== undefined) return limit
    }
    if (controllers.split(',').includes('memory')) {
      const limit = firstLimit([`/sys/fs/cgroup/memory${path}/memory.limit_in_bytes`, '/sys/fs/cgroup/memory/memory.limit_in_bytes'])
      if (limit !== undefined) return limit
    }
  }
  return null
}

/**
 * The first of the files that can be read: its limit, null for none; undefined when none can be read.
 * @param {string[]} files
 * @returns {number | null | undefined}
 */
function firstLimit (files) {
  for (const file of files) {
    let text
    try {
      text = readFileSync(file, 'utf8').trim()
    } catch {
      continue
    }
    if (text === 'max') return null
    const bytes = Number(text)
    return Number.isFinite(bytes) && bytes > 0 && bytes < UNLIMITED ? bytes : null
  }
  return undefined
}
