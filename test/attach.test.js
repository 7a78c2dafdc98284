// `--attach <pid>`: doctor and flame on a server started with plain node, not by hotpath — the same verdict as a run
// that starts it, and afterwards the server alive, serving, its inspector closed and nothing of the probe left in it;
// and a clear one-line refusal where attaching cannot or must not happen.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmod, mkdtemp, readFile } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath, BIN, ROOT } from './helpers/cli.js'
import { exampleRun } from './helpers/example-runs.js'

/**
 * Starts a command the way a user would, without hotpath, and waits for `ready` in its output.
 * @param {string[]} command
 * @param {RegExp} ready
 * @param {Record<string, string>} [env]
 */
async function start (command, ready, env = {}) {
  const child = spawn(command[0], command.slice(1), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const match = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command.join(' ')} did not start: ${out}`)), 10000)
    const onData = (/** @type {string} */ c) => {
      out += c
      const m = ready.exec(out)
      if (m) { clearTimeout(timer); resolve(m) }
    }
    child.stdout.setEncoding('utf8').on('data', onData)
    child.stderr.setEncoding('utf8').on('data', onData)
    child.once('exit', () => reject(new Error(`${command.join(' ')} exited: ${out}`)))
  })
  return { child, match, output: () => out, stop: () => { if (child.exitCode === null) child.kill('SIGKILL') } }
}

/** @param {number} port @param {string} path */
async function get (port, path) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`)
  return { status: res.status, body: await res.text() }
}

