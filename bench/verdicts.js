// Is hotpath doctor's verdict right, and stable from run to run? Runs it N times on every example server and on the
// applications of test/fixtures/apps (real packages, a real PostgreSQL and Redis), each with one expected category,
// and counts right/total — on a quiet machine, then with two processes burning a core each beside it: a verdict must
// not flip because the machine is busy.
//
//   npm run bench:verdicts [-- --runs 3 --duration 5 --targets hello,conduit --busy both|quiet|busy]
import { fork, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { missing, startDelayProxy, startPostgres, startRedis } from '../examples/backends/backends.js'
import { benchArgs } from './lib/measure.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const require = createRequire(import.meta.url)
const { signedCookie } = require('../test/fixtures/apps/sessions/cookie.js')

/**
 * @typedef {object} Target
 * @property {string} file relative to the repository
 * @property {string} expected the category
 * @property {('postgres' | 'redis')[]} [needs]
 * @property {string} [helper] a process of the app's own to start first (an upstream), which says its port over IPC
 * @property {string} [helperEnv] the variable the app reads that port from
 * @property {string} [helperUrl] with the port, as a URL: `http://127.0.0.1:${port}`
 * @property {string[]} [args] doctor's load flags
 * @property {number} [duration] seconds, when the default is too short for it
 */

const APPS = 'test/fixtures/apps'
/** @type {Record<string, Target>} */
const TARGETS = {
  hello: { file: 'examples/hello/server.js', expected: 'healthy' },
  'event-loop': { file: 'examples/event-loop/server.js', expected: 'event-loop' },
  io: { file: 'examples/io/server.js', expected: 'io' },
  gc: { file: 'examples/gc/server.js', expected: 'gc' },
  'memory-leak': { file: 'examples/memory-leak/server.js', expected: 'memory-leak' },
  'listener-leak': { file: 'examples/listener-leak/server.js', expected: 'event-loop' },
  cluster: { file: 'examples/cluster/server.js', expected: 'healthy' },
  'worker-threads': { file: 'examples/worker-threads/server.js', expected: 'healthy' },
  'sql-sessions': { file: 'examples/sql-sessions/server.js', expected: 'io', needs: ['postgres'] },
  'small-pool': { file: 'examples/small-pool/server.js', expected: 'io', needs: ['postgres'], args: ['-c', '12'] },
  'cache-n-plus-one': { file: 'examples/cache-n-plus-one/server.js', expected: 'io', needs: ['redis'] },
  conduit: { file: `${APPS}/conduit/server.js`, expected: 'io', needs: ['postgres'], args: ['--path', '/api/articles', '-c', '4'], duration: 6 },
  sessions: { file: `${APPS}/sessions/server.js`, expected: 'io', needs: ['postgres'], args: ['-H', `Cookie: ${signedCookie()}`, '-c', '4'], duration: 6 },
  leaderboard: { file: `${APPS}/leaderboard/server.js`, expected: 'io', needs: ['redis'], duration: 6 },
  'render-queue': { file: `${APPS}/render-queue/server.js`, expected: 'io', helper: `${APPS}/render-queue/upstream.js`, helperEnv: 'UPSTREAM_URL', helperUrl: 'http://127.0.0.1:', duration: 6 },
  'binary-kv': { file: `${APPS}/binary-kv/server.js`, expected: 'io', helper: `${APPS}/binary-kv/store.js`, helperEnv: 'STORE_PORT', duration: 6 }
}
const args = benchArgs({ runs: '3', duration: '5', targets: Object.keys(TARGETS).join(','), busy: 'both' })

/**
 * @param {Target} target
 * @param {Record<string, string>} env
 * @returns {Promise<string>} the category; a run with an unexpected one is kept for a look, and its path printed
 */
async function diagnose (target, env) {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-verdicts-'))
  const json = join(dir, 'd.json')
  /** @type {{ kill: () => void } | null} */
  let helper = null
  const extra = { ...env }
  if (target.helper) {
    const child = fork(join(ROOT, target.helper), { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
    const port = await new Promise((resolve) => child.once('message', (/** @type {any} */ m) => resolve(m.port)))
    helper = child
    extra[/** @type {string} */ (target.helperEnv)] = `${target.helperUrl ?? ''}${port}`
  }
  const duration = String(Math.max(Number(args.duration), target.duration ?? 0))
  const argv = [join(ROOT, 'bin/hotpath.js'), 'doctor', '-d', duration, ...(target.args ?? []), '--no-progress', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, join(ROOT, target.file)]
  try {
    return await new Promise((resolve) => {
      const child = spawn(process.execPath, argv, { stdio: 'ignore', env: { ...process.env, PORT: '0', ...extra } })
      child.on('exit', () => {
        let category = 'failed'
        try {
          category = JSON.parse(readFileSync(json, 'utf8')).category
        } catch {}
        if (category === target.expected) rmSync(dir, { recursive: true, force: true })
        else console.log(`  (${target.file}: ${category}; run kept in ${join(dir, 'run')})`)
        resolve(category)
      })
    })
  } finally {
    helper?.kill()
  }
}

/** Two processes that each keep a core busy, until stopped by PID. */
function burnCores () {
  const burners = [0, 1].map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))
  return () => { for (const b of burners) b.kill('SIGKILL') }
}

const names = args.targets.split(',')
for (const n of names) if (!TARGETS[n]) throw new Error(`no target '${n}' (${Object.keys(TARGETS).join(', ')})`)
const needs = new Set(names.flatMap(n => TARGETS[n].needs ?? []))
const gone = missing()
/** @type {(() => Promise<void>)[]} */
const stops = []
/** @type {Record<string, string>} */
const env = {}
if (needs.has('postgres') && gone.postgres === null) {
  const pg = await startPostgres()
  stops.push(() => pg.stop())
  env.DATABASE_URL = pg.url
}
if (needs.has('redis') && gone.redis === null) {
  const redis = await startRedis()
  // A cache one network hop away, as the examples expect it.
  const hop = await startDelayProxy(redis.port, 1)
  stops.push(async () => { await hop.close(); await redis.stop() })
  env.REDIS_URL = `redis://127.0.0.1:${hop.port}`
}
const conditions = args.busy === 'both' ? ['quiet', 'busy'] : [args.busy]
console.log(`hotpath doctor verdicts — Node ${process.version}, ${args.runs} runs of ${args.duration} s (or the target's own) per target\n`)
try {
  for (const condition of conditions) {
    console.log(condition === 'busy' ? '\nwith two processes burning a core each:' : 'on the machine as it is:')
    const stopBurning = condition === 'busy' ? burnCores() : () => {}
    let right = 0
    let total = 0
    try {
      for (const name of names) {
        const target = TARGETS[name]
        const skip = (target.needs ?? []).map(n => gone[n]).find(x => x !== null)
        if (skip) {
          console.log(`  ${name.padEnd(17)} skipped: ${skip}`)
          continue
        }
        /** @type {Record<string, number>} */
        const counts = {}
        for (let i = 0; i < Number(args.runs); i++) {
          const category = await diagnose(target, env)
          counts[category] = (counts[category] ?? 0) + 1
        }
        const ok = counts[target.expected] ?? 0
        right += ok
        total += Number(args.runs)
        console.log(`  ${name.padEnd(17)} expected ${target.expected.padEnd(12)} ${ok}/${args.runs}   got ${Object.entries(counts).map(([c, k]) => `${c} ×${k}`).join(', ')}`)
      }
    } finally {
      stopBurning()
    }
    console.log(`  right: ${right}/${total}`)
  }
} finally {
  for (const stop of stops) await stop()
}
