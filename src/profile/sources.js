// The text of the scripts a profile names, read once each. Profiles are usually analysed on the machine that recorded
// them; when a file is gone or unreadable, what needs it (source maps, call-site lines) quietly does without.
import { readFileSync, statSync } from 'node:fs'
import { isAbsolute } from 'node:path'

// Generated bundles can be large; anything past this is not a script worth reading to find a line.
const MAX_BYTES = 64 * 1024 * 1024

export class SourceCache {
  /** @param {boolean} [enabled] false: every read answers null, without touching the disk */
  constructor (enabled = true) {
    this.enabled = enabled
    /** @type {Map<string, string | null>} */
    this.texts = new Map()
  }

  /**
   * @param {string} file an absolute path
   * @returns {string | null}
   */
  read (file) {
    let text = this.texts.get(file)
    if (text !== undefined) return text
    text = null
    if (this.enabled && isAbsolute(file)) {
      try {
        if (statSync(file).size <= MAX_BYTES) text = readFileSync(file, 'utf8')
      } catch {}
    }
    this.texts.set(file, text)
    return text
  }
}
