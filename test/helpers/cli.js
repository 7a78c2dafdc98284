import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { alone, shared } from './machine.js'

export const BIN = fileURLToPath(new URL('../../bin/hotpath.js', import.meta.url))
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * Runs the hotpath CLI as a user would, in a real child process. A run that starts a server or a load shares the
 * machine with the other test file running at once, or has it to itself with `alone` (helpers/machine.js).
 * @param {string[]} args
 * @param {{ timeout?: number, env?: Record<string, string>, cwd?: string, alone?: boolean, refused?: boolean }} [opts]
 *   `alone`: for a run whose verdict or timing the test checks; `refused`: an invocation the command line refuses
 *   before it starts anything, which need not wait for the machine (it waited for other files' runs, 93 s in a test
 *   of three refusals)
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
export function hotpath (args, opts = {}) {
  const offline = opts.refused === true || args.includes('--analyse') || args.includes('--from') || args.includes('--help') || !['doctor', 'flame', 'heap', 'load'].includes(args[0])
  if (offline) return spawnCli(args, opts)
  const what = args.map(a => a.startsWith('/') ? a.split('/').slice(-2).join('/') : a).join(' ')
  return opts.alone ? alone(() => spawnCli(args, opts), what) : shared(() => spawnCli(args, opts), what)
}

/**
 * @param {string[]} args
 * @param {{ timeout?: number, env?: Record<string, string>, cwd?: string }} opts
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
function spawnCli (args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c })
    child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`hotpath ${args.join(' ')} did not finish in ${opts.timeout ?? 60000} ms\n${stderr}`))
    }, opts.timeout ?? 60000)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/**
 * Runs the hotpath CLI and sends it `signal` 1.5 s after it says it is loading, as Ctrl-C (SIGINT) or a CI's timeout
 * (SIGTERM) would.
 * @param {string[]} args
 * @param {NodeJS.Signals} signal
 * @param {Record<string, string>} [env]
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
export async function interrupted (args, signal, env = {}) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c })
  child.stderr.setEncoding('utf8').on('data', (c) => {
    stderr += c
    if (c.includes('loading it')) setTimeout(() => child.kill(signal), 1500)
  })
  const code = await new Promise(resolve => child.on('close', resolve))
  return { code, stdout, stderr }
}
