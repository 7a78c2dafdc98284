// TypeScript as people run it — through tsx, @swc-node/register, Node's own type stripping, and as an esbuild bundle
// with its map on disk — blamed at the lines of the .ts files, by doctor (where requests wait), flame (the CPU hog)
// and heap (where the leak is allocated, what holds it). The loaders compile in memory: the code V8 runs is not the
// file on disk, and under tsx it is one line. The same server for all: test/fixtures/servers/typescript.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { hotpath, ROOT } from './helpers/cli.js'
import { lineOf } from './helpers/source-lines.js'

const DIR = join(ROOT, 'test/fixtures/servers/typescript')
const SERVER = join(DIR, 'server.ts')
const WORK = join(DIR, 'work.ts')
const [major, minor] = process.versions.node.split('.').map(Number)
/** Node strips types itself from 22.6 on (behind a flag until 22.18). */
const STRIPS = major > 22 || (major === 22 && minor >= 6)

/** @type {string[]} */
const dirs = []
let scratch = ''
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hotpath-ts-'))
  dirs.push(scratch)
})
after(() => Promise.all(dirs.map(d => rm(d, { recursive: true, force: true }))))

/**
 * @typedef {object} Loader
 * @property {string} name
 * @property {() => Promise<string[]>} command the command that runs the server
 * @property {Record<string, string>} [env]
 * @property {boolean} [oneLine] it compiles a file to one line: a function's own lines cannot be told apart, and
 *   its culprit line is its first
 */

/** @type {Loader[]} */
const LOADERS = [
  { name: 'tsx', command: async () => [process.execPath, '--import', 'tsx', SERVER], oneLine: true },
  {
    name: '@swc-node/register',
    command: async () => [process.execPath, '--import', '@swc-node/register/esm-register', SERVER],
    // Its maps follow the project's tsconfig (`sourceMap`): the fixture's asks for them.
    env: { SWC_NODE_PROJECT: join(DIR, 'tsconfig.json') }
  },
  ...(STRIPS ? [{ name: 'Node\'s type stripping', command: async () => [process.execPath, '--experimental-strip-types', '--disable-warning=ExperimentalWarning', SERVER] }] : []),
  {
    name: 'an esbuild bundle with its map',
    command: async () => {
      const outfile = join(scratch, 'bundle', 'server.mjs')
      await build({ entryPoints: [SERVER], bundle: true, platform: 'node', format: 'esm', sourcemap: true, outfile, logLevel: 'silent' })
      return [process.execPath, outfile]
    }
  }
]

