// What instrumentation costs the target: requests/s a saturated server serves with no instrumentation, with hotpath's
// probe and profiler, and with the tools hotpath replaces — measured in one run, interleaved.
//
//   npm run bench:overhead [-- --duration 8 --rounds 8 --quick]
//
// The server is pinned to CPU 1 and the load (hotpath load -c 50) to CPU 0. Every instrumented variant is started by
// its tool with the load as its --on-port command, so each tool sees exactly the load window.
//
// Two things would otherwise be measured instead of the instrumentation:
// - Waking the load generator. A generator that sleeps between responses has to be woken by the server's writes, and
//   on a virtual machine that wake-up is paid by the server's CPU (perf: the extra time is in tcp_sendmsg → wake-up of
//   the generator). A slightly slower server lets the generator fall asleep more often, which makes it slower still:
//   the probe's ~2% grew to ~9%, and clinic doctor's to ~7%. The load therefore runs with --busy-poll, as a generator
//   on another machine would cost the server nothing to wake.
// - Start-up. The load's first 2 s are warm-up (JIT), not counted.
// Each round measures every variant once, in rotated order (reversed every other round); a variant's figure is the
// median, over rounds, of its requests/s divided by the uninstrumented server's in the same round, which cancels the
// machine's slow drifts. Every run is a fresh server, and a fresh server's speed varies by about ±2% with what its JIT
// happened to do (under callgrind, one hello server ran 68.8k instructions a request and the next, started the same
// way, 75.3k): hence eight rounds.
// Goals: hotpath's probe (sampling only) ≥ 0.97 of uninstrumented (issue 3); profiling (hotpath flame) ≥ 0.92 (issue 4).
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs, median } from './lib/measure.js'
import { startLineStore } from './lib/line-protocol.js'

const args = benchArgs({ duration: '8', rounds: '8', servers: 'hello,json,waits', variants: 'off,hotpath-probe,hotpath-flame,hotpath-doctor,clinic-doctor,clinic-flame,0x' })
const quick = args.quick === 'true'
const duration = quick ? 3 : Number(args.duration)
const rounds = quick ? 1 : Number(args.rounds)
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const HOTPATH = join(ROOT, 'bin/hotpath.js')
const CLINIC = join(ROOT, 'node_modules/.bin/clinic')
const ZEROX = join(ROOT, 'node_modules/.bin/0x')

/**
 * @typedef {{ name: string, label: string, wrap: (server: string[], onPort: string, dir: string) => string[] }} Variant
 */

/** @type {Variant[]} */
const ALL = [
  { name: 'off', label: 'none', wrap: (server) => server },
  { name: 'hotpath-probe', label: 'hotpath probe', wrap: (server, onPort, dir) => [process.execPath, HOTPATH, 'doctor', '--no-profile', '--heap-interval', '0', '--save', dir, '--on-port', onPort, '--', ...server] },
  { name: 'hotpath-flame', label: 'hotpath flame', wrap: (server, onPort, dir) => [process.execPath, HOTPATH, 'flame', '-o', join(dir, 'flame'), '--on-port', onPort, '--', ...server] },
  { name: 'hotpath-doctor', label: 'hotpath doctor', wrap: (server, onPort, dir) => [process.execPath, HOTPATH, 'doctor', '--save', dir, '--on-port', onPort, '--', ...server] },
  { name: 'clinic-doctor', label: 'clinic doctor', wrap: (server, onPort, dir) => [CLINIC, 'doctor', '--collect-only', '--open=false', '--dest', dir, '--on-port', onPort, '--', ...server] },
  { name: 'clinic-flame', label: 'clinic flame', wrap: (server, onPort, dir) => [CLINIC, 'flame', '--collect-only', '--open=false', '--dest', dir, '--on-port', onPort, '--', ...server] },
  { name: '0x', label: '0x', wrap: (server, onPort, dir) => [ZEROX, '--collect-only', '--output-dir', join(dir, '0x'), '--on-port', onPort, '--', ...server] }
]
const VARIANTS = ALL.filter(v => args.variants.split(',').includes(v.name))

