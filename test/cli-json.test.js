// One flag vocabulary (docs/flags.md) through the CLI, command by command: `--json` alone prints the JSON on stdout,
// `--json=<file>` writes it (and the text still goes to stdout), doctor and heap also take `--json <file>`; heap has
// --no-progress and --open like the others. Every JSON read here is checked against its published schema.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chmod, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath } from './helpers/cli.js'
import { httpServer } from './helpers/servers.js'
import { assertSchema } from './helpers/schema.js'
import { lineOf as lineIn } from './helpers/source-lines.js'

/** @type {string} */
let dir
/** @type {string} */
let browser
/** @type {string} */
let opened

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hotpath-cli-json-'))
  // $BROWSER stands in for the user's browser: it writes down what it was asked to open.
  browser = join(dir, 'browser.sh')
  opened = join(dir, 'opened.txt')
  await writeFile(browser, `#!/bin/sh\necho "$1" >> "${opened}"\n`)
  await chmod(browser, 0o755)
})

/** The pages $BROWSER was started on so far (it is not waited for). */
async function openedPages (count = 1) {
  for (let i = 0; i < 50 && (!existsSync(opened) || (await readFile(opened, 'utf8')).trim().split('\n').length < count); i++) {
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return (await readFile(opened, 'utf8')).trim().split('\n')
}

/** @param {string} file */
async function readJson (file) {
  return JSON.parse(await readFile(file, 'utf8'))
}

/** @param {string} text */
const lineOf = (text) => lineIn('examples/express/server.js', text)

test('doctor on an Express app: --json <file> as before, --json alone on stdout, --json=<file> beside the text', async () => {
  const save = join(dir, 'express-run')
  const file = join(dir, 'doctor.json')
  const live = await hotpath(['doctor', '-d', '4', '--no-progress', '--save', save, '--json', file, '--', process.execPath, 'examples/express/server.js'], { env: { PORT: '0' }, timeout: 90000 })
  assert.equal(live.code, 0, live.stderr)
  assert.match(live.stdout, /^hotpath doctor: event-loop/, 'with a file, the text still goes to stdout')
  const d = await readJson(file)
  assertSchema('doctor', d)
  assertSchema('load', d.load)
  // The copy of the catalogue is to blame, at its line in the route, not Express.
  assert.equal(d.category, 'event-loop')
  assert.equal(d.culprits[0].function, 'productsPage')
  assert.equal(d.culprits[0].file, 'examples/express/server.js')
  assert.equal(d.culprits[0].line, await lineOf('JSON.parse(JSON.stringify(catalogue))'))
  assert.equal(d.culprits[0].kind, 'app')

  const stdout = await hotpath(['doctor', '--analyse', save, '--json'])
  assert.equal(stdout.code, 0, stdout.stderr)
  const again = JSON.parse(stdout.stdout)
  assertSchema('doctor', again)
  assert.deepEqual(again.culprits, d.culprits)
  assert.match(stdout.stderr, /Report: /, 'stdout holds the JSON only')

  const eq = join(dir, 'doctor-eq.json')
  const written = await hotpath(['doctor', '--analyse', save, `--json=${eq}`, '--open'], { env: { BROWSER: browser } })
  assert.equal(written.code, 0, written.stderr)
  assert.match(written.stdout, /^hotpath doctor: event-loop[\s\S]*Report: /)
  assert.deepEqual((await readJson(eq)).evidence, d.evidence)
  assert.deepEqual(await openedPages(), [join(save, 'report.html')])

  const empty = await hotpath(['doctor', '--analyse', save, '--json='])
  assert.equal(empty.code, 2)
  assert.equal(empty.stderr, 'hotpath doctor: --json= needs a file name (or give --json alone to print the JSON on stdout)\n')
  const both = await hotpath(['compare', '--json', save, save])
  assert.equal(both.code, 0, both.stderr)
  assertSchema('compare', JSON.parse(both.stdout))
})

test('heap: --no-progress, --json=<file> and --open on a live run; --json alone and --json <file> on --analyse', async () => {
  const save = join(dir, 'heap-run')
  const file = join(dir, 'heap.json')
  await rm(opened, { force: true })
  const live = await hotpath(['heap', '-a', '400', '-c', '4', '--no-progress', '--save', save, `--json=${file}`, '--open', '--', process.execPath, 'examples/memory-leak/server.js'], { env: { PORT: '0', BROWSER: browser }, timeout: 120000 })
  assert.equal(live.code, 0, live.stderr)
  assert.match(live.stdout, /^hotpath heap: one group of objects grows with load/)
  const h = await readJson(file)
  assertSchema('heap', h)
  assert.equal(h.culprits[0].holding, 'auditTrail')
  assert.deepEqual(await openedPages(), [join(save, 'heap.html')])

  const stdout = await hotpath(['heap', '--analyse', save, '--json'])
  assert.equal(stdout.code, 0, stdout.stderr)
  const again = JSON.parse(stdout.stdout)
  assertSchema('heap', again)
  assert.equal(again.culprits[0].holding, 'auditTrail')
  assert.match(stdout.stderr, /^hotpath heap: one group/, 'the text goes to stderr when stdout holds the JSON')

  const spaced = join(dir, 'heap-spaced.json')
  const old = await hotpath(['heap', '--analyse', save, '--json', spaced])
  assert.equal(old.code, 0, old.stderr)
  assertSchema('heap', await readJson(spaced))
})

test('flame: --json alone on a live run, --json=<file> and --open on --from its profile', async () => {
  const out = join(dir, 'flame') + '/'
  const live = await hotpath(['flame', '-d', '2', '--no-progress', '-o', out, '--json', '--', process.execPath, 'examples/hello/server.js'], { env: { PORT: '0' } })
  assert.equal(live.code, 0, live.stderr)
  const f = JSON.parse(live.stdout)
  assertSchema('flame', f)
  assert.equal(f.failure, null)
  assert.equal(f.interrupted, false)
  const profile = f.files.find((/** @type {{ format: string }} */ x) => x.format === 'cpuprofile')
  assert.ok(profile, JSON.stringify(f.files))

  await rm(opened, { force: true })
  const file = join(dir, 'flame.json')
  const from = await hotpath(['flame', '--from', profile.path, '-o', join(dir, 'again'), `--json=${file}`, '--open'], { env: { BROWSER: browser } })
  assert.equal(from.code, 0, from.stderr)
  assert.match(from.stdout, /^Wrote\n/, 'with a file, the text still goes to stdout')
  const g = await readJson(file)
  assertSchema('flame', g)
  assert.deepEqual(g.files.map((/** @type {{ format: string }} */ x) => x.format), ['html', 'pprof', 'collapsed'])
  assert.deepEqual(await openedPages(), [join(dir, 'again.html')])
})

test('load, merge and compare: --json alone, --json=<file> and -o; --json <file> before a URL says how to write it', async () => {
  const server = await httpServer((req, res) => res.end('ok'))
  try {
    const a = join(dir, 'a.json')
    const b = join(dir, 'b.json')
    const [stdout, written] = await Promise.all([
      hotpath(['load', '-c', '2', '-d', '2', '--json', '-o', a, server.url]),
      hotpath(['load', '-c', '2', '-d', '2', `--json=${b}`, server.url])
    ])
    assert.equal(stdout.code, 0, stdout.stderr)
    assert.equal(written.code, 0, written.stderr)
    const printed = JSON.parse(stdout.stdout)
    assertSchema('load', printed)
    assert.deepEqual(await readJson(a), printed, '-o writes what --json prints')
    assertSchema('load', await readJson(b))
    assert.match(written.stdout, /Latency/, 'with a file, the text still goes to stdout')

    const wrong = await hotpath(['load', '--json', join(dir, 'x.json'), server.url])
    assert.equal(wrong.code, 2)
    assert.equal(wrong.stderr, `hotpath load: load takes one URL, got 2: ${join(dir, 'x.json')} ${server.url}; to write the JSON to a file, give --json=${join(dir, 'x.json')}\n`)

    const merged = await hotpath(['merge', '--json', a, b])
    assert.equal(merged.code, 0, merged.stderr)
    const m = JSON.parse(merged.stdout)
    assertSchema('load', m)
    assert.equal(m.hotpath.options.machines, 2)
    const mergedFile = join(dir, 'merged.json')
    const mergedText = await hotpath(['merge', `--json=${mergedFile}`, a, b])
    assert.equal(mergedText.code, 0, mergedText.stderr)
    assert.match(mergedText.stdout, /Latency/)
    assert.deepEqual((await readJson(mergedFile)).requests, m.requests)

    const compared = join(dir, 'compare.json')
    const compare = await hotpath(['compare', `--json=${compared}`, a, b])
    assert.equal(compare.code, 0, compare.stderr)
    assert.match(compare.stdout, /Requests\/s/)
    const c = await readJson(compared)
    assertSchema('compare', c)
    assert.deepEqual(c.figures.map((/** @type {{ figure: string }} */ r) => r.figure).slice(0, 2), ['Requests/s', 'Latency p50'])
  } finally {
    await server.close()
  }
  assert.ok((await readdir(dir)).length > 0)
})