for (const loader of LOADERS) {
  describe(`TypeScript through ${loader.name}`, () => {
    /** @type {string[]} */
    let command = []
    before(async () => { command = await loader.command() })

    test('doctor blames the line requests wait at, in the .ts file', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'hotpath-ts-doctor-'))
      dirs.push(dir)
      const json = join(dir, 'diagnosis.json')
      const r = await hotpath(['doctor', '-d', '2', '-c', '4', '--path', '/wait', '--no-progress', '--no-experiments', '--save', join(dir, 'run'), '--json', json, '--', ...command], { env: loader.env, timeout: 90000 })
      assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}`)
      const d = JSON.parse(await readFile(json, 'utf8'))
      assert.equal(d.category, 'io', d.summary)
      const wait = d.culprits.find((/** @type {any} */ c) => c.measure === 'waits')
      assert.ok(wait, JSON.stringify(d.culprits))
      assert.equal(wait.file, 'test/fixtures/servers/typescript/work.ts')
      assert.equal(wait.line, await lineOf(WORK, 'setTimeout(resolve, ms)'))
      assert.deepEqual(d.warnings, [])
      // Analysed again from the run directory alone, it says the same.
      const again = await hotpath(['doctor', '--analyse', join(dir, 'run'), '--json', '-'])
      const a = JSON.parse(again.stdout)
      assert.deepEqual(a.culprits.map((/** @type {any} */ c) => `${c.file}:${c.line}`), d.culprits.map((/** @type {any} */ c) => `${c.file}:${c.line}`))
    })

    test('flame blames the CPU hog at its line, and draws the .ts files\' functions', async () => {
      const output = join(await mkdtemp(join(tmpdir(), 'hotpath-ts-flame-')), 'flame')
      dirs.push(join(output, '..'))
      const r = await hotpath(['flame', '-d', '2', '-c', '4', '--path', '/hog', '--no-progress', '-o', output, '--json', '--', ...command], { env: loader.env, timeout: 90000 })
      assert.equal(r.code, 0, r.stderr)
      const f = JSON.parse(r.stdout)
      const hog = f.culprits.find((/** @type {any} */ c) => c.function === 'checksum')
      assert.ok(hog, JSON.stringify(f.culprits))
      assert.equal(hog.file, WORK)
      const first = await lineOf(WORK, 'export function checksum')
      assert.equal(hog.functionLine, first)
      assert.equal(hog.line, loader.oneLine ? first : await lineOf(WORK, 'i < text.length'))
      assert.deepEqual(f.warnings, [])
      // The collapsed stacks name the functions at their lines in the sources, the handler's too.
      const collapsed = await readFile(`${output}.txt`, 'utf8')
      assert.match(collapsed, new RegExp(`;checksum \\(${WORK.replace(/[/.]/g, '\\$&')}:${first}\\)`))
      assert.match(collapsed, new RegExp(`;handle \\(${SERVER.replace(/[/.]/g, '\\$&')}:${await lineOf(SERVER, 'async function handle')}\\)`))
    })

    test('heap finds the leak allocated and held at the .ts lines', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'hotpath-ts-heap-'))
      dirs.push(dir)
      const json = join(dir, 'heap.json')
      const r = await hotpath(['heap', '-a', '800', '-c', '4', '--path', '/leak', '--save', join(dir, 'run'), '--json', json, '--', ...command], { env: loader.env, timeout: 120000 })
      assert.equal(r.code, 0, r.stderr)
      const h = JSON.parse(await readFile(json, 'utf8'))
      const [site] = h.allocations.sites
      assert.equal(site.file, SERVER, JSON.stringify(h.allocations.sites))
      assert.equal(site.line, await lineOf(SERVER, 'new Entry('))
      const entries = h.culprits.find((/** @type {any} */ c) => c.constructor === 'Entry')
      assert.ok(entries, JSON.stringify(h.culprits.map((/** @type {any} */ c) => c.constructor)))
      const held = entries.retainers.find((/** @type {any} */ s) => s.name === 'history')
      assert.ok(held, JSON.stringify(entries.retainers))
      // A place hotpath heap did not have to map is named as the runtime names it (an ES module's by its URL).
      const file = held.file.startsWith('file://') ? fileURLToPath(held.file) : held.file
      assert.deepEqual([file, held.line], [SERVER, await lineOf(SERVER, 'const history')])
      assert.deepEqual(h.warnings, [])
    })
  })
}

// A loader that compiles without writing a map leaves code whose lines are no line of the file: none is shown, and
// the warnings say which file, once.
test('without a source map, a compiled-in-memory file gets no line and a warning, not the compiled line', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-ts-nomap-'))
  dirs.push(dir)
  const json = join(dir, 'diagnosis.json')
  const r = await hotpath(['doctor', '-d', '2', '-c', '4', '--path', '/wait', '--no-progress', '--no-experiments', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, '--import', '@swc-node/register/esm-register', SERVER], { env: { SWC_NODE_PROJECT: join(DIR, 'tsconfig.json'), SWC_NODE_SOURCE_MAP_MODE: 'none' }, timeout: 90000 })
  assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}`)
  const d = JSON.parse(await readFile(json, 'utf8'))
  const wait = d.culprits.find((/** @type {any} */ c) => c.measure === 'waits')
  assert.ok(wait, JSON.stringify(d.culprits))
  assert.deepEqual([wait.file, wait.line], ['test/fixtures/servers/typescript/work.ts', 0])
  const warning = d.warnings.find((/** @type {any} */ w) => w.file === WORK)
  assert.ok(warning, JSON.stringify(d.warnings))
  assert.deepEqual([warning.kind, warning.affects, warning.loss], ['sourceMap', 'nothing', { kind: 'source-lines', lost: true, map: null }])
  assert.equal(d.warnings.filter((/** @type {any} */ w) => w.file === WORK).length, 1, 'said once')
  assert.match(r.stdout, /! test\/fixtures\/servers\/typescript\/work\.ts ran as code a loader compiled in memory, with no source map/)
  assert.doesNotMatch(r.stdout, /work\.ts:\d/)
})

// A bundle whose map is gone is shown at its own lines, which are true lines of the file named, with a warning.
test('a bundle whose map is missing is blamed at its own lines, with a warning naming both', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-ts-lostmap-'))
  dirs.push(dir)
  const entry = join(dir, 'busy.ts')
  await writeFile(entry, [
    'function spin (n: number): number {',
    '  let s = 0',
    '  for (let i = 0; i < n; i++) s = (s * 31 + i) | 0',
    '  return s',
    '}',
    'const end = Date.now() + 500',
    'let t = 0',
    'while (Date.now() < end) t += spin(200000)',
    'console.log(t !== 0)',
    ''
  ].join('\n'))
  const bundle = join(dir, 'busy.mjs')
  await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', sourcemap: true, outfile: bundle, logLevel: 'silent' })
  await rm(`${bundle}.map`)
  const { spawnSync } = await import('node:child_process')
  const ran = spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', join(dir, 'prof'), '--cpu-prof-interval', '200', bundle], { encoding: 'utf8' })
  assert.equal(ran.status, 0, ran.stderr)
  const [profile] = await readdir(join(dir, 'prof'))
  const r = await hotpath(['flame', '--from', join(dir, 'prof', profile), '-o', join(dir, 'flame'), '--json'])
  assert.equal(r.code, 0, r.stderr)
  const f = JSON.parse(r.stdout)
  const spin = f.culprits.find((/** @type {any} */ c) => c.function === 'spin')
  assert.ok(spin, JSON.stringify(f.culprits))
  assert.equal(spin.file, bundle)
  assert.equal(spin.line, await lineOf(bundle, 'i < n; i++'))
  assert.equal(f.warnings.length, 1, JSON.stringify(f.warnings))
  assert.match(f.warnings[0], new RegExp(`The source map of ${bundle.replace(/[/.]/g, '\\$&')} could not be read \\(unreadable \\(ENOENT\\): ${bundle.replace(/[/.]/g, '\\$&')}\\.map\\)`))
  assert.match(r.stderr, /hotpath flame: The source map of .*busy\.mjs could not be read/)
})

