// hotpath flame tells the truth about runs that went wrong (issue #16): a target that crashes mid-load, a run stopped
// by Ctrl-C. The profile until then is still written; the first line says what happened; the exit code says it too.
// And profiles too big for one string (to read, or whose outputs would be) are rendered all the same.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { constants } from 'node:buffer'
import { createReadStream } from 'node:fs'
import { mkdtemp, open, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BIN, ROOT, hotpath } from './helpers/cli.js'
import { assertSchema } from './helpers/schema.js'
import { recordCpuProfile } from './fixtures/profiles/record.js'

// A server whose handler burns CPU in a named function (so the profile has something of the app's to show), and that
// dies `CRASH_AFTER` ms after its first request, the way the CRASH variable says.
const APP = `
const http = require('node:http')
function busyWork () {
  let x = 0
  for (let i = 0; i < 20000; i++) x += Math.sqrt(i)
  return x
}
let first = true
http.createServer((req, res) => {
  if (first && process.env.CRASH) {
    first = false
    setTimeout(() => {
      if (process.env.CRASH === 'exit') {
        console.error('fatal: lost the database connection')
        process.exit(9)
      }
      throw new Error('boom: the cache is gone')
    }, Number(process.env.CRASH_AFTER))
  }
  res.end(String(busyWork()))
}).listen(0, '127.0.0.1')
`

/** @returns {Promise<{ dir: string, app: string }>} */
async function appDir () {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-failures-'))
  const app = join(dir, 'app.cjs')
  await writeFile(app, APP)
  return { dir, app }
}

/**
 * hotpath's own lines of stderr: without the status line printed while the run is under way.
 * @param {string} stderr
 */
function reportLines (stderr) {
  return stderr.split('\n').filter(l => !/^Target listening on /.test(l))
}

for (const [crash, code, message] of /** @type {const} */ ([['exit', 9, 'fatal: lost the database connection'], ['throw', 1, 'Error: boom: the cache is gone']])) {
  test(`flame -- a target that crashes mid-load (${crash}): the profile until the crash written, said first, exit 4`, async () => {
    const { dir, app } = await appDir()
    const r = await hotpath(['flame', '-c', '2', '-d', '8', '--no-progress', '-o', join(dir, 'out', 'crash'), '--', process.execPath, app], {
      env: { CRASH: crash, CRASH_AFTER: '2000' }
    })
    assert.equal(r.code, 4, r.stderr)
    const lines = reportLines(r.stderr)
    const m = /^hotpath flame: the target exited with code (\d+), (\d+\.\d) s into the load; the flame graph covers the run until then$/.exec(lines[0])
    assert.ok(m, `first line: ${r.stderr}`)
    assert.equal(Number(m[1]), code)
    // It crashed 2 s after the first request, well before the 8 s asked for.
    assert.ok(Number(m[2]) >= 1.5 && Number(m[2]) < 7, lines[0])
    assert.match(lines[1], /^ {2}\| /, 'the target\'s last lines follow')
    assert.ok(lines.some(l => l === `  | ${message}`), `its error message is kept: ${r.stderr}`)
    assert.deepEqual((await readdir(join(dir, 'out'))).sort(), ['crash.cpuprofile', 'crash.html', 'crash.pb.gz', 'crash.txt'])
    const collapsed = await readFile(join(dir, 'out', 'crash.txt'), 'utf8')
    assert.match(collapsed, /busyWork \([^)]*app\.cjs:\d+\)/, 'the profile until the crash is kept')
    assert.match(r.stdout, /busyWork/)
  })
}

test('flame --json -- a target that crashes: the JSON carries the failure', async () => {
  const { dir, app } = await appDir()
  const r = await hotpath(['flame', '-c', '2', '-d', '8', '--json', '-o', join(dir, 'crash'), '--', process.execPath, app], {
    env: { CRASH: 'throw', CRASH_AFTER: '1500' }
  })
  assert.equal(r.code, 4, r.stderr)
  const out = JSON.parse(r.stdout)
  assertSchema('flame', out)
  assert.equal(out.failure.category, 'target-failed')
  assert.equal(out.failure.what, 'the target exited with code 1')
  assert.equal(out.failure.error.message, 'Error: boom: the cache is gone')
  assert.equal(out.interrupted, false)
  assert.equal(out.files.length, 4)
  assert.match(reportLines(r.stderr)[0], /^hotpath flame: the target exited with code 1, /)
})