/**
 * Runs one variant and returns the requests/s the load got.
 * @param {Variant} variant
 * @param {string} serverFile
 */
async function measure (variant, serverFile) {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-overhead-'))
  const out = join(dir, 'load.json')
  const load = (/** @type {string} */ url) => ['taskset', '-c', '0', process.execPath, HOTPATH, 'load', '--busy-poll', '-c', '50', '--warmup', '2', '-d', String(duration), '--no-progress', '-o', out, url]
  const server = [process.execPath, serverFile]
  try {
    if (variant.name === 'off') {
      const child = spawn('taskset', ['-c', '1', ...server], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
      const port = await new Promise((resolve, reject) => {
        child.once('message', (/** @type {any} */ m) => resolve(m.port))
        child.once('exit', (code) => reject(new Error(`server exited ${code}`)))
      })
      await run(load(`http://127.0.0.1:${port}/`))
      child.kill('SIGTERM')
    } else {
      const onPort = load('http://127.0.0.1:$PORT/').map(a => a.includes(' ') ? `'${a}'` : a).join(' ')
      await run(['taskset', '-c', '1', ...variant.wrap(server, onPort, dir)], { NO_INSIGHT: '1' })
    }
    return JSON.parse(readFileSync(out, 'utf8')).requests.mean
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * @param {string[]} command
 * @param {Record<string, string>} [env]
 * @returns {Promise<void>}
 */
function run (command, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c })
    child.on('error', reject)
    child.on('exit', (code) => code === 0 ? resolve() : reject(new Error(`${command.join(' ')} exited ${code}\n${stderr.slice(-2000)}`)))
  })
}

// The waits server reads from a store this process answers at once: saturated, it spends its CPU on the round trips
// that hotpath's socket watcher and wait tracer watch.
const store = args.servers.split(',').includes('waits') ? await startLineStore(0) : null
if (store) process.env.LINE_PORT = String(store.port)

console.log(`Instrumentation overhead — Node ${process.version}, -c 50 --busy-poll, 2 s warm-up + ${duration} s × ${rounds} rounds;\nrequests/s relative to none in the same round (median; range)\n`)
for (const name of args.servers.split(',')) {
  const serverFile = join(ROOT, 'bench/servers', `${name}.js`)
  /** @type {Record<string, number[]>} requests/s of each variant, by round (NaN: failed) */
  const rps = Object.fromEntries(VARIANTS.map(v => [v.name, []]))
  for (let round = 0; round < rounds; round++) {
    // Rotated, and reversed every other round: what ran just before a variant changes its figure (a full run's 'none',
    // always after 0x in a plain rotation, read 4–11% faster than a three-variant run's), so no variant always follows
    // the same one.
    const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length])
    if (round % 2 === 1) order.reverse()
    for (const variant of order) {
      try {
        rps[variant.name][round] = await measure(variant, serverFile)
      } catch (err) {
        rps[variant.name][round] = NaN
        console.log(`  ${variant.label} failed: ${/** @type {Error} */ (err).message.split('\n')[0]}`)
      }
    }
  }
  console.log(`${name} server: ${Math.round(median(rps.off)).toLocaleString('en-US')} req/s uninstrumented`)
  for (const v of VARIANTS.slice(1)) {
    const ratios = rps[v.name].map((r, i) => r / rps.off[i]).filter(Number.isFinite)
    if (ratios.length === 0) {
      console.log(`  ${v.label.padEnd(16)} –`)
      continue
    }
    const range = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`
    console.log(`  ${v.label.padEnd(16)} ${median(ratios).toFixed(3)}×  (${range}; ${Math.round(median(rps[v.name].filter(Number.isFinite))).toLocaleString('en-US')} req/s)`)
  }
  console.log('')
}
await store?.close()
console.log('Goals: hotpath probe ≥ 0.970 (issue 3), hotpath flame ≥ 0.920 (issue 4), hotpath doctor ≥ 0.950 (issue 20).')
