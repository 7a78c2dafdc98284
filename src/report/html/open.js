// Opening a report in the user's browser: $BROWSER when set (as many tools honour it), else the platform's opener.
import { spawn } from 'node:child_process'

/**
 * Starts a browser on a file and returns once it started (or failed to): the browser is not waited for.
 * @param {string} file
 * @param {{ env?: NodeJS.ProcessEnv, platform?: NodeJS.Platform }} [opts]
 * @returns {Promise<{ ok: true } | { ok: false, reason: string }>}
 */
export function openInBrowser (file, opts = {}) {
  const env = opts.env ?? process.env
  const platform = opts.platform ?? process.platform
  const [command, args] = env.BROWSER
    ? [env.BROWSER, [file]]
    : platform === 'darwin'
      ? ['open', [file]]
      : platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', file]]
        : ['xdg-open', [file]]
  return new Promise((resolve) => {
    let child
    try {
      child = spawn(command, args, { stdio: 'ignore', detached: true, env })
    } catch (err) {
      resolve({ ok: false, reason: `${command}: ${/** @type {Error} */ (err).message}` })
      return
    }
    child.once('error', (err) => resolve({ ok: false, reason: `${command}: ${/** @type {NodeJS.ErrnoException} */ (err).code ?? err.message}` }))
    child.once('spawn', () => {
      child.unref()
      resolve({ ok: true })
    })
  })
}
