import { existsSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * A file as the target sees it: relative to its working directory when inside it, else as given.
 * @param {string} file a path or file:// URL
 * @param {string} cwd
 */
export function displayPath (file, cwd) {
  let path = file
  if (path.startsWith('file://')) {
    try {
      path = fileURLToPath(path)
    } catch {}
  }
  if (isAbsolute(path)) {
    const rel = relative(cwd, path)
    if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) return rel
  }
  return path
}

/**
 * Where the user's code lives, for telling it from packages: the nearest directory above the process's main script
 * that holds a package.json (outside node_modules), else the process's working directory.
 * @param {{ argv?: unknown, cwd?: unknown }} hello what the probe said of the process
 * @param {string} fallback
 */
export function appRootOf (hello, fallback) {
  const cwd = typeof hello.cwd === 'string' ? hello.cwd : fallback
  const main = Array.isArray(hello.argv) && typeof hello.argv[1] === 'string' ? resolve(cwd, hello.argv[1]) : null
  if (main === null) return cwd
  let dir = dirname(main)
  while (!/[\\/]node_modules$/.test(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    const up = dirname(dir)
    if (up === dir) break
    dir = up
  }
  return cwd
}
