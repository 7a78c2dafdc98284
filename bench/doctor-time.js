// How long does hotpath doctor take, beside the load it was asked for? Runs it on every example server and prints,
// for each, the load's length, when the verdict's first line was printed and when doctor exited, each as a ratio to
// the load's length; the peer is clinic doctor (with autocannon as its load, the same length), timed the same way on
// the examples --clinic names. People run doctor in a loop of fix and re-measure: the verdict should come within the
// load plus seconds (goal: wall time ≤ 1.5 × the load for healthy, event-loop and io servers).
//
//   npm run bench:doctor-time [-- --duration 10 --runs 1 --examples hello,io --clinic hello]
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs } from './lib/measure.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** The examples that need no database (the others wait on PostgreSQL or Redis: run them with their environment). */
const EXAMPLES = ['hello', 'event-loop', 'io', 'gc', 'memory-leak', 'listener-leak', 'fastify-leak', 'cluster', 'worker-threads']
const args = benchArgs({ duration: '10', runs: '1', examples: EXAMPLES.join(','), clinic: 'hello', verbose: 'false' })
const CLINIC = join(ROOT, 'node_modules/.bin/clinic')
const AUTOCANNON = join(ROOT, 'node_modules/.bin/autocannon')

/**
 * Runs a command and times it: when a line of stdout first matched `first`, and when it exited.
 * @param {string[]} command
 * @param {RegExp} first
 * @param {Record<string, string>} [env]
 * @returns {Promise<{ firstMs: number | null, wallMs: number, code: number | null, stdout: string, stderr: string[] }>}
 *   stderr: its lines, each with when it came (doctor's progress says where the time goes)
 */
function timed (command, first, env = {}) {
  return new Promise((resolve) => {
    const began = performance.now()
    /** @type {number | null} */
    let firstMs = null
    let stdout = ''
    /** @type {string[]} */
    const stderr = []
    const child = spawn(command[0], command.slice(1), { cwd: ROOT, env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.setEncoding('utf8').on('data', (c) => {
      stdout += c
      if (firstMs === null && first.test(stdout)) firstMs = performance.now() - began
    })
    child.stderr.setEncoding('utf8').on('data', (c) => {
      const at = ((performance.now() - began) / 1000).toFixed(1).padStart(6)
      for (const line of c.split('\n').filter(Boolean)) stderr.push(`${at} s  ${line}`)
    })
    child.on('close', (code) => resolve({ firstMs, wallMs: performance.now() - began, code, stdout, stderr }))
  })
}

/**
 * @param {string} example
 */
async function doctor (example) {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-doctor-time-'))
  const json = join(dir, 'd.json')
  const r = await timed([process.execPath, join(ROOT, 'bin/hotpath.js'), 'doctor', '-d', args.duration, '--no-progress', '--save', join(dir, 'run'), '--json', json,
    '--', process.execPath, join(ROOT, 'examples', example, 'server.js')], /^hotpath doctor: .*\n/m)
  let category = 'no JSON'
  try {
    category = JSON.parse(readFileSync(json, 'utf8')).category
  } catch {}
  rmSync(dir, { recursive: true, force: true })
  return { ...r, category }
}

/**
 * clinic doctor with autocannon as its load, the same length; its report is written before it exits.
 * @param {string} example
 */
async function clinic (example) {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-doctor-time-clinic-'))
  const r = await timed([CLINIC, 'doctor', '--open=false', '--dest', dir, '--on-port', `${AUTOCANNON} -d ${args.duration} -c 10 http://127.0.0.1:$PORT/ > /dev/null 2>&1`,
    '--', process.execPath, join(ROOT, 'examples', example, 'server.js')], /^$/, { NO_INSIGHT: '1' })
  rmSync(dir, { recursive: true, force: true })
  return r
}

const seconds = Number(args.duration)
const ratio = (/** @type {number | null} */ ms) => ms === null ? '    –' : (ms / 1000 / seconds).toFixed(2).padStart(5)
const s = (/** @type {number | null} */ ms) => ms === null ? '     –' : `${(ms / 1000).toFixed(1)} s`.padStart(7)
console.log(`hotpath doctor's time beside its load — Node ${process.version}, ${args.runs} run(s) of -d ${seconds} per example, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`)
console.log(`  ${'example'.padEnd(15)} ${'verdict'.padEnd(12)} ${'verdict at'.padStart(10)} ${'÷ load'.padStart(7)} ${'exit at'.padStart(8)} ${'÷ load'.padStart(7)}`)
const clinicNames = new Set(args.clinic.split(',').filter(Boolean))
for (const example of args.examples.split(',')) {
  for (let i = 0; i < Number(args.runs); i++) {
    const r = await doctor(example)
    console.log(`  ${example.padEnd(15)} ${r.category.padEnd(12)} ${s(r.firstMs).padStart(10)} ${ratio(r.firstMs).padStart(7)} ${s(r.wallMs).padStart(8)} ${ratio(r.wallMs).padStart(7)}${r.code === 0 ? '' : `  (exit ${r.code})`}`)
    if (args.verbose === 'true') for (const line of r.stderr) console.log(`      ${line}`)
    if (clinicNames.has(example)) {
      const c = await clinic(example)
      console.log(`  ${'  clinic doctor'.padEnd(15)} ${''.padEnd(12)} ${''.padStart(10)} ${''.padStart(7)} ${s(c.wallMs).padStart(8)} ${ratio(c.wallMs).padStart(7)}${c.code === 0 ? '' : `  (exit ${c.code})`}`)
    }
  }
}
console.log(`\nload average at the end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
