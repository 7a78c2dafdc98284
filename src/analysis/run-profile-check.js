// Checking a profile file of a run: what is wrong with it, in words (`missing`, `cut short at byte 1,024`), or nothing.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseCpuProfile, parseHeapProfile } from '../profile/cpuprofile.js'

/**
 * Reads a profile file of the run: the profile, or what is wrong with it when it does not read as the profile it
 * should be.
 * @param {string} dir
 * @param {string} name
 * @param {'cpu' | 'heapAllocations' | 'heapRetained'} kind
 * @returns {{ profile: any, problem: null } | { profile: null, problem: string }}
 */
export function checkedProfile (dir, name, kind) {
  const problem = (/** @type {string} */ why) => ({ profile: null, problem: why })
  if (!/^[\w.-]+$/.test(name)) return problem('its name points outside the run directory')
  let text
  try {
    text = readFileSync(join(dir, name), 'utf8')
  } catch (err) {
    const code = /** @type {NodeJS.ErrnoException} */ (err).code
    return problem(code === 'ENOENT' ? 'missing' : `unreadable: ${code ?? err}`)
  }
  let json
  try {
    json = JSON.parse(text)
  } catch {
    return problem(jsonProblem(text))
  }
  try {
    if (kind === 'cpu') parseCpuProfile(json, name)
    else parseHeapProfile(json, name)
  } catch (err) {
    const why = /** @type {Error} */ (err).message.replace(/^.*? is not a valid \.\w+: /, '')
    return problem(`not a ${kind === 'cpu' ? 'CPU' : 'heap'} profile: ${why}`)
  }
  return { profile: json, problem: null }
}

/**
 * Where a text stops being JSON, in bytes: cut short (a valid beginning), or the first byte no JSON could hold.
 * @param {string} text
 */
function jsonProblem (text) {
  if (text.trim() === '') return 'empty'
  let at = stopsAt(text)
  if (at >= text.trimEnd().length) return `cut short at byte ${Buffer.byteLength(text).toLocaleString('en-US')}`
  // V8 does not say where an unexpected character is; a beginning of the text either could start JSON or could not.
  if (at === -1 && text.length <= 64 * 1024 * 1024) {
    let good = 0
    let bad = text.length
    while (bad - good > 1 && at === -1) {
      const mid = Math.floor((good + bad) / 2)
      const stop = stopsAt(text.slice(0, mid))
      if (stop >= mid) good = mid
      else if (stop !== -1) at = stop
      else bad = mid
    }
    if (at === -1) at = bad - 1
  }
  return at === -1 ? 'not JSON' : `not JSON at byte ${Buffer.byteLength(text.slice(0, at)).toLocaleString('en-US')}`
}

/**
 * How far a text reads as JSON: its length when it is JSON or the beginning of some, else where V8 stopped (-1 when
 * it does not say).
 * @param {string} text
 */
function stopsAt (text) {
  try {
    JSON.parse(text)
    return text.length
  } catch (err) {
    const message = String(/** @type {Error} */ (err)?.message)
    if (/end of JSON input/.test(message)) return text.length
    const at = /at position (\d+)/.exec(message)
    return at ? Number(at[1]) : -1
  }
}