test('flame -- a target that exits before listening: exit 4 with its last lines', async () => {
  const { dir } = await appDir()
  const early = join(dir, 'early.cjs')
  await writeFile(early, "console.error('missing config: PORT'); process.exit(3)\n")
  const r = await hotpath(['flame', '-o', join(dir, 'early'), '--', process.execPath, early])
  assert.equal(r.code, 4, r.stderr)
  assert.match(r.stderr, /^hotpath flame: the target exited with code 3 before listening\n {2}\| missing config: PORT\n/)
  assert.deepEqual((await readdir(dir)).sort(), ['app.cjs', 'early.cjs'], 'nothing written')
})

test('flame -- a load that fails (every response 404): said first, exit 3, the files still written', async () => {
  const { dir } = await appDir()
  const app = join(dir, 'not-found.cjs')
  await writeFile(app, "require('node:http').createServer((req, res) => { res.statusCode = 404; res.end('no') }).listen(0, '127.0.0.1')\n")
  const r = await hotpath(['flame', '-c', '2', '-d', '1', '--no-progress', '--json', '-o', join(dir, 'nf'), '--', process.execPath, app])
  assert.equal(r.code, 3, r.stderr)
  assert.match(reportLines(r.stderr)[0], /^hotpath flame: the load failed \(.*404.*\); the flame graph shows the server giving those answers$/)
  const out = JSON.parse(r.stdout)
  assertSchema('flame', out)
  assert.equal(out.failure.category, 'load-failed')
  assert.equal(out.files.length, 4)
})

for (const [signal, code] of /** @type {const} */ ([['SIGINT', 130], ['SIGTERM', 143]])) {
  test(`flame -- interrupted by ${signal}: the profile until then written, said first, exit ${code}`, async () => {
    const { dir, app } = await appDir()
    const r = await interrupt(['flame', '-c', '2', '-d', '30', '--json', '-o', join(dir, 'out', 'partial'), '--', process.execPath, app], signal)
    assert.equal(r.code, code, r.stderr)
    assert.match(reportLines(r.stderr)[0], new RegExp(`^hotpath flame: interrupted \\(${signal}\\) after \\d+\\.\\d s of load; the flame graph covers the run until then$`))
    const out = JSON.parse(r.stdout)
    assertSchema('flame', out)
    assert.equal(out.interrupted, true)
    assert.equal(out.signal, signal)
    assert.equal(out.failure, null)
    assert.deepEqual((await readdir(join(dir, 'out'))).sort(), ['partial.cpuprofile', 'partial.html', 'partial.pb.gz', 'partial.txt'])
    assert.match(await readFile(join(dir, 'out', 'partial.txt'), 'utf8'), /busyWork/)
    assert.ok(r.elapsed < 25, `stopped early, not after the 30 s asked for (${r.elapsed} s)`)
  })
}

/**
 * Starts the CLI and sends it `signal` a second after the load began.
 * @param {string[]} args
 * @param {NodeJS.Signals} signal
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string, elapsed: number }>}
 */
function interrupt (args, signal) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    /** @type {NodeJS.Timeout | undefined} */
    let kill
    child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c })
    child.stderr.setEncoding('utf8').on('data', (c) => {
      stderr += c
      if (kill === undefined && stderr.includes('loading it')) kill = setTimeout(() => child.kill(signal), 1000)
    })
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`did not stop:\n${stderr}`)) }, 40000)
    child.on('close', (code) => {
      clearTimeout(kill)
      clearTimeout(timer)
      resolve({ code, stdout, stderr, elapsed: (Date.now() - started) / 1000 })
    })
  })
}

