// The text of the scripts a profile names, read once each: the code that ran. That is the file on disk, unless a loader
// transformed it in memory (tsx, ts-node, babel's hook: the file holds TypeScript, V8 ran JavaScript), in which case
// the probe copied what ran into the run directory (src/probe/transformed-scripts.js) and that copy is read instead.
// Profiles are usually analysed on the machine that recorded them; when a file is gone or unreadable, what needs it
// (source maps, call-site lines) quietly does without.
import { readFileSync, statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { SourceMapper } from './source-maps.js'

// Generated bundles can be large; anything past this is not a script worth reading to find a line.
const MAX_BYTES = 64 * 1024 * 1024

export class SourceCache {
  /**
   * @param {boolean} [enabled] false: every read answers null, without touching the disk
   * @param {Map<string, string>} [ran] absolute path of a script → absolute path of the copy of the code that ran, for
   *   the scripts a loader transformed in memory
   */
  constructor (enabled = true, ran = new Map()) {
    this.enabled = enabled
    this.ran = ran
    /** @type {Map<string, string | null>} */
    this.texts = new Map()
    /** @type {Map<string, string | null>} */
    this.disk = new Map()
    /** @type {SourceMapper | null} */
    this.sourceMapper = null
  }

  /**
   * The code that ran as this script.
   * @param {string} file an absolute path
   * @returns {string | null}
   */
  read (file) {
    let text = this.texts.get(file)
    if (text !== undefined) return text
    const copy = this.ran.get(file)
    text = copy === undefined ? this.onDisk(file) : readText(this.enabled, copy)
    this.texts.set(file, text)
    return text
  }

  /**
   * The file as it is on disk, whatever ran: for a script a loader transformed, the source the user wrote.
   * @param {string} file an absolute path
   * @returns {string | null}
   */
  onDisk (file) {
    let text = this.disk.get(file)
    if (text === undefined) this.disk.set(file, text = readText(this.enabled, file))
    return text
  }

  /**
   * Whether the code that ran as this script is not what its file holds (a loader transformed it in memory).
   * @param {string} file
   */
  transformed (file) {
    return this.ran.has(file)
  }

  /**
   * Whether positions in the code that ran are positions in the file too: it was not transformed, or only blanked
   * (Node's type stripping turns types into spaces, every line keeping its length).
   * @param {string} file
   */
  samePositions (file) {
    if (!this.ran.has(file)) return true
    const ran = this.read(file)
    const disk = this.onDisk(file)
    if (ran === null || disk === null || ran.length < disk.length) return false
    // Every line of the file is as long in the code that ran (Node appends a `//# sourceURL=` line after them).
    for (let i = disk.indexOf('\n'); i !== -1; i = disk.indexOf('\n', i + 1)) {
      if (ran.charCodeAt(i) !== 10) return false
    }
    const end = ran.indexOf('\n', disk.lastIndexOf('\n') + 1)
    return (end === -1 ? ran.length : end) === disk.length
  }

  /** Reads every copy of a transformed script now: the directory that holds them is about to go. */
  readAll () {
    for (const file of this.ran.keys()) this.read(file)
  }

  /** The source maps of these scripts, read once each (null when reading sources is disabled). */
  mapper () {
    if (!this.enabled) return null
    this.sourceMapper ??= new SourceMapper(this)
    return this.sourceMapper
  }
}

/**
 * @param {boolean} enabled
 * @param {string} file
 * @returns {string | null}
 */
function readText (enabled, file) {
  if (!enabled || !isAbsolute(file)) return null
  try {
    if (statSync(file).size <= MAX_BYTES) return readFileSync(file, 'utf8')
  } catch {}
  return null
}
