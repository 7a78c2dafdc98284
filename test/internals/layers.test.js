// The folders are layers (docs/architecture.md, Layers): each may import only the folders below it, so that analysis returns
// facts that any report can word, and what runs in a target (probe, sampling, runtime) never pulls in the CLI. An
// import that runs back up fails here, with the file and the line, before it becomes a cycle.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from '../helpers/cli.js'
import { sources } from '../helpers/source-files.js'

const SRC = join(ROOT, 'src')

/** What each folder of src/ may import besides itself; `shared` is src/*.js. The CLI and the library's entry take all. */
const ALLOWED = {
  shared: [],
  load: ['shared'],
  sampling: ['shared'],
  profile: ['shared'],
  heap: ['shared', 'profile'],
  kube: ['shared'],
  probe: ['shared', 'sampling', 'profile'],
  // The runtime's on-demand diagnosis runs doctor's probe in its own process (both run inside the target).
  runtime: ['shared', 'sampling', 'profile', 'probe'],
  run: ['shared', 'load'],
  analysis: ['shared', 'load', 'sampling', 'profile'],
  report: ['shared', 'load', 'sampling', 'profile', 'analysis'],
  experiments: ['shared', 'run', 'analysis']
}

/** @param {string} file */
function layerOf (file) {
  const parts = relative(SRC, file).split('/')
  return parts.length === 1 ? 'shared' : parts[0]
}

test('no module imports a layer above its own', async () => {
  const files = await sources(SRC)
  assert.ok(files.length > 100, `only ${files.length} modules found under src/`)
  /** @type {string[]} */
  const wrong = []
  let imports = 0
  for (const file of files) {
    const from = layerOf(file)
    if (from === 'cli' || relative(SRC, file) === 'index.js') continue
    const allowed = /** @type {Record<string, string[]>} */ (ALLOWED)[from]
    assert.ok(allowed, `src/${from}/ is a folder this test does not know: give it a layer in ALLOWED`)
    const lines = (await readFile(file, 'utf8')).split('\n')
    lines.forEach((line, i) => {
      // Runtime imports only: a JSDoc type may name the record a lower layer reads (analysis reads run's records).
      if (/^\s*(\/\/|\*|\/\*)/.test(line)) return
      for (const m of line.replace(/\/\*.*?\*\//g, '').matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)'(\.[^']+)'/g)) {
        imports++
        const to = layerOf(resolve(dirname(file), m[1]))
        if (to !== from && !allowed.includes(to)) wrong.push(`${relative(ROOT, file)}:${i + 1} (${from}) imports ${m[1]} (${to})`)
      }
    })
  }
  assert.ok(imports > 200, `only ${imports} imports read: the pattern no longer matches the code`)
  assert.deepEqual(wrong, [])
})
