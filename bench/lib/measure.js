// Helpers shared by the benchmarks: pinned processes, CPU time of a finished command, a counting server.
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())

/**
 * Runs a command pinned to one CPU and returns its output and the CPU it used (user + system, every thread and
 * child): read from the waiting shell's cutime/cstime, so the tool needs no cooperation.
 * @param {number} cpu
 * @param {string[]} command
 * @returns {Promise<{ output: string, code: number, user: number, system: number, cpu: number }>} seconds
 */
export function runPinned (cpu, command) {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-bench-'))
  const out = join(dir, 'out')
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', '"$@" >"$BENCH_OUT" 2>&1; code=$?; cat /proc/$$/stat; exit $code', 'bash', 'taskset', '-c', String(cpu), ...command], {
      env: { ...process.env, BENCH_OUT: out },
      stdio: ['ignore', 'pipe', 'inherit']
    })
    let stat = ''
    child.stdout.setEncoding('utf8').on('data', (c) => { stat += c })
    child.on('error', reject)
    child.on('close', (code) => {
      const fields = stat.slice(stat.lastIndexOf(')') + 2).trim().split(/\s+/)
      // after "pid (comm) ", field 3 is state; cutime and cstime are fields 16 and 17 of the full line
      const user = Number(fields[16 - 3]) / CLK_TCK
      const system = Number(fields[17 - 3]) / CLK_TCK
      const output = readFileSync(out, 'utf8')
      rmSync(dir, { recursive: true, force: true })
      resolve({ output, code: code ?? -1, user, system, cpu: user + system })
    })
  })
}

/**
 * Starts a bench server, which says its port over IPC once it listens.
 * @param {string[]} command
 * @param {Record<string, string>} [env]
 * @returns {Promise<{ child: import('node:child_process').ChildProcess, port: number, url: string }>}
 */
export async function startBenchServer (command, env = {}) {
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env } })
  const port = await new Promise((resolve, reject) => {
    child.once('message', (/** @type {any} */ m) => resolve(m.port))
    child.once('exit', (code) => reject(new Error(`bench server exited with code ${code}`)))
  })
  return { child, port, url: `http://127.0.0.1:${port}/` }
}

/**
 * Starts bench/servers/hello.js pinned to a CPU; `count()` returns requests served since the last call.
 * @param {number} cpu
 * @param {Record<string, string>} [env]
 */
export async function startCountingServer (cpu, env = {}) {
  const { child, port, url } = await startBenchServer(['taskset', '-c', String(cpu), process.execPath, new URL('../servers/hello.js', import.meta.url).pathname], env)
  return {
    port,
    url,
    /** @returns {Promise<number>} */
    count: () => new Promise(resolve => {
      child.once('message', (/** @type {any} */ m) => resolve(m.served))
      child.send('count')
    }),
    stop: () => { child.kill('SIGTERM') }
  }
}

/** @param {number[]} xs */
export function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** @param {string} name */
export function hasCommand (name) {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * Parses `--name value` flags of a bench script.
 * @param {Record<string, string>} defaults
 */
export function benchArgs (defaults) {
  const out = { ...defaults }
  const argv = process.argv.slice(2)
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([\w-]+)$/.exec(argv[i])
    if (m && m[1] in out) out[m[1]] = argv[++i]
    else if (argv[i] === '--quick') out.quick = 'true'
  }
  return out
}
