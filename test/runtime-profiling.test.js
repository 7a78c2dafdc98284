// On-demand profiling in a real server process: a signal or an HTTP request writes profiles that hotpath flame
// renders; one capture at a time; the token is required; the library never holds the process open.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { load } from 'hotpath'
import { profiler } from 'hotpath/runtime'
import { hotpath } from './helpers/cli.js'
import { startListeningApp } from './helpers/child.js'

const app = fileURLToPath(new URL('./fixtures/profiles/runtime-app.js', import.meta.url))
const TOKEN = 'test-token-0123456789abcdef'

/**
 * Starts the fixture app; its stdout lines are collected.
 * @param {string} dir
 */
async function startApp (dir) {
  const { child, port, lines } = await startListeningApp(app, { PROFILE_DIR: dir, PROFILE_TOKEN: TOKEN, PROFILE_SECONDS: '1' })
  const captures = () => lines.filter(l => l.startsWith('capture ')).map(l => JSON.parse(l.slice(8)))
  return { child, port, lines, captures }
}

/** @param {number} ms */
const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))

/**
 * @param {() => boolean} condition
 * @param {number} [ms]
 */
async function waitFor (condition, ms = 10000) {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await sleep(25)
  }
}

test('SIGUSR2 under load writes CPU and heap profiles; a second signal during a capture is refused; flame renders them', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-ondemand-'))
  const { child, port, captures } = await startApp(dir)
  try {
    const loading = load({ url: `http://127.0.0.1:${port}/quote`, duration: 2.5, connections: 4 })
    await sleep(300)
    child.kill('SIGUSR2')
    await sleep(100)
    child.kill('SIGUSR2')
    await waitFor(() => captures().some(c => c.ok))
    await loading
    const [refused, done] = captures()
    assert.deepEqual(refused, { ok: false, reason: 'busy' })
    assert.equal(done.ok, true)
    assert.ok(done.duration >= 0.9 && done.duration < 3, `captured ${done.duration} s`)
    const files = (await readdir(dir)).sort()
    assert.equal(files.length, 4, files.join())
    assert.deepEqual(files.map(f => f.replace(/^\d+-[\dT.]+Z-[0-9a-f]{16}/, '')).sort(), ['.cpu.pb.gz', '.cpuprofile', '.heap.pb.gz', '.heapprofile'])
    assert.ok(files.every(f => f.startsWith(`${child.pid}-`)))
    assert.deepEqual(done.files.sort(), files.map(f => join(dir, f)))

    const cpu = /** @type {string} */ (done.files.find((/** @type {string} */ f) => f.endsWith('.cpuprofile')))
    const flame = await hotpath(['flame', '--from', cpu, '--json'])
    assert.equal(flame.code, 0, flame.stderr)
    const out = JSON.parse(flame.stdout)
    assert.equal(out.culprits[0].function, 'priceQuote')
    assert.equal(out.culprits[0].file, app)
    const heap = /** @type {string} */ (done.files.find((/** @type {string} */ f) => f.endsWith('.heapprofile')))
    const heapFlame = await hotpath(['flame', '--from', heap, '--json'])
    assert.equal(heapFlame.code, 0, heapFlame.stderr)
    assert.equal(JSON.parse(heapFlame.stdout).unit, 'bytes')
  } finally {
    child.kill('SIGTERM')
    await once(child, 'exit')
  }
})

test('the HTTP trigger: POST with the token only, one capture at a time, and it answers with the files', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-ondemand-'))
  const { child, port } = await startApp(dir)
  const url = `http://127.0.0.1:${port}/debug/profile`
  try {
    assert.equal((await fetch(url, { method: 'POST' })).status, 401)
    assert.equal((await fetch(url, { method: 'POST', headers: { authorization: 'Bearer wrong-token-0123456789abcdef' } })).status, 401)
    assert.equal((await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}x` } })).status, 401)
    const get = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })
    assert.equal(get.status, 405)
    assert.equal(get.headers.get('allow'), 'POST')
    assert.equal((await fetch(`${url}?seconds=999`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status, 400)
    assert.deepEqual(await readdir(dir), [], 'nothing captured by refused requests')

    const first = fetch(`${url}?seconds=0.5&heap=0`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })
    await sleep(100)
    const second = await fetch(`${url}?seconds=0.5`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })
    assert.equal(second.status, 409)
    const res = await first
    assert.equal(res.status, 200)
    const body = await res.json()
    assert.equal(body.files.length, 2, 'no heap profile when heap=0')
    assert.deepEqual((await readdir(dir)).sort(), body.files.map((/** @type {string} */ f) => f.slice(dir.length + 1)).sort())
  } finally {
    child.kill('SIGTERM')
    const [code] = await once(child, 'exit')
    // The app exits by itself once its server is closed: nothing of the profiler holds it open.
    assert.equal(code, 0)
  }
})

test('a capture in progress does not keep the process alive, and a failed capture does not throw', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-ondemand-'))
  const script = `
    import { profiler } from 'hotpath/runtime'
    const p = profiler({ dir: ${JSON.stringify(dir)}, duration: 30 })
    p.capture()
    console.log('capturing', p.busy)
  `
  const started = Date.now()
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (c) => { out += c })
  const [code] = await once(child, 'exit')
  assert.equal(code, 0)
  assert.equal(out.trim(), 'capturing true')
  assert.ok(Date.now() - started < 10000, 'it exited long before the 30 s capture would end')

  // Captures here run in this process, whose only pending work would be the profiler's unref'd timer: hold it open.
  const hold = setInterval(() => {}, 1000)
  t.after(() => clearInterval(hold))
  // A directory that cannot be created: the capture resolves as failed and onError hears of it.
  const blocker = join(dir, 'file')
  await writeFile(blocker, 'not a directory')
  /** @type {Error[]} */
  const errors = []
  const p = profiler({ dir: join(blocker, 'sub'), duration: 0.1, signal: false, heap: false, onError: (e) => errors.push(e) })
  const result = await p.capture()
  assert.equal(result.ok, false)
  assert.equal(result.ok === false && result.reason, 'failed')
  assert.equal(errors.length, 1)
  // the profiler was stopped: a new capture can start
  const again = profiler({ dir, duration: 0.1, signal: false, heap: false })
  const ok = await again.capture()
  assert.equal(ok.ok, true)
  await again.close()
  assert.deepEqual(await again.capture(), { ok: false, reason: 'closed' })
  assert.throws(() => again.httpHandler({ token: 'short' }), /at least 16 characters/)
  assert.throws(() => profiler({ duration: -1, signal: false }), /duration must be a positive number/)
})