/** @param {number} port */
function portOpen (port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

/** @param {number} pid */
function alive (pid) {
  try { process.kill(pid, 0); return true } catch { return false }
}

/** @param {{ stderr: string }} r the lines hotpath wrote to stderr */
const oneLine = (r) => r.stderr.trim().split('\n')

test('doctor --attach gives the verdict and culprit of doctor -- node on the same server, and leaves it serving with its inspector closed', { timeout: 120000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-attach-'))
  // doctor -- node on the example: the run doctor.test.js checks the verdict of (helpers/example-runs.js)
  const spawned = await exampleRun('event-loop')
  assert.equal(spawned.code, 0, spawned.stderr)
  const server = await start([process.execPath, 'examples/event-loop/server.js'], /127\.0\.0\.1:(\d+)\//, { PORT: '0' })
  try {
    const port = Number(server.match[1])
    const r = await hotpath(['doctor', '-d', '4', '--no-progress', '--save', join(dir, 'attached'), '--json', join(dir, 'attached.json'), '--attach', String(server.child.pid)], { timeout: 90000, alone: true })
    assert.equal(r.code, 0, r.stderr)
    const a = JSON.parse(await readFile(join(dir, 'attached.json'), 'utf8'))
    const s = spawned.d
    assert.equal(s.category, 'event-loop')
    assert.equal(a.category, s.category)
    assert.deepEqual([a.culprits[0].function, a.culprits[0].file, a.culprits[0].line], [s.culprits[0].function, s.culprits[0].file, s.culprits[0].line])
    const run = JSON.parse(await readFile(join(dir, 'attached', 'run.json'), 'utf8'))
    assert.equal(run.attached, server.child.pid)
    assert.equal(run.exit.crashed, false)
    assert.equal(run.listening.port, port, 'the port was found from the process')
    // Alive, serving, and its inspector closed again.
    assert.ok(alive(/** @type {number} */ (server.child.pid)))
    assert.equal((await get(port, '/')).status, 200)
    assert.equal(await portOpen(9229), false, 'the inspector port is closed')
    assert.match(server.output(), /Debugger ending/)
  } finally {
    server.stop()
  }
})

test('after doctor and flame --attach, nothing of the probe is left in the process, and it can be attached to again', { timeout: 120000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-attach-'))
  const server = await start([process.execPath, 'test/fixtures/servers/attach-state.js'], /listening (\d+)/)
  try {
    const port = Number(server.match[1])
    const before = JSON.parse((await get(port, '/__state')).body)
    assert.equal(before.inspector, null)
    // The load is a command that asks the server how it is while the probe is in it.
    const during = join(dir, 'during.json')
    const ask = `${JSON.stringify(process.execPath)} -e 'fetch("http://127.0.0.1:"+process.env.PORT+"/__state").then(r => r.text()).then(t => require("fs").writeFileSync(${JSON.stringify(during)}, t))'`
    const d = await hotpath(['doctor', '--save', join(dir, 'run'), '--on-port', ask, '--attach', String(server.child.pid)], { timeout: 60000 })
    assert.ok(d.code === 0, d.stderr)
    const inside = JSON.parse(await readFile(during, 'utf8'))
    assert.equal(inside.attached, true)
    assert.notDeepEqual(inside.functions, before.functions, 'the probe had its hooks in')
    // The environment is watched until a second into the load (a slow start of the command asking may come after).
    assert.equal(before.functions.env, 'plain')
    assert.ok(inside.listeners.request > before.listeners.request)
    assert.deepEqual(JSON.parse((await get(port, '/__state')).body), before)
    const run = await hotpath(['doctor', '-d', '2', '--no-progress', '--save', join(dir, 'run2'), '--attach', String(server.child.pid)], { timeout: 60000 })
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(JSON.parse((await get(port, '/__state')).body), before)
    const f = await hotpath(['flame', '-d', '2', '--no-progress', '-o', join(dir, 'flame'), '--attach', String(server.child.pid), '--json'], { timeout: 60000 })
    assert.equal(f.code, 0, f.stderr)
    assert.match(JSON.parse(f.stdout).culprits[0].file, /attach-state\.js$/)
    assert.deepEqual(JSON.parse((await get(port, '/__state')).body), before)
    assert.equal((await get(port, '/')).status, 200)
  } finally {
    server.stop()
  }
})

for (const signal of /** @type {const} */ (['SIGINT', 'SIGKILL'])) {
  test(`hotpath stopped by ${signal} during an attached run: the probe leaves, the server serves on`, { timeout: 60000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hotpath-attach-'))
    const server = await start([process.execPath, 'test/fixtures/servers/attach-state.js'], /listening (\d+)/)
    try {
      const port = Number(server.match[1])
      const before = JSON.parse((await get(port, '/__state')).body)
      const run = spawn(process.execPath, [BIN, 'doctor', '-d', '30', '-c', '2', '--no-progress', '--save', join(dir, 'run'), '--attach', String(server.child.pid)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
      let stderr = ''
      run.stderr.setEncoding('utf8').on('data', (c) => { stderr += c })
      const ended = new Promise(resolve => run.once('exit', (code, sig) => resolve({ code, sig })))
      await waitUntil(() => /loading it/.test(stderr), 20000)
      assert.equal(JSON.parse((await get(port, '/__state')).body).attached, true)
      run.kill(signal)
      const { code, sig } = /** @type {{ code: number | null, sig: string | null }} */ (await ended)
      if (signal === 'SIGINT') assert.equal(code, 130, stderr)
      else assert.equal(sig, 'SIGKILL')
      // Killed, hotpath could not say `detach`: its channel closing is what tells the probe to leave.
      let after = null
      await waitUntil(async () => { after = JSON.parse((await get(port, '/__state')).body); return after.attached === false }, 5000)
      assert.deepEqual(after, before)
      assert.ok(alive(/** @type {number} */ (server.child.pid)))
    } finally {
      server.stop()
    }
  })
}

test('a cluster worker can be attached to (its server is found on the heap); its primary, which serves nothing itself, is refused', { timeout: 60000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-attach-'))
  const cluster = await start([process.execPath, 'examples/cluster/server.js'], /worker (\d+) on http:\/\/127\.0\.0\.1:(\d+)\//, { PORT: '0', WORKERS: '1' })
  try {
    const primary = await hotpath(['doctor', '-d', '1', '--no-progress', '--save', join(dir, 'primary'), '--attach', String(cluster.child.pid)])
    assert.equal(primary.code, 2)
    assert.deepEqual(oneLine(primary).slice(-1), [`hotpath doctor: pid ${cluster.child.pid} has no server listening on its main thread (a cluster primary: attach to a worker's pid; a worker thread's server: give --port)`])
    const worker = await hotpath(['doctor', '-d', '2', '--no-progress', '--save', join(dir, 'worker'), '--attach', cluster.match[1]], { timeout: 60000 })
    assert.equal(worker.code, 0, worker.stderr)
    const run = JSON.parse(await readFile(join(dir, 'worker', 'run.json'), 'utf8'))
    assert.equal(run.listening.port, Number(cluster.match[2]))
    assert.equal(run.listening.pid, Number(cluster.match[1]))
    assert.ok(run.load.requests.total > 0)
  } finally {
    cluster.stop()
  }
})

test('a process that exits during an attached run fails the run (exit 4) with its exit code', { timeout: 60000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-attach-'))
  const server = await start([process.execPath, 'test/fixtures/servers/attach-state.js'], /listening (\d+)/)
  try {
    const r = await hotpath(['doctor', '-d', '3', '--no-progress', '--path', '/__exit', '--save', join(dir, 'run'), '--json', '-', '--attach', String(server.child.pid)], { timeout: 60000 })
    assert.equal(r.code, 4, r.stderr)
    const d = JSON.parse(r.stdout)
    assert.equal(d.category, 'target-failed')
    assert.match(JSON.stringify(d), /exited with code 3/)
  } finally {
    server.stop()
  }
})

test('--attach refuses, in one line and with exit 2, what it cannot attach to, and leaves it running', { timeout: 60000 }, async () => {
  const gone = spawn(process.execPath, ['-e', ''])
  await new Promise(resolve => gone.once('exit', resolve))
  const none = await hotpath(['doctor', '--attach', String(gone.pid)], { refused: true })
  assert.equal(none.code, 2)
  assert.deepEqual(oneLine(none), [`hotpath doctor: no process with pid ${gone.pid}`])

  const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' })
  await new Promise(resolve => sleeper.once('spawn', resolve))
  try {
    const r = await hotpath(['doctor', '--attach', String(sleeper.pid)], { refused: true })
    assert.equal(r.code, 2)
    assert.match(oneLine(r).join('\n'), /^hotpath doctor: pid \d+ is not a Node\.js process \(it runs .*sleep\)$/)
    await new Promise(resolve => setTimeout(resolve, 200))
    assert.equal(sleeper.exitCode, null, 'never signalled')
    assert.equal(sleeper.signalCode, null, 'never signalled')
  } finally {
    sleeper.kill('SIGKILL')
  }

  const both = await hotpath(['flame', '--attach', '1', '--', 'node', 'x.js'], { refused: true })
  assert.equal(both.code, 2)
  assert.deepEqual(oneLine(both), ['hotpath flame: give either --attach <pid> or -- <command>, not both'])
  const bad = await hotpath(['doctor', '--attach', 'abc'], { refused: true })
  assert.equal(bad.code, 2)
  assert.equal(oneLine(bad).length, 1)
})

test('--attach refuses a process whose inspector is open already or would open on another address, and leaves it as it was', { timeout: 60000 }, async () => {
  const opened = await start([process.execPath, 'test/fixtures/servers/attach-state.js'], /listening (\d+)/)
  try {
    process.kill(/** @type {number} */ (opened.child.pid), 'SIGUSR1')
    await waitUntil(() => /Debugger listening/.test(opened.output()))
    const r = await hotpath(['doctor', '-d', '1', '--attach', String(opened.child.pid)], { refused: true })
    assert.equal(r.code, 2)
    assert.deepEqual(oneLine(r), [`hotpath doctor: pid ${opened.child.pid} has its inspector open already (port 9229): a debugger may be using it, and hotpath does not share it`])
    const state = JSON.parse((await get(Number(opened.match[1]), '/__state')).body)
    assert.equal(state.attached, false)
    assert.match(state.inspector, /^ws:\/\/127\.0\.0\.1:9229\//, 'still open: it was not hotpath\'s to close')
  } finally {
    opened.stop()
  }
  const exposed = await start([process.execPath, '--inspect-port=0.0.0.0:9339', 'test/fixtures/servers/attach-state.js'], /listening (\d+)/)
  try {
    const r = await hotpath(['doctor', '-d', '1', '--attach', String(exposed.child.pid)], { refused: true })
    assert.equal(r.code, 2)
    assert.deepEqual(oneLine(r), [`hotpath doctor: pid ${exposed.child.pid} would open its inspector on 0.0.0.0 (its --inspect-port names that host), not on 127.0.0.1: hotpath does not open it`])
    assert.equal(JSON.parse((await get(Number(exposed.match[1]), '/__state')).body).inspector, null)
  } finally {
    exposed.stop()
  }
  const flagged = await start([process.execPath, '--inspect=127.0.0.1:0', 'test/fixtures/servers/attach-state.js'], /listening (\d+)/)
  try {
    const r = await hotpath(['flame', '-d', '1', '--attach', String(flagged.child.pid)], { refused: true })
    assert.equal(r.code, 2)
    assert.match(oneLine(r).join('\n'), /^hotpath flame: pid \d+ was started with --inspect: its inspector is open already/)
  } finally {
    flagged.stop()
  }
})

test('--attach refuses another user\'s process (run as nobody against root\'s)', { skip: process.getuid?.() !== 0 && 'needs root to run a second user' }, async () => {
  const server = await start([process.execPath, 'test/fixtures/servers/attach-state.js'], /listening (\d+)/)
  const cwd = await mkdtemp(join(tmpdir(), 'hotpath-attach-nobody-'))
  await chmod(cwd, 0o777)
  try {
    /** @type {{ code: number | null, stderr: string }} */
    const r = await new Promise((resolve) => {
      const child = spawn(process.execPath, [BIN, 'doctor', '--attach', String(server.child.pid)], { cwd, uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'pipe'] })
      let stderr = ''
      child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c })
      child.on('close', (code) => resolve({ code, stderr }))
    })
    assert.equal(r.code, 2)
    assert.deepEqual(oneLine(r), [`hotpath doctor: pid ${server.child.pid} belongs to another user (uid 0): attach as that user or as root`])
    assert.ok(alive(/** @type {number} */ (server.child.pid)))
  } finally {
    server.stop()
  }
})

/**
 * @param {() => boolean | Promise<boolean>} check
 * @param {number} [timeout]
 */
async function waitUntil (check, timeout = 5000) {
  const deadline = Date.now() + timeout
  while (!await check()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 25))
  }
}