// A package that ships its compiled files with maps to sources it leaves out (Sequelize's lib/ maps to src/): those
// sources are no file one can open, the installed file is. Its own lines are shown; a package that ships its
// sources is shown at them.
test('a package whose map names sources it does not ship is blamed at its installed lines', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-ts-pkgmap-'))
  dirs.push(dir)
  const pkg = join(dir, 'node_modules', 'spinlib')
  const src = join(pkg, 'src', 'spin.ts')
  const lib = join(pkg, 'lib', 'spin.js')
  const { mkdir } = await import('node:fs/promises')
  await mkdir(join(pkg, 'src'), { recursive: true })
  await writeFile(src, [
    'export function spin (n: number): number {',
    '  let s = 0',
    '  for (let i = 0; i < n; i++) s = (s * 31 + i) | 0',
    '  return s',
    '}',
    ''
  ].join('\n'))
  await build({ entryPoints: [src], outfile: lib, format: 'esm', platform: 'node', sourcemap: true, logLevel: 'silent' })
  const main = join(dir, 'main.mjs')
  await writeFile(main, 'import { spin } from \'./node_modules/spinlib/lib/spin.js\'\nconst end = Date.now() + 500\nlet t = 0\nwhile (Date.now() < end) t += spin(200000)\nconsole.log(t !== 0)\n')
  const { spawnSync } = await import('node:child_process')
  /** @param {string} name */
  const spinCulprit = async (name) => {
    const ran = spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', join(dir, name), '--cpu-prof-interval', '200', main], { encoding: 'utf8' })
    assert.equal(ran.status, 0, ran.stderr)
    const [profile] = await readdir(join(dir, name))
    const r = await hotpath(['flame', '--from', join(dir, name, profile), '-o', join(dir, `${name}-flame`), '--json'])
    assert.equal(r.code, 0, r.stderr)
    const f = JSON.parse(r.stdout)
    assert.deepEqual(f.warnings, [])
    // The app's loop is the culprit; the package's function is where its time goes.
    const c = f.culprits.flatMap((/** @type {any} */ c) => c.calls).find((/** @type {any} */ c) => c.function === 'spin')
    assert.ok(c, JSON.stringify(f.culprits))
    return c
  }
  const shipped = await spinCulprit('shipped')
  assert.deepEqual([shipped.file, shipped.line], [src, 1])
  await rm(join(pkg, 'src'), { recursive: true })
  const unshipped = await spinCulprit('unshipped')
  assert.deepEqual([unshipped.file, unshipped.line], [lib, await lineOf(lib, 'function spin')])
})

// A profile taken under tsx and read on its own has no copy of what tsx compiled: its positions are not the file's.
test('flame --from a profile taken under tsx: the .ts file gets no line, and a warning says how to get them', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-ts-from-'))
  dirs.push(dir)
  const script = join(dir, 'busy.ts')
  await writeFile(script, [
    'interface Options { n: number }',
    'function spin (o: Options): number {',
    '  let s = 0',
    '  for (let i = 0; i < o.n; i++) s = (s * 31 + i) | 0',
    '  return s',
    '}',
    'const end = Date.now() + 500',
    'let t = 0',
    'while (Date.now() < end) t += spin({ n: 200000 })',
    'console.log(t !== 0)',
    ''
  ].join('\n'))
  const { spawnSync } = await import('node:child_process')
  const ran = spawnSync(process.execPath, ['--import', 'tsx', '--cpu-prof', '--cpu-prof-dir', join(dir, 'prof'), script], { cwd: ROOT, encoding: 'utf8' })
  assert.equal(ran.status, 0, ran.stderr)
  // tsx's own thread writes a profile too: the main thread's is the first.
  const profile = (await readdir(join(dir, 'prof'))).find(f => /\.0\.\d+\.cpuprofile$/.test(f))
  assert.ok(profile)
  const r = await hotpath(['flame', '--from', join(dir, 'prof', profile), '-o', join(dir, 'flame'), '--json'], { cwd: dir })
  assert.equal(r.code, 0, r.stderr)
  const f = JSON.parse(r.stdout)
  const spin = f.culprits.find((/** @type {any} */ c) => c.function === 'spin')
  assert.ok(spin, JSON.stringify(f.culprits))
  assert.deepEqual([spin.file, spin.line, spin.functionLine], [script, 0, 0])
  assert.deepEqual(f.warnings, ['busy.ts ran as code a loader compiled in memory, which this profile does not hold (its positions are not in the file): its lines are not shown; record with hotpath flame -- <command>, which keeps that code.'])
})