test('flame --from a profile whose collapsed stacks are longer than the longest string: every file written', async () => {
  // A recursion DEPTH calls deep with a sample at every level: the collapsed text is ~DEPTH²/2 frames (≈ 690 MB) from
  // an input of under 1 MB. It used to end in "internal error: Invalid string length" with nothing written.
  const DEPTH = 3500
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-big-'))
  try {
    const frame = (/** @type {number} */ i) => ({ functionName: `handlerWithAVeryLongDescriptiveName${i}`, url: `file:///srv/app/node_modules/some-package/lib/deeply/nested/module-${i}.js`, scriptId: String(i), lineNumber: 10, columnNumber: 2 })
    const nodes = [{ id: 1, callFrame: { functionName: '(root)', url: '', scriptId: '0', lineNumber: -1, columnNumber: -1 }, children: [2] }]
    for (let i = 2; i <= DEPTH + 1; i++) nodes.push({ id: i, callFrame: frame(i), children: i <= DEPTH ? [i + 1] : [] })
    const samples = nodes.slice(1).map(n => n.id)
    await writeFile(join(dir, 'deep.cpuprofile'), JSON.stringify({ nodes, startTime: 0, endTime: DEPTH * 100, samples, timeDeltas: samples.map(() => 100) }))

    const r = await hotpath(['flame', '--from', join(dir, 'deep.cpuprofile'), '--json'], { timeout: 120000 })
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(JSON.parse(r.stdout).files.map((/** @type {{ format: string }} */ f) => f.format), ['html', 'pprof', 'collapsed'])
    const collapsed = join(dir, 'deep.txt')
    assert.ok((await stat(collapsed)).size > constants.MAX_STRING_LENGTH, `${(await stat(collapsed)).size} bytes`)
    // Every stack is there, whole: line k holds the k frames of its stack and one sample.
    let lines = 0
    let partial = ''
    for await (const chunk of createReadStream(collapsed, { encoding: 'utf8', highWaterMark: 1 << 22 })) {
      const parts = (partial + chunk).split('\n')
      partial = /** @type {string} */ (parts.pop())
      for (const line of parts) {
        lines++
        assert.equal(line.split(';').length, lines)
        assert.ok(line.startsWith('handlerWithAVeryLongDescriptiveName2 (/srv/app/') && line.endsWith(`handlerWithAVeryLongDescriptiveName${lines + 1} (/srv/app/node_modules/some-package/lib/deeply/nested/module-${lines + 1}.js:11) 1`))
      }
    }
    assert.equal(partial, '')
    assert.equal(lines, DEPTH)
    const html = await open(join(dir, 'deep.html'))
    const { buffer } = await html.read({ buffer: Buffer.alloc(15), position: 0 })
    await html.close()
    assert.equal(buffer.toString(), '<!doctype html>')
    assert.ok((await stat(join(dir, 'deep.pb.gz'))).size > 0)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('flame --from reads a profile longer than the longest string as it streams in: the same files, the same culprits', async () => {
  // A real file that long takes 20 s and 2 GB to render (a 544 MB .cpuprofile of 49.5 M samples: 19 s, 2.0 GB of
  // memory on a 2-core VM); the hidden HOTPATH_JSON_STREAM_ABOVE=<bytes> makes smaller files take the same path.
  const script = fileURLToPath(new URL('./fixtures/profiles/etag-server.js', import.meta.url))
  const { file } = await recordCpuProfile(script)
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-stream-'))
  const profile = JSON.parse(await readFile(file, 'utf8'))
  // Written three ways: as node writes it, indented, and wrapped as the inspector answers ({ profile }).
  await writeFile(join(dir, 'plain.cpuprofile'), JSON.stringify(profile))
  await writeFile(join(dir, 'indented.cpuprofile'), JSON.stringify(profile, null, 2))
  await writeFile(join(dir, 'wrapped.cpuprofile'), JSON.stringify({ profile }))
  const whole = await hotpath(['flame', '--from', join(dir, 'plain.cpuprofile'), '-o', join(dir, 'whole'), '--json'])
  assert.equal(whole.code, 0, whole.stderr)
  for (const name of ['plain', 'indented', 'wrapped']) {
    const streamed = await hotpath(['flame', '--from', join(dir, `${name}.cpuprofile`), '-o', join(dir, `streamed-${name}`), '--json'], { env: { HOTPATH_JSON_STREAM_ABOVE: '1' } })
    assert.equal(streamed.code, 0, streamed.stderr)
    assert.deepEqual(JSON.parse(streamed.stdout).culprits, JSON.parse(whole.stdout).culprits, name)
    assert.equal(await readFile(join(dir, `streamed-${name}.txt`), 'utf8'), await readFile(join(dir, 'whole.txt'), 'utf8'), name)
  }

  // A broken file read that way is one line naming it, exit 2.
  const text = JSON.stringify(profile)
  const cases = [
    ['truncated', text.slice(0, Math.floor(text.length / 2)), /truncated\.cpuprofile' is not JSON \(expected a \.cpuprofile or \.heapprofile\): it ends before its last value does/],
    ['garbage', text.replace('"samples":[', '"samples":[1,,'), /garbage\.cpuprofile' is not JSON/],
    ['trailing', `${text} {}`, /trailing\.cpuprofile' is not JSON .*text after the end/],
    ['number', '42', /number\.cpuprofile' is not JSON .*does not start with \{ or \[/],
    ['invalid', JSON.stringify({ ...profile, samples: [123456789] }), /invalid\.cpuprofile is not a valid \.cpuprofile: sample 0 refers to node 123456789/]
  ]
  for (const [name, content, message] of /** @type {[string, string, RegExp][]} */ (cases)) {
    await writeFile(join(dir, `${name}.cpuprofile`), content)
    const r = await hotpath(['flame', '--from', join(dir, `${name}.cpuprofile`)], { env: { HOTPATH_JSON_STREAM_ABOVE: '1' } })
    assert.equal(r.code, 2, `${name}: ${r.stderr}`)
    assert.match(r.stderr, message)
    assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`)
  }
})
