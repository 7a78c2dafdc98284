// hotpath flame --from, as a user runs it: a real profile from `node --cpu-prof` in, every file out and read back.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { copyFile, mkdtemp, readFile, readdir, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { Profile } from 'pprof-format'
import { startHeapSampling } from 'hotpath'
import { hotpath } from './helpers/cli.js'
import { recordCpuProfile } from './fixtures/profiles/record.js'

const script = fileURLToPath(new URL('./fixtures/profiles/etag-server.js', import.meta.url))
/** @type {string} */
let profileFile

before(async () => {
  // 3 s of load, not the default 1.5: once, with the suite's other tests on both cores, the 1.5 s profile's first
  // culprit was an '(anonymous)' function of the fixture, not etag() — too few requests for the load to dominate.
  profileFile = (await recordCpuProfile(script, { duration: 3 })).file
})

test('flame --from a node --cpu-prof profile: writes html, pprof and collapsed stacks, and names the culprit', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-'))
  const r = await hotpath(['flame', '--from', profileFile, '-o', join(dir, 'out', 'etag')])
  assert.equal(r.code, 0, r.stderr)
  const files = (await readdir(join(dir, 'out'))).sort()
  assert.deepEqual(files, ['etag.html', 'etag.pb.gz', 'etag.txt'])
  const hashLine = readLines(script).findIndex(l => l.includes("createHash('sha512')")) + 1
  assert.match(r.stdout, new RegExp(`etag +test/fixtures/profiles/etag-server\\.js:${hashLine}\\b`))
  assert.match(r.stdout, /→ .*update \(node:internal\/crypto\/hash\)/)
  assert.match(r.stdout, /etag\.html +flame graph/)

  const html = await readFile(join(dir, 'out', 'etag.html'), 'utf8')
  assert.ok(html.startsWith('<!doctype html>'))
  assert.doesNotMatch(html, /(src|href)=["']?(https?:)?\/\//, 'nothing to fetch')
  assert.match(html, /"culprits":\[\{"function":"etag"/)
  // The anonymous request handler is shown by what it is passed to; the machine formats keep V8's name.
  assert.match(html, /"label":\[[^\]]*"createServer callback"/)
  const pprof = Profile.decode(gunzipSync(await readFile(join(dir, 'out', 'etag.pb.gz'))))
  assert.ok(pprof.stringTable.strings.includes('etag'))
  assert.ok(pprof.sample.length > 0)
  const collapsed = await readFile(join(dir, 'out', 'etag.txt'), 'utf8')
  assert.match(collapsed, /etag \([^)]*etag-server\.js:\d+\)/)
  assert.match(collapsed, /\(anonymous\) \([^)]*etag-server\.js:\d+\)/)
})

test('flame --from without -o writes next to the profile; --json prints files and culprits', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-'))
  const copy = join(dir, 'server.cpuprofile')
  await copyFile(profileFile, copy)
  const r = await hotpath(['flame', '--from', copy, '--json', '--top', '3'])
  assert.equal(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.deepEqual(out.files.map((/** @type {{ path: string }} */ f) => f.path).sort(), [join(dir, 'server.html'), join(dir, 'server.pb.gz'), join(dir, 'server.txt')])
  assert.equal(out.culprits[0].function, 'etag')
  assert.equal(out.culprits[0].kind, 'app')
  assert.ok(out.culprits.length <= 3)
  assert.equal(out.unit, 'ms')
  for (const f of out.files) assert.ok((await stat(f.path)).size > 0)
  assert.deepEqual((await readdir(dir)).sort(), ['server.cpuprofile', 'server.html', 'server.pb.gz', 'server.txt'], 'the input is left alone')
})

test('flame --from two profiles: one graph, a node per process', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-'))
  const r = await hotpath(['flame', '--from', profileFile, '--from', profileFile, '-o', `${dir}/`, '--json'])
  assert.equal(r.code, 0, r.stderr)
  const html = await readFile(join(dir, profileFile.split('/').pop()?.replace('.cpuprofile', '.html') ?? ''), 'utf8')
  const data = JSON.parse(/** @type {string[]} */ (/<script type="application\/json" id="flame-data">(.*?)<\/script>/s.exec(html))[1])
  const labels = data.nodes.parent.map((/** @type {number} */ p, /** @type {number} */ i) => p === 0 ? data.frames.name[data.nodes.frame[i]] : null).filter(Boolean)
  const name = /** @type {string} */ (profileFile.split('/').pop())
  assert.deepEqual(labels, [name, `${name} (2)`])
})

test('flame --from a heap profile: an allocation graph in bytes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-'))
  const capture = await startHeapSampling({ interval: 1024 })
  const kept = Array.from({ length: 20000 }, (_, i) => ({ i, text: `row ${i}` }))
  await writeFile(join(dir, 'mem.heapprofile'), JSON.stringify(await capture.stop()))
  const r = await hotpath(['flame', '--from', join(dir, 'mem.heapprofile'), '--json'])
  assert.equal(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.equal(out.unit, 'bytes')
  assert.ok(out.culprits[0].selfBytes !== undefined)
  assert.ok(kept.length)
  assert.match(await readFile(join(dir, 'mem.html'), 'utf8'), /"type":"heap"/)
})

test('flame: mistakes are one line and exit 2', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-'))
  await writeFile(join(dir, 'bad.cpuprofile'), '{"nodes": [{"id": 1}]}')
  await writeFile(join(dir, 'text.cpuprofile'), 'hello')
  const cases = [
    [[], /flame needs --from/],
    [['--from', join(dir, 'missing.cpuprofile')], /cannot read .*missing\.cpuprofile.*ENOENT/],
    [['--from', join(dir, 'bad.cpuprofile')], /bad\.cpuprofile is not a valid \.cpuprofile: node 1 has no valid callFrame/],
    [['--from', join(dir, 'text.cpuprofile')], /is not JSON/],
    [['--from', profileFile, '--', 'node', 'x.js'], /either --from/],
    [['--from', profileFile, '--top', 'x'], /--top/],
    [['--bogus'], /unknown option '--bogus'/],
    [['--', 'hotpath-no-such-command'], /command not found: hotpath-no-such-command/]
  ]
  for (const [args, message] of /** @type {[string[], RegExp][]} */ (cases)) {
    const r = await hotpath(['flame', ...args])
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, message)
    assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`)
  }
  // a target that fails shows its last lines of stderr under the one-line error
  const exits = await hotpath(['flame', '--', process.execPath, join(dir, 'no-such-server.js')])
  assert.equal(exits.code, 4)
  assert.match(exits.stderr, /^hotpath flame: the target exited with code 1 before listening\n {2}\| /)
  const help = await hotpath(['flame', '--help'])
  assert.equal(help.code, 0)
  assert.match(help.stdout, /--from <file>/)
})

/** @param {string} file */
function readLines (file) {
  return readFileSync(file, 'utf8').split('\n')
}
