import { isAbsolute, relative } from 'node:path'
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
