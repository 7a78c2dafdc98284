// The flags every command spells and reads the same way (docs/flags.md): where the JSON result goes, the progress bar
// and the browser. `--json` alone prints the JSON on stdout; `--json=<file>` writes it to a file.
import { writeFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'

/**
 * `--json`, `--json=<file>`, and with `spaced` (a command that takes no positional argument) `--json <file>` too.
 * @param {string} what what the JSON holds, for the help
 * @param {{ spaced?: boolean }} [opts]
 * @returns {import('./args.js').OptionSpec}
 */
export function jsonFlag (what, { spaced = false } = {}) {
  return {
    type: 'string',
    bare: '-',
    spaced,
    value: 'file',
    description: `print ${what} as JSON on stdout (alone, or with -); --json=<file>${spaced ? ' or --json <file>' : ''} writes it to a file`
  }
}

/** @type {import('./args.js').OptionSpec} */
export const NO_PROGRESS = { type: 'boolean', description: 'no progress bar (it only shows on a terminal anyway)' }

/**
 * @param {string} what the page it opens
 * @returns {import('./args.js').OptionSpec}
 */
export function openFlag (what) {
  return { type: 'boolean', description: `open ${what} in a browser ($BROWSER, else the system's)` }
}

/**
 * Where `--json` sends the result: nowhere, stdout, or a file.
 * @param {Record<string, unknown>} values
 * @returns {{ stdout: boolean, file: string | null }}
 */
export function jsonOutput (values) {
  const value = values.json
  if (typeof value !== 'string') return { stdout: false, file: null }
  if (value === '') throw new UsageError('--json= needs a file name (or give --json alone to print the JSON on stdout)')
  return value === '-' ? { stdout: true, file: null } : { stdout: false, file: value }
}

/**
 * Writes the JSON text where `--json` said (a file that cannot be written is a usage error that names it).
 * @param {{ stdout: boolean, file: string | null }} where
 * @param {string} json
 * @param {{ stdout: NodeJS.WritableStream }} io
 */
export async function writeJson (where, json, io) {
  if (where.stdout) io.stdout.write(json)
  if (where.file === null) return
  try {
    await writeFile(where.file, json)
  } catch (err) {
    throw new UsageError(`cannot write '${where.file}': ${/** @type {NodeJS.ErrnoException} */ (err).code ?? err}`)
  }
}
