// Does hotpath doctor measure a waiting server, or itself? On servers that wait on a real PostgreSQL or Redis at a
// few dozen requests a second, the CPU per request doctor reports is set beside the CPU per request the same server's
// process used without hotpath, read from /proc over the same load (a fixed arrival rate, so both serve the same
// requests). Rounds alternate the two, each with a fresh server; the medians and their ratio are printed. Goal: 1.25
// at most.
//
//   npm run bench:waiting [-- --rounds 3 --duration 10 --servers conduit,sessions]
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startDelayProxy, startPostgres, startRedis, missing } from '../examples/backends/backends.js'
import { benchArgs } from './lib/measure.js'
import { percentile } from '../src/stats.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const HOTPATH = join(ROOT, 'bin/hotpath.js')
const CLK_TCK = 100

/**
 * @typedef {object} WaitingServer
 * @property {string} file relative to the repository
 * @property {string} path
 * @property {number} rate requests a second
 * @property {string[]} [headers]
 * @property {string} what
 */

const { signedCookie } = await import('../test/fixtures/apps/sessions/cookie.js').then(m => m.default ?? m)

/** @type {Record<string, WaitingServer>} */
const SERVERS = {
  conduit: { file: 'test/fixtures/apps/conduit/server.js', path: '/api/articles', rate: 10, what: 'Express + Sequelize: a COUNT, a sorted page and an N+1 of 20 (PostgreSQL)' },
  sessions: { file: 'test/fixtures/apps/sessions/server.js', path: '/', rate: 10, headers: [`Cookie: ${signedCookie()}`], what: 'express-session in PostgreSQL (connect-session-sequelize), no index' },
  leaderboard: { file: 'test/fixtures/apps/leaderboard/server.js', path: '/', rate: 10, what: 'ioredis: six SORTs one after another' },
  'sql-sessions': { file: 'examples/sql-sessions/server.js', path: '/', rate: 40, what: 'pg: one session query without an index' },
  'small-pool': { file: 'examples/small-pool/server.js', path: '/', rate: 60, what: 'pg: a pool of 2 for a 10 ms query' }
}

const args = benchArgs({ rounds: '3', duration: '10', servers: Object.keys(SERVERS).join(',') })

/**
 * The server alone: CPU its process used over the load, per request served.
 * @param {WaitingServer} s
 * @param {Record<string, string>} env
 */
async function plain (s, env) {
  const child = spawn(process.execPath, [join(ROOT, s.file)], { env: { ...process.env, ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const port = await new Promise((resolve, reject) => {
      let out = ''
      child.stdout.setEncoding('utf8').on('data', (c) => {
        out += c
        const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
        if (m) resolve(Number(m[1]))
      })
      child.once('exit', (code) => reject(new Error(`${s.file} exited with code ${code}`)))
    })
    const before = cpuOf(/** @type {number} */ (child.pid))
    const r = await run([HOTPATH, 'load', '-R', String(s.rate), '-d', args.duration, '--json', ...headerArgs(s), `http://127.0.0.1:${port}${s.path}`])
    const after = cpuOf(/** @type {number} */ (child.pid))
    const load = JSON.parse(r)
    return ((after - before) * 1000) / load.requests.total
  } finally {
    child.kill()
  }
}

/**
 * The same server under hotpath doctor: the CPU per request it reports.
 * @param {WaitingServer} s
 * @param {Record<string, string>} env
 */
async function doctor (s, env) {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-bench-waiting-'))
  try {
    const json = join(dir, 'd.json')
    await run([HOTPATH, 'doctor', '-R', String(s.rate), '-d', args.duration, '--path', s.path, ...headerArgs(s), '--no-progress', '--no-experiments', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, join(ROOT, s.file)], { ...env, PORT: '0' })
    const d = JSON.parse(readFileSync(json, 'utf8'))
    const e = d.evidence.find((/** @type {any} */ x) => x.signal === 'cpu-per-request')
    return { cpu: Number(e?.value), category: String(d.category) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** @param {WaitingServer} s */
const headerArgs = (s) => (s.headers ?? []).flatMap(h => ['-H', h])

/** @param {number} pid seconds of CPU the process used so far */
function cpuOf (pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK
}

/**
 * @param {string[]} argv node arguments
 * @param {Record<string, string>} [env]
 * @returns {Promise<string>} stdout
 */
function run (argv, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (c) => { out += c })
    child.on('error', reject)
    child.on('close', () => resolve(out))
  })
}

const gone = missing()
if (gone.postgres || gone.redis) {
  console.log(`bench:waiting needs PostgreSQL and Redis: ${gone.postgres ?? gone.redis}`)
  process.exit(0)
}
const pg = await startPostgres()
const redis = await startRedis()
const hop = await startDelayProxy(redis.port, 1)
const env = { DATABASE_URL: pg.url, REDIS_URL: `redis://127.0.0.1:${hop.port}` }
console.log(`CPU per request: hotpath doctor's figure over the process's own without hotpath (/proc), Node ${process.version}, ${args.rounds} rounds of ${args.duration} s at a fixed rate\n`)
try {
  for (const name of args.servers.split(',')) {
    const s = SERVERS[name]
    if (!s) throw new Error(`no server '${name}' (${Object.keys(SERVERS).join(', ')})`)
    /** @type {number[]} */
    const alone = []
    /** @type {number[]} */
    const measured = []
    /** @type {string[]} */
    const categories = []
    // The first start seeds the database; it is not measured.
    await plain(s, env)
    for (let i = 0; i < Number(args.rounds); i++) {
      alone.push(await plain(s, env))
      const d = await doctor(s, env)
      measured.push(d.cpu)
      categories.push(d.category)
    }
    const a = percentile(alone, 50)
    const m = percentile(measured, 50)
    console.log(`${name.padEnd(13)} ${String(s.rate).padStart(3)} req/s  alone ${a.toFixed(2)} ms  doctor ${m.toFixed(2)} ms  ratio ${(m / a).toFixed(2)}  verdicts ${categories.join(' ')}  — ${s.what}`)
  }
} finally {
  await hop.close()
  await Promise.all([pg.stop(), redis.stop()])
}
