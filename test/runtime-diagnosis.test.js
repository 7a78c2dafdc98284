// hotpath/runtime's on-demand diagnosis: a server's own trigger (HTTP with its token, or a signal) runs doctor's probe
// for a few seconds of traffic the test sends it, writes a private run directory (0700, files 0600) while the server
// keeps serving, and `hotpath doctor --analyse` reads it: each route's problem and line. Without the token, nothing.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath, ROOT } from './helpers/cli.js'
import { lineOf } from './helpers/source-lines.js'
import { assertSchema } from './helpers/schema.js'

const SERVER = 'test/fixtures/observed/runtime-server.js'
const TOKEN = 'a-token-of-twenty-four-c'

test('the diagnosis trigger refuses without its token, and with it writes a private run that doctor --analyse reads, the server serving throughout', { timeout: 90000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-diagnose-'))
  const child = spawn(process.execPath, [SERVER], { cwd: ROOT, env: { ...process.env, DIAGNOSE_DIR: dir, DIAGNOSE_TOKEN: TOKEN, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (c) => { out += c })
  child.stderr.setEncoding('utf8').on('data', (c) => { out += c })
  const state = { sending: true }
  try {
    const port = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start: ${out}`)), 10000)
      child.stdout.on('data', () => {
        const m = /127\.0\.0\.1:(\d+)\//.exec(out)
        if (m) { clearTimeout(timer); resolve(Number(m[1])) }
      })
    })
    const base = `http://127.0.0.1:${port}`
    // The traffic: the two routes in turn, one request at a time, as a client of the server's own would send them.
    let answered = 0
    let failed = 0
    const traffic = (async () => {
      for (let i = 0; state.sending; i++) {
        try {
          const res = await fetch(`${base}${i % 2 === 0 ? '/work' : `/items/${i}`}`)
          await res.text()
          if (res.status === 200) answered++
          else failed++
        } catch {
          failed++
        }
        await new Promise(resolve => setTimeout(resolve, 15))
      }
    })()

    const post = (/** @type {string} */ auth, query = '') => fetch(`${base}/debug/diagnose${query}`, { method: 'POST', headers: auth ? { authorization: auth } : {} })
    assert.equal((await post('')).status, 401)
    assert.equal((await post(`Bearer ${TOKEN.slice(0, -1)}x`)).status, 401)
    assert.equal((await fetch(`${base}/debug/diagnose`)).status, 405)
    assert.deepEqual(await readdir(dir), [], 'nothing written without the token')

    const before = answered
    const res = await post(`Bearer ${TOKEN}`, '?seconds=3')
    assert.equal(res.status, 200)
    const body = await res.json()
    assert.ok(answered - before >= 20, `the server served through the window: ${answered - before} answers`)
    assert.equal(failed, 0)
    assert.ok(body.dir.startsWith(dir))
    assert.equal((await stat(body.dir)).mode & 0o777, 0o700)
    assert.ok(body.files.some((/** @type {string} */ f) => f.endsWith('run.json')) && body.files.some((/** @type {string} */ f) => /events-\d+-0\.ndjson$/.test(f)))
    for (const f of body.files) assert.equal((await stat(f)).mode & 0o777, 0o600, f)

    const r = await hotpath(['doctor', '--analyse', body.dir, '--json'])
    assert.equal(r.code, 0, r.stderr)
    const d = JSON.parse(r.stdout)
    assertSchema('doctor', d)
    assert.equal(d.observed, true)
    assert.ok(d.traffic.requests >= 20)
    const route = (/** @type {string} */ key) => d.routes.find((/** @type {any} */ x) => `${x.method} ${x.route}` === key)
    const [cpuLine, waitLine] = await Promise.all([lineOf(SERVER, '// the CPU'), lineOf(SERVER, '// the wait')])
    assert.deepEqual([route('GET /work')?.culprits[0]?.function, route('GET /work')?.culprits[0]?.line], ['work', cpuLine], JSON.stringify(route('GET /work')))
    assert.ok(route('GET /items/:id')?.culprits.some((/** @type {any} */ c) => c.measure === 'waits' && c.line === waitLine), JSON.stringify(route('GET /items/:id')))

    // The signal starts one too; and the probe left the process: a second diagnosis attaches again.
    child.kill('SIGUSR2')
    const deadline = Date.now() + 20000
    while ((out.match(/^diagnosis \{"ok":true/gm) ?? []).length < 2 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
    assert.equal((out.match(/^diagnosis \{"ok":true/gm) ?? []).length, 2, out)
    assert.equal((await readdir(dir)).length, 2)
    state.sending = false
    await traffic
    assert.equal(failed, 0)
  } finally {
    state.sending = false
    child.kill('SIGKILL')
  }
})
