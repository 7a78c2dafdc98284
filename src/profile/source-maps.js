// Maps positions in generated JavaScript (TypeScript output, bundles) back to the source the user wrote, using the
// maps the app ships: an inline data: URL or a file named by the script's last `//# sourceMappingURL=` comment, read
// from the code that ran (sources.js: the file, or the probe's copy of what a loader compiled in memory).
import { existsSync, readFileSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AnyMap, GREATEST_LOWER_BOUND, LEAST_UPPER_BOUND, decodedMappings, originalPositionFor } from '@jridgewell/trace-mapping'

/** Files Node runs only compiled (or, stripping types, blanked in place). */
const TYPESCRIPT = /\.[cm]?tsx?$/
/** The reason a file's positions are said lost when they are not in it at all: the code that ran was not recorded. */
export const NOT_RECORDED = 'the compiled code was not recorded'

const MAPPING_URL = /\/[/*][#@]\s*sourceMappingURL=([^\s'"*]+)\s*(?:\*\/\s*)?$/

/**
 * @typedef {object} OriginalPosition
 * @property {string} file an absolute path (or the source's name when the map gives no resolvable path)
 * @property {number} line 1-based
 * @property {number} column 0-based
 * @property {string | null} name the original name at that position, when the map has one
 */

/**
 * A script whose lines cannot be told as its source's: said once, naming the file.
 * @typedef {object} SourceMapProblem
 * @property {string} file the script, an absolute path
 * @property {string | null} map the map it names, when it names one in a file
 * @property {string} reason `no source map`, `unreadable (ENOENT)`, `not a source map`
 * @property {boolean} lost the code that ran is not the file (a loader compiled it in memory): its positions are no
 *   line of anything the user can open, and are not shown; else they are the file's own lines
 */

export class SourceMapper {
  /** @param {import('./sources.js').SourceCache} sources */
  constructor (sources) {
    this.sources = sources
    /** @type {Map<string, InstanceType<typeof AnyMap> | null>} */
    this.maps = new Map()
    /** @type {Map<string, SourceMapProblem>} */
    this.problems = new Map()
    /** @type {Set<string>} TypeScript files a position was found outside of: what ran was compiled, and is not here */
    this.misfits = new Set()
  }

  /**
   * Checks a position of a TypeScript file that has neither a map nor a copy of what ran: a position outside the file
   * (a profile taken under tsx, read without the run that copied tsx's output) proves that what ran was compiled code,
   * whose lines are no lines of the file. Node's type stripping keeps every position, and passes.
   * @param {string} file
   * @param {number} line 1-based
   * @param {number} column 0-based
   */
  checkFits (file, line, column) {
    if (!TYPESCRIPT.test(file) || this.misfits.has(file) || this.sources.transformed(file) || this.mapOf(file) !== null) return
    const text = this.sources.read(file)
    if (text === null) return
    let start = 0
    for (let l = 1; l < line; l++) {
      const nl = text.indexOf('\n', start)
      if (nl === -1) {
        start = -1
        break
      }
      start = nl + 1
    }
    const end = start === -1 ? -1 : text.indexOf('\n', start)
    if (start !== -1 && column <= (end === -1 ? text.length : end) - start) return
    this.misfits.add(file)
    this.problems.set(file, { file, map: null, reason: NOT_RECORDED, lost: true })
  }

  /**
   * The map of a generated file, or null when it has none (or it cannot be read).
   * @param {string} file
   */
  mapOf (file) {
    let map = this.maps.get(file)
    if (map !== undefined) return map
    map = null
    try {
      map = this.load(file)
    } catch (err) {
      this.problem(file, null, `not a source map (${/** @type {Error} */ (err)?.message ?? err})`)
    }
    if (map !== null && unshippedSources(file, map) && this.sources.samePositions(file)) map = null
    this.maps.set(file, map)
    return map
  }

  /**
   * @param {string} file
   * @param {string | null} map
   * @param {string} reason
   */
  problem (file, map, reason) {
    if (this.problems.has(file)) return
    this.problems.set(file, { file, map, reason, lost: !this.sources.samePositions(file) })
  }

  /**
   * @param {string} file
   * @returns {InstanceType<typeof AnyMap> | null}
   */
  load (file) {
    const text = this.sources.read(file)
    if (text === null) return null
    // The comment is on one of the last lines; looking only there avoids matching a string inside the code.
    const tail = text.slice(-4096).trimEnd().split('\n').slice(-3)
    let ref = null
    for (const line of tail) {
      const m = MAPPING_URL.exec(line.trim())
      if (m) ref = m[1]
    }
    if (ref === null) {
      // Code a loader compiled without a map: its lines are nobody's (type stripping keeps them, and needs none).
      if (!this.sources.samePositions(file)) this.problem(file, null, 'no source map')
      return null
    }
    if (ref.startsWith('data:')) {
      const comma = ref.indexOf(',')
      const meta = ref.slice(5, comma)
      const payload = ref.slice(comma + 1)
      const json = meta.endsWith(';base64')
        ? Buffer.from(payload, 'base64').toString('utf8')
        : decodeURIComponent(payload)
      return parseMap(json, file)
    }
    let mapFile = ref
    let json
    try {
      mapFile = ref.startsWith('file://') ? fileURLToPath(ref) : resolve(dirname(file), decodeURI(ref))
      json = readFileSync(mapFile, 'utf8')
    } catch (err) {
      this.problem(file, mapFile, `unreadable (${/** @type {NodeJS.ErrnoException} */ (err)?.code ?? err})`)
      return null
    }
    try {
      return parseMap(json, mapFile)
    } catch (err) {
      this.problem(file, mapFile, `not a source map (${/** @type {Error} */ (err)?.message ?? err})`)
      return null
    }
  }

  /**
   * Whether the positions of this script are no line of anything the user can open: a loader compiled it in memory
   * and no map says where its code came from. Such a line is not shown (never the compiled code's line under the
   * source's name).
   * @param {string} file
   */
  lost (file) {
    if (this.misfits.has(file)) return true
    return this.sources.transformed(file) && this.mapOf(file) === null && !this.sources.samePositions(file)
  }

  /**
   * The original position of a generated one.
   * @param {string} file
   * @param {number} line 1-based
   * @param {number} column 0-based; -1 maps the line as a whole (see originalLine)
   * @returns {OriginalPosition | null}
   */
  original (file, line, column) {
    if (column < 0) return this.originalLine(file, line)
    const map = this.mapOf(file)
    if (map === null || line < 1) return null
    const pos = originalPositionFor(map, { line, column, bias: GREATEST_LOWER_BOUND })
    if (pos.source === null) {
      // Before the line's first mapped segment (the indentation V8 may point into): the segment that starts the line.
      const next = originalPositionFor(map, { line, column, bias: LEAST_UPPER_BOUND })
      if (next.source === null) return null
      return this.position(map, next)
    }
    return this.position(map, pos)
  }

  /**
   * The original line of a whole generated line, when all of it comes from one line of one source; null when its code
   * comes from several (one line of minified or whitespace-stripped output holds a whole file: a line-level position,
   * such as a profile's ticks give, says nothing of which).
   * @param {string} file
   * @param {number} line 1-based
   * @returns {OriginalPosition | null}
   */
  originalLine (file, line) {
    const map = this.mapOf(file)
    if (map === null || line < 1) return null
    const segments = decodedMappings(map)[line - 1]
    if (!segments || segments.length === 0) return null
    /** @type {number[] | null} */
    let first = null
    for (const s of segments) {
      if (s.length < 4) continue
      if (first === null) first = /** @type {number[]} */ (s)
      else if (s[1] !== first[1] || s[2] !== first[2]) return null
    }
    if (first === null) return null
    return this.position(map, originalPositionFor(map, { line, column: first[0], bias: LEAST_UPPER_BOUND }))
  }

  /**
   * @param {InstanceType<typeof AnyMap>} map
   * @param {ReturnType<typeof originalPositionFor>} pos
   * @returns {OriginalPosition | null}
   */
  position (map, pos) {
    if (pos.source === null) return null
    return { file: sourcePath(pos.source, map), line: pos.line, column: pos.column, name: pos.name }
  }
}

/**
 * Whether a package's map names only sources the package does not ship: its compiled files are what is installed, and
 * the only lines one can open (Sequelize's lib/ maps to a src/ its package leaves out). The app's own maps are kept,
 * their sources elsewhere or not: the user has them.
 * @param {string} file the generated script
 * @param {InstanceType<typeof AnyMap>} map
 */
function unshippedSources (file, map) {
  if (!file.split(/[\\/]/).includes('node_modules')) return false
  return map.resolvedSources.every(source => source === null || !existsSync(sourcePath(source, map)))
}

/** The directory of each map, where the sources a bundler names by its own scheme are looked for. */
const mapDirs = new WeakMap()

/**
 * @param {string} json
 * @param {string} url the map's own path (the script's, for an inline map): its sources are relative to it
 */
function parseMap (json, url) {
  const map = new AnyMap(json, url)
  mapDirs.set(map, dirname(url))
  return map
}

/**
 * The path of a map's source: a file:// URL's path; a bundler's own scheme (`webpack://app/./src/x.ts`) resolved
 * against the directories above the map, where the file is found; else the map's own word for it.
 * @param {string} source as trace-mapping resolved it against the map's URL
 * @param {InstanceType<typeof AnyMap>} map
 */
function sourcePath (source, map) {
  if (source.startsWith('file://')) {
    try {
      return fileURLToPath(source)
    } catch {
      return source
    }
  }
  if (isAbsolute(source)) return source
  const scheme = /^[a-z][\w+.-]*:\/\/[^/]*\/(.+)$/i.exec(source)
  const from = mapDirs.get(map)
  if (scheme && typeof from === 'string') {
    const rel = scheme[1].replace(/\?.*$/, '')
    for (let dir = from; ; dir = dirname(dir)) {
      const candidate = join(dir, rel)
      if (existsSync(candidate)) return candidate
      if (dirname(dir) === dir) break
    }
  }
  return source
}
