// One doctor run per example, shared by the test files that read it: doctor.test.js and doctor-waits.test.js check its
// verdict and culprits, report.test.js its HTML report, doctor-culprits.test.js what it blames, report-compare.test.js
// and attach.test.js compare it with other runs. node --test runs each file in a process of its own, so a run is kept
// on disk for the rest of that node --test invocation (helpers/machine.js's folder), with a lock, so that two files
// running at once record it once; it is recorded with the machine to itself. A file run on its own (node
// test/doctor.test.js) records its runs afresh.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath } from './cli.js'
import { alive, readIfThere, sessionDir } from './machine.js'

/**
 * The flags each example is run with, whichever file asks first: the longer load and the snapshots' time that the
 * assertions of any of them need. A leak's heap snapshots get the time a loaded machine needs: what they find is
 * tested, not how long they take. The gc example's settings are measured in doctor-experiments.test.js.
 * @type {Record<string, string[]>}
 */
const FLAGS = {
  gc: ['--no-experiments'],
  // A leak's verdict asks that the load leave 5 MiB alive: a count of requests leaves it however slowly a loaded machine
  // serves them (at 900 requests/s, 4 s of the example's 650 B a request left 2.4 MB).
  'memory-leak': ['-a', '16000', '--snapshot-time', '180s'],
  'fastify-leak': ['-a', '12000', '--snapshot-time', '180s'],
  'worker-threads': ['-d', '5'],
  // Its overload protection answers 503 once the loop is 98% busy, as it should under a closed-loop load on a shared
  // machine, and mostly 503s are a failed load: a fixed rate well inside what it serves measures the page instead.
  production: ['-d', '4', '-R', '400'],
  // More requests than its pool of two has connections, by far: the queue is what doctor-waits.test.js checks.
  'small-pool': ['-d', '4', '-c', '12']
}

/**
 * @typedef {object} ExampleRun
 * @property {any} d the diagnosis, as --json wrote it
 * @property {string} out doctor's stdout
 * @property {string} stderr
 * @property {number | null} code
 * @property {string} save the run directory
 * @property {string} json the diagnosis's file
 * @property {string} html the report
 * @property {Record<string, string>} env what the target was given (a database's URL: the backends of the file that
 *   recorded the run)
 */

/**
 * doctor on examples/<name>/server.js, once per test run.
 * @param {string} example
 * @param {Record<string, string>} [env] for the target: an example that waits on a database gets helpers/backends.js's,
 *   and the run is shared with the files that ask with the same variables (each file starts backends of its own, alike
 *   but for their ports)
 * @returns {Promise<ExampleRun>}
 */
export async function exampleRun (example, env = {}) {
  const flags = FLAGS[example] ?? []
  const args = [...(flags.includes('-a') || flags.includes('-d') ? [] : ['-d', '4']), ...flags]
  const shared = sessionDir()
  if (shared === null) return record(await mkdtemp(join(tmpdir(), `hotpath-example-${example}-`)), example, args, env)
  const dir = join(shared, [example, ...Object.keys(env).sort()].join('-'))
  const done = join(dir, 'done.json')
  const lock = `${dir}.lock`
  for (;;) {
    if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8'))
    try {
      mkdirSync(lock, { recursive: false })
      writeFileSync(join(lock, 'pid'), String(process.pid))
      break
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'EEXIST') throw err
    }
    // Another file records it; one whose process is gone left its lock behind.
    const holder = Number(readIfThere(join(lock, 'pid')))
    if (holder > 0 && !alive(holder)) rmSync(lock, { recursive: true, force: true })
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  try {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    const run = await record(dir, example, args, env)
    writeFileSync(done, JSON.stringify(run))
    return run
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

/**
 * @param {string} dir
 * @param {string} example
 * @param {string[]} args
 * @param {Record<string, string>} env
 * @returns {Promise<ExampleRun>}
 */
async function record (dir, example, args, env) {
  const json = join(dir, 'diagnosis.json')
  const save = join(dir, 'run')
  const html = join(dir, `${example}.html`)
  // Its verdict is what the tests check: the machine to itself.
  const r = await hotpath(['doctor', ...args, '--no-progress', '--save', save, '--json', json, '--report', html, '--', process.execPath, `examples/${example}/server.js`], { env: { PORT: '0', ...env }, timeout: 240000, alone: true })
  let d = null
  try {
    d = JSON.parse(await readFile(json, 'utf8'))
  } catch {}
  return { d, out: r.stdout, stderr: r.stderr, code: r.code, save, json, html, env }
}
