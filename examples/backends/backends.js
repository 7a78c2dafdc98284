// Throwaway PostgreSQL and Redis servers on 127.0.0.1, each in a temporary directory, for the examples that wait on a
// database and for the tests that run them. Each is started from Debian's packages (postgresql, redis-server), on a
// free port, and stopped by its PID.
import { spawn, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, chownSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { performance } from 'node:perf_hooks'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * @typedef {object} Backend
 * @property {string} name
 * @property {number} port
 * @property {number} pid
 * @property {string} url a connection URL drivers take (`postgres://…`, `redis://…`)
 * @property {() => Promise<void>} stop
 */

/** Where Debian puts PostgreSQL's server binaries (the newest version installed), or null. */
export function postgresBin () {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const versions = readdirSync(root).filter(v => existsSync(join(root, v, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a))
  return versions.length > 0 ? join(root, versions[0], 'bin') : null
}

/** Redis's server binary, or null. */
export function redisBin () {
  for (const p of ['/usr/bin/redis-server', '/usr/local/bin/redis-server']) if (existsSync(p)) return p
  return null
}

/** What is missing to run each backend, in words (null when it can run). */
export function missing () {
  return {
    postgres: postgresBin() === null ? 'PostgreSQL is not installed (Debian package postgresql)' : null,
    redis: redisBin() === null ? 'Redis is not installed (Debian package redis-server)' : null
  }
}

/** A port nobody listens on right now. */
async function freePort () {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (s.address())
      s.close(() => resolve(port))
    })
  })
}

/**
 * Tries `attempt` until it answers null (done), the server is gone (`failed` says why), or `ms` have passed (then the
 * attempt's last answer is the error).
 * @param {() => Promise<string | null>} attempt
 * @param {() => string | null} failed why the server is gone, if it is
 * @param {number} ms
 * @param {number} pause ms between attempts
 */
async function retry (attempt, failed, ms, pause) {
  const deadline = Date.now() + ms
  for (;;) {
    const gone = failed()
    if (gone !== null) throw new Error(gone)
    const why = await attempt()
    if (why === null) return
    if (Date.now() > deadline) throw new Error(why)
    await new Promise(resolve => setTimeout(resolve, pause))
  }
}

/**
 * Resolves once something accepts connections on the port, or rejects after `ms`.
 * @param {number} port
 * @param {() => string | null} failed why the server is gone, if it is
 * @param {number} ms
 */
function waitForPort (port, failed, ms) {
  return retry(() => new Promise(resolve => {
    const s = connect(port, '127.0.0.1')
    s.once('connect', () => { s.destroy(); resolve(null) })
    s.once('error', () => resolve(`nothing listened on 127.0.0.1:${port} within ${ms} ms`))
  }), failed, ms, 50)
}

/**
 * PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user the Debian package creates.
 * @returns {{ uid: number, gid: number } | null}
 */
function postgresUser () {
  if (process.getuid?.() !== 0) return null
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find(l => l.startsWith('postgres:'))
  if (!line) throw new Error('running as root, and there is no postgres user to run PostgreSQL as')
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

/**
 * @param {import('node:child_process').ChildProcess} child
 * @param {NodeJS.Signals} signal
 * @param {number} ms before SIGKILL
 */
async function stopChild (child, signal, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  try { process.kill(/** @type {number} */ (child.pid), signal) } catch {}
  const timer = setTimeout(() => { try { process.kill(/** @type {number} */ (child.pid), 'SIGKILL') } catch {} }, ms)
  await exited
  clearTimeout(timer)
}

/**
 * Creates the database, retrying while the server still starts: PostgreSQL accepts connections as soon as it listens,
 * and refuses them ("the database system is starting up") until its recovery is done — on a busy machine, seconds.
 * @param {string} bin
 * @param {number} port
 * @param {string} database
 * @param {() => string | null} failed
 */
function createDatabase (bin, port, database, failed) {
  return retry(async () => {
    try {
      execFileSync(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', database], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' })
      return null
    } catch (err) {
      const said = String(/** @type {{ stderr?: string }} */ (err).stderr ?? '').trim()
      return `createdb ${database} failed: ${said || /** @type {Error} */ (err).message}`
    }
  }, failed, 20000, 100)
}

