// hotpath flame -- <command>: the target is started under the probe, loaded, and profiled over exactly the load window.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath } from './helpers/cli.js'

test('profiles a server under load and names the blocking function', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-live-'))
  const out = join(dir, 'login')
  const r = await hotpath(['flame', '-d', '2', '--no-progress', '--json', '-o', out, '--', process.execPath, 'examples/event-loop/server.js'], { env: { PORT: '0' }, alone: true })
  assert.equal(r.code, 0, r.stderr)
  const result = JSON.parse(r.stdout)
  assert.deepEqual(result.files.map((/** @type {any} */ f) => f.format).sort(), ['collapsed', 'cpuprofile', 'html', 'pprof'])
  for (const f of result.files) assert.ok((await stat(f.path)).size > 0, `${f.path} written`)
  assert.equal(result.culprits[0].function, 'hashPassword')
  assert.equal(result.culprits[0].kind, 'app', 'the app root is found from the main script, not the working directory')
  const profile = JSON.parse(await readFile(`${out}.cpuprofile`, 'utf8'))
  const seconds = (profile.endTime - profile.startTime) / 1e6
  assert.ok(seconds > 1.5 && seconds < 4, `the profile covers the load window (${seconds} s), not the start-up`)
})

test('a cluster: one profile per worker, in one graph', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-live-'))
  const r = await hotpath(['flame', '-d', '2', '--no-progress', '-o', join(dir, 'cluster'), '--', process.execPath, 'examples/cluster/server.js'], { env: { PORT: '0' } })
  assert.equal(r.code, 0, r.stderr)
  const collapsed = await readFile(join(dir, 'cluster.txt'), 'utf8')
  const roots = new Set(collapsed.split('\n').filter(Boolean).map(l => l.split(';')[0]))
  assert.ok([...roots].filter(x => x.startsWith('pid ')).length >= 2, `profiles of the workers: ${[...roots].join(', ')}`)
})

test('bad invocations of the live mode', async () => {
  const none = await hotpath(['flame', '--', 'hotpath-no-such-command'], { refused: true })
  assert.equal(none.code, 2)
  assert.match(none.stderr, /command not found/)
  const both = await hotpath(['flame', '--from', 'x.cpuprofile', '--', 'node', 'x.js'], { refused: true })
  assert.equal(both.code, 2)
  assert.match(both.stderr, /either --from <file> or -- <command>/)
})

test('flame only profiles: nothing is added to the target\'s request path', async () => {
  // The server records how many 'request' listeners it has (doctor's probe adds one to count requests) and whether
  // anything listens on node:http's request channel.
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-flame-live-'))
  const server = join(dir, 'server.mjs')
  const seen = join(dir, 'seen.txt')
  await writeFile(server, `
import http from 'node:http'
import dc from 'node:diagnostics_channel'
import { writeFileSync } from 'node:fs'
const server = http.createServer((req, res) => {
  writeFileSync(${JSON.stringify(seen)}, server.listenerCount('request') + ' ' + dc.hasSubscribers('http.server.request.start'))
  res.end('ok')
})
server.listen(0, '127.0.0.1')
`)
  const flame = await hotpath(['flame', '-d', '1', '--no-progress', '-o', join(dir, 'f'), '--', process.execPath, server])
  assert.equal(flame.code, 0, flame.stderr)
  assert.equal(await readFile(seen, 'utf8'), '1 false', 'flame added nothing to the request path')
  const doctor = await hotpath(['doctor', '-d', '1', '--no-progress', '--save', join(dir, 'run'), '--', process.execPath, server])
  assert.equal(doctor.code, 0, doctor.stderr)
  assert.equal(await readFile(seen, 'utf8'), '2 false', 'the check sees the doctor\'s probe (one request listener, no channel)')
})
