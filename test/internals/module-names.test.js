// A module's file name says what it does (docs/architecture.md, Layers): two modules of one name would send a reader to
// the wrong one. Two may share a name only when they are the same thing at two layers (the facts in analysis/, their
// words in report/words/), and then each says so in its header by naming the other. `index.js` is a folder's entry.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { basename, join, relative } from 'node:path'
import { ROOT } from '../helpers/cli.js'
import { sources } from '../helpers/source-files.js'

const SRC = join(ROOT, 'src')

/**
 * The comment lines a module opens with.
 * @param {string} file
 */
async function header (file) {
  const lines = (await readFile(file, 'utf8')).split('\n')
  const end = lines.findIndex(line => !/^\s*(\/\/|\/\*|\*|$)/.test(line))
  return lines.slice(0, end === -1 ? lines.length : end).join('\n')
}

test('modules that share a name say in their headers which others they are', async () => {
  const files = await sources(SRC)
  /** @type {Map<string, string[]>} */
  const byName = new Map()
  for (const file of files) {
    const name = basename(file)
    if (name === 'index.js') continue
    byName.set(name, [...(byName.get(name) ?? []), relative(SRC, file)])
  }
  const shared = [...byName.values()].filter(paths => paths.length > 1)
  assert.ok(shared.length > 0, 'no two modules share a name: this test no longer checks anything, delete it')
  /** @type {string[]} */
  const unsaid = []
  for (const paths of shared) {
    for (const path of paths) {
      const text = await header(join(SRC, path))
      for (const other of paths) {
        if (other !== path && !text.includes(`src/${other}`)) unsaid.push(`src/${path} does not name src/${other} in its header`)
      }
    }
  }
  assert.deepEqual(unsaid, [])
})
