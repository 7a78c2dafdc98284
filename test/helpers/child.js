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
