// Maps positions in generated JavaScript (TypeScript output, bundles) back to the source the user wrote, using the
// maps the app ships: an inline data: URL or a file named by the script's last `//# sourceMappingURL=` comment.
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AnyMap, GREATEST_LOWER_BOUND, LEAST_UPPER_BOUND, originalPositionFor } from '@jridgewell/trace-mapping'

const MAPPING_URL = /\/[/*][#@]\s*sourceMappingURL=([^\s'"*]+)\s*(?:\*\/\s*)?$/

/**
 * @typedef {object} OriginalPosition
 * @property {string} file an absolute path (or the source's name when the map gives no resolvable path)
 * @property {number} line 1-based
 * @property {number} column 0-based
 * @property {string | null} name the original name at that position, when the map has one
 */

export class SourceMapper {
  /** @param {import('./sources.js').SourceCache} sources */
  constructor (sources) {
    this.sources = sources
    /** @type {Map<string, InstanceType<typeof AnyMap> | null>} */
    this.maps = new Map()
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
    } catch {}
    this.maps.set(file, map)
    return map
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
    if (ref === null) return null
    if (ref.startsWith('data:')) {
      const comma = ref.indexOf(',')
      const meta = ref.slice(5, comma)
      const payload = ref.slice(comma + 1)
      const json = meta.endsWith(';base64')
        ? Buffer.from(payload, 'base64').toString('utf8')
        : decodeURIComponent(payload)
      return new AnyMap(json, file)
    }
    const mapFile = ref.startsWith('file://') ? fileURLToPath(ref) : resolve(dirname(file), decodeURI(ref))
    return new AnyMap(readFileSync(mapFile, 'utf8'), mapFile)
  }

  /**
   * The original position of a generated one.
   * @param {string} file
   * @param {number} line 1-based
   * @param {number} column 0-based; -1 maps the line as a whole (its first mapped segment)
   * @returns {OriginalPosition | null}
   */
  original (file, line, column) {
    const map = this.mapOf(file)
    if (map === null || line < 1) return null
    const pos = column < 0
      ? originalPositionFor(map, { line, column: 0, bias: LEAST_UPPER_BOUND })
      : originalPositionFor(map, { line, column, bias: GREATEST_LOWER_BOUND })
    if (pos.source === null) return null
    return {
      file: pos.source.startsWith('file://') ? safePath(pos.source) : pos.source,
      line: pos.line,
      column: pos.column,
      name: pos.name
    }
  }
}

/** @param {string} url */
function safePath (url) {
  try {
    return fileURLToPath(url)
  } catch {
    return url
  }
}
