import { spawn } from 'node:child_process'
import { ROOT } from './cli.js'

/**
 * Runs an ES module given as text in a real child Node process (from the repository root, so `hotpath/runtime`
 * resolves), and resolves when it exits by itself — a test of what keeps a process alive must not kill it.
 * @param {string} source
 * @param {{ timeout?: number, args?: string[] }} [opts]
 * @returns {Promise<{ code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, timedOut: boolean }>}
 */
export function runModule (source, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...(opts.args ?? []), '--input-type=module', '-e', source], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c })
    child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c })
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL') }, opts.timeout ?? 10000)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, timedOut })
    })
  })
}

/**
 * Starts a fixture app that prints `listening on <port>` when it serves, and keeps every line of its stdout.
 * @param {string} app the script
 * @param {Record<string, string>} env added to this process's
 * @returns {Promise<{ child: import('node:child_process').ChildProcess, port: number, lines: string[] }>}
 */
export async function startListeningApp (app, env) {
  const child = spawn(process.execPath, [app], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } })
  /** @type {string[]} */
  const lines = []
  let partial = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk) => {
    const parts = (partial + chunk).split('\n')
    partial = /** @type {string} */ (parts.pop())
    lines.push(...parts)
  })
  const deadline = Date.now() + 10000
  while (!lines.some(l => l.startsWith('listening on'))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL')
      throw new Error('the app did not start')
    }
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  const port = Number(/** @type {string} */ (lines.find(l => l.startsWith('listening on'))).split(' ').pop())
  return { child, port, lines }
}
