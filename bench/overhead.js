// What instrumentation costs the target: requests/s a server serves with no instrumentation, with hotpath's probe,
// and with the tools hotpath replaces — measured in one run, interleaved, medians of the rounds.
//
//   npm run bench:overhead [-- --duration 10 --rounds 3 --quick]
//
// The server is pinned to CPU 1 and the load (hotpath load, -c 50) to CPU 0. Every instrumented variant is started
// by its tool with the load as its --on-port command, so each tool sees exactly the load window.
// Goals: hotpath's probe (sampling only) ≥ 0.97 of uninstrumented; with CPU profiling ≥ 0.92 (issues 3 and 4).
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs, median } from './lib/measure.js'

const args = benchArgs({ duration: '10', rounds: '3', servers: 'hello,json', variants: 'off,hotpath-probe,hotpath-profiling,hotpath-doctor,clinic-doctor,clinic-flame,0x' })
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
  { name: 'hotpath-profiling', label: 'hotpath +CPU profile', wrap: (server, onPort, dir) => [process.execPath, HOTPATH, 'doctor', '--heap-interval', '0', '--save', dir, '--on-port', onPort, '--', ...server] },
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
  const load = (/** @type {string} */ url) => ['taskset', '-c', '0', process.execPath, HOTPATH, 'load', '-c', '50', '-d', String(duration), '--no-progress', '-o', out, url]
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

console.log(`Instrumentation overhead — Node ${process.version}, -c 50, ${duration} s × ${rounds} rounds; requests/s relative to none\n`)
for (const name of args.servers.split(',')) {
  const serverFile = join(ROOT, 'bench/servers', `${name}.js`)
  /** @type {Record<string, number[]>} */
  const rps = Object.fromEntries(VARIANTS.map(v => [v.name, []]))
  for (let round = 0; round < rounds; round++) {
    for (const variant of VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length])) {
      try {
        rps[variant.name].push(await measure(variant, serverFile))
      } catch (err) {
        console.log(`  ${variant.label} failed: ${/** @type {Error} */ (err).message.split('\n')[0]}`)
      }
    }
  }
  const base = median(rps.off)
  console.log(`${name} server: ${Math.round(base).toLocaleString('en-US')} req/s uninstrumented`)
  for (const v of VARIANTS.slice(1)) {
    const m = median(rps[v.name])
    console.log(`  ${v.label.padEnd(22)} ${Number.isFinite(m) ? (m / base).toFixed(3) : '–'}×  (${Number.isFinite(m) ? Math.round(m).toLocaleString('en-US') : '–'} req/s)`)
  }
  console.log('')
}
console.log('Goals: hotpath probe ≥ 0.970 (issue 3), hotpath +CPU profile ≥ 0.920 (issue 4).')