/**
 * A PostgreSQL server of its own: a fresh cluster in a temporary directory, trust authentication, on 127.0.0.1 only.
 * With `statements`, it counts the statements it runs (pg_stat_statements, in the database): what a test holds a
 * tool's count of round trips against.
 * @param {{ database?: string, statements?: boolean }} [opts]
 * @returns {Promise<Backend>}
 */
export async function startPostgres (opts = {}) {
  const bin = postgresBin()
  if (bin === null) throw new Error(/** @type {string} */ (missing().postgres))
  const user = postgresUser()
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-pg-'))
  if (user) chownSync(dir, user.uid, user.gid)
  const data = join(dir, 'data')
  const ids = user ? { uid: user.uid, gid: user.gid } : {}
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'], { stdio: 'ignore', ...ids })
  const port = await freePort()
  let stderr = ''
  const child = spawn(join(bin, 'postgres'), [
    '-D', data, '-p', String(port), '-k', dir,
    '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
    '-c', 'max_connections=200', '-c', 'shared_buffers=32MB',
    ...(opts.statements ? ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all'] : [])
  ], { stdio: ['ignore', 'ignore', 'pipe'], ...ids })
  child.stderr?.setEncoding('utf8').on('data', (c) => { stderr = (stderr + c).slice(-4000) })
  const gone = () => child.exitCode !== null || child.signalCode !== null ? `PostgreSQL exited: ${stderr.trim().split('\n').at(-1) ?? ''}` : null
  const stop = async () => {
    await stopChild(child, 'SIGINT', 5000)
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitForPort(port, gone, 20000)
    const database = opts.database ?? 'hotpath'
    await createDatabase(bin, port, database, gone)
    if (opts.statements) execFileSync(join(bin, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', database, '-qc', 'CREATE EXTENSION pg_stat_statements'], { stdio: 'ignore' })
    return { name: 'postgres', port, pid: /** @type {number} */ (child.pid), url: `postgres://postgres@127.0.0.1:${port}/${database}`, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

/**
 * A Redis server of its own, without persistence, on 127.0.0.1 only.
 * @returns {Promise<Backend>}
 */
export async function startRedis () {
  const bin = redisBin()
  if (bin === null) throw new Error(/** @type {string} */ (missing().redis))
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-redis-'))
  const port = await freePort()
  let output = ''
  const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] })
  for (const s of [child.stdout, child.stderr]) s?.setEncoding('utf8').on('data', (c) => { output = (output + c).slice(-4000) })
  const gone = () => child.exitCode !== null || child.signalCode !== null ? `Redis exited: ${output.trim().split('\n').at(-1) ?? ''}` : null
  const stop = async () => {
    await stopChild(child, 'SIGTERM', 5000)
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitForPort(port, gone, 10000)
    return { name: 'redis', port, pid: /** @type {number} */ (child.pid), url: `redis://127.0.0.1:${port}`, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

/**
 * A TCP proxy that holds every reply for `ms` before passing it on: a server across a network from its clients, on one
 * machine. Requests pass at once, replies in order; each connection has its own queue.
 * @param {number} targetPort
 * @param {number} ms
 * @returns {Promise<{ port: number, close: () => Promise<void> }>}
 */
export async function startDelayProxy (targetPort, ms) {
  /** @type {Set<import('node:net').Socket>} */
  const sockets = new Set()
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1')
    sockets.add(client)
    sockets.add(upstream)
    client.setNoDelay(true)
    upstream.setNoDelay(true)
    /** @type {{ at: number, data: Buffer }[]} */
    const queue = []
    /** @type {NodeJS.Timeout | null} */
    let timer = null
    const flush = () => {
      timer = null
      const now = performance.now()
      while (queue.length > 0 && queue[0].at <= now) client.write(/** @type {{ data: Buffer }} */ (queue.shift()).data)
      if (queue.length > 0) timer = setTimeout(flush, Math.max(0, queue[0].at - now))
    }
    upstream.on('data', (data) => {
      queue.push({ at: performance.now() + ms, data })
      if (timer === null) timer = setTimeout(flush, ms)
    })
    client.on('data', (data) => upstream.write(data))
    const close = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream) }
    client.on('close', close)
    upstream.on('close', close)
    client.on('error', close)
    upstream.on('error', close)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  return {
    port,
    close: () => new Promise(resolve => {
      for (const s of sockets) s.destroy()
      server.close(() => resolve())
    })
  }
}
