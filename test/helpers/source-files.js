// The project's own JavaScript sources, for the tests that read the code itself (its layers, its module names).
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * Every .js file below a folder, depth first.
 * @param {string} dir
 * @returns {Promise<string[]>}
 */
export async function sources (dir) {
  const out = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...await sources(path))
    else if (entry.name.endsWith('.js')) out.push(path)
  }
  return out
}
