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
 * Where the user's code lives, for telling it from packages. Node runs `process.argv[1]` as the entry script whatever
 * came before it (`--require x`, `--import tsx`, a wrapper such as `npm start` that spawns node), so the app is that
 * script's: the nearest directory above it that holds a package.json (outside node_modules); without one, the
 * working directory when the script lies inside it (its sibling folders are the app's too), else the script's own
 * directory — a script run from elsewhere is still the app, never a package. An entry script inside node_modules is a
 * package's runner (`fastify start`, `ts-node`) run in the project: the working directory is the app.
 * @param {{ argv?: unknown, cwd?: unknown }} hello what the probe said of the process
 * @param {string} fallback
 */
export function appRootOf (hello, fallback) {
  const cwd = typeof hello.cwd === 'string' ? hello.cwd : fallback
  const main = Array.isArray(hello.argv) && typeof hello.argv[1] === 'string' && hello.argv[1] !== '' ? resolve(cwd, hello.argv[1]) : null
  if (main === null || /[\\/]node_modules[\\/]/.test(main)) return cwd
  const top = dirname(main)
  for (let dir = top; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    if (dirname(dir) === dir) break
  }
  return isInside(cwd, main) ? cwd : top
}

/**
 * @param {string} dir
 * @param {string} file
 */
function isInside (dir, file) {
  const rel = relative(dir, file)
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)
}
