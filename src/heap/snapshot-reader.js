// Reading a V8 `.heapsnapshot` of any size. The file is one JSON object, but a 1 GB heap writes several GB of it:
// more than V8's longest string, and far more than its graph needs once parsed. So the text is never held: a byte
// scanner fills typed arrays straight from `nodes`, `edges` and `locations` (numbers), keeps each of `strings` once,
// and skips what the analysis does not use (allocation traces, samples). json-stream.js does not fit: it builds JS
// arrays of numbers (8+ bytes per field, and a boxed value per element) where a typed array takes 4. The scanner is one
// state machine over the bytes, its states sharing the position, the current key and the arrays it fills: split, every
// byte of several GB would cross a call between modules, so it stays one piece.
import { createReadStream } from 'node:fs'
import { UsageError } from '../errors.js'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const COMMA = 0x2c
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const ZERO = 0x30
const NINE = 0x39

// Scanner states.
const ROOT = 0 // before the root's {
const KEY_OR_END = 1 // in the root, before a key, a comma or the closing }
const KEY = 2 // inside a key
const BEFORE_COLON = 3
const BEFORE_VALUE = 4
const NUMBERS = 5 // inside a numeric array
const STRINGS = 6 // inside `strings`, between its members
const STRING = 7 // inside one of its members
const VALUE = 8 // inside a value captured as text (`snapshot`) or skipped
const DONE = 9

/**
 * @typedef {object} Meta
 * @property {string[]} node_fields
 * @property {[string[], ...string[]]} node_types
 * @property {string[]} edge_fields
 * @property {[string[], ...string[]]} edge_types
 * @property {string[]} [location_fields]
 */

/**
 * A parsed snapshot: the arrays as V8 lays them out (see `meta`), but typed.
 * @typedef {object} RawSnapshot
 * @property {Meta} meta
 * @property {number} nodeCount
 * @property {number} edgeCount
 * @property {Uint32Array} nodes nodeCount × node_fields.length numbers (ids only, one per node, with `idsOnly`)
 * @property {Uint32Array} edges edgeCount × edge_fields.length numbers (empty with `idsOnly`)
 * @property {Uint32Array} locations [object_index, script_id, line, column] per function with a known location
 * @property {string[]} strings
 * @property {number} bytes the file's length
 */

/**
 * Reads a heap snapshot file.
 * @param {string} file
 * @param {{ idsOnly?: boolean }} [options] idsOnly: keep only each node's id, and stop reading after `nodes` (what an
 *   earlier snapshot of a comparison needs)
 * @returns {Promise<RawSnapshot>}
 */
export async function readHeapSnapshot (file, options = {}) {
  const reader = new SnapshotScanner(file, Boolean(options.idsOnly))
  const stream = createReadStream(file, { highWaterMark: 1 << 20 })
  try {
    for await (const chunk of stream) {
      reader.scan(chunk)
      if (reader.enough()) break
    }
  } catch (err) {
    if (err instanceof UsageError) throw err
    const e = /** @type {NodeJS.ErrnoException} */ (err)
    throw new UsageError(`cannot read '${file}': ${e.code ?? e.message}`)
  } finally {
    stream.destroy()
  }
  return reader.result()
}

class SnapshotScanner {
  /**
   * @param {string} file
   * @param {boolean} idsOnly
   */
  constructor (file, idsOnly) {
    this.file = file
    this.idsOnly = idsOnly
    this.state = ROOT
    this.offset = 0
    /** @type {number[]} the key being read */
    this.keyBytes = []
    this.key = ''
    // A captured value's text, and the nesting and string state of the value being captured or skipped.
    /** @type {Buffer[]} */
    this.pieces = []
    this.capture = false
    this.depth = 0
    this.inString = false
    this.escaped = false
    this.hasEscape = false
    // The numeric array being filled.
    this.number = 0
    this.inNumber = false
    /** @type {Uint32Array} */
    this.target = new Uint32Array(0)
    this.length = 0
    /** keep one field in `keepEvery` (ids only), starting at `keepAt` */
    this.keepEvery = 1
    this.keepAt = 0
    this.field = 0
    /** @type {Meta | null} */
    this.meta = null
    this.nodeCount = 0
    this.edgeCount = 0
    /** @type {Uint32Array} */
    this.nodes = new Uint32Array(0)
    /** @type {Uint32Array} */
    this.edges = new Uint32Array(0)
    /** @type {Uint32Array} */
    this.locations = new Uint32Array(0)
    /** @type {string[]} */
    this.strings = []
    this.seen = new Set()
  }

  /** @param {string} why */
  bad (why) {
    return new UsageError(`'${this.file}' is not a V8 heap snapshot (.heapsnapshot): ${why}`)
  }

  /** Whether everything wanted is read (ids only: the nodes). */
  enough () {
    return this.state === DONE || (this.idsOnly && this.seen.has('nodes') && this.state !== NUMBERS)
  }

  /**
   * Scans one chunk. The hot loops (numbers, strings) keep their state in locals.
   * @param {Buffer} bytes
   */
  scan (bytes) {
    let i = 0
    const n = bytes.length
    while (i < n) {
      switch (this.state) {
        case NUMBERS: i = this.scanNumbers(bytes, i); break
        case STRINGS: i = this.scanStrings(bytes, i); break
        case STRING: i = this.scanString(bytes, i, i); break
        case VALUE: i = this.scanValue(bytes, i, i); break
        default: i = this.scanStructure(bytes, i)
      }
    }
    this.offset += n
  }

  /**
   * The root object's own punctuation and keys: a few dozen bytes in all.
   * @param {Buffer} bytes
   * @param {number} i
   * @returns {number}
   */
  scanStructure (bytes, i) {
    const c = bytes[i]
    const space = c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
    switch (this.state) {
      case ROOT:
        if (space) return i + 1
        if (c !== OPEN_OBJECT) throw this.bad('it does not start with {')
        this.state = KEY_OR_END
        return i + 1
      case KEY_OR_END:
        if (space || c === COMMA) return i + 1
        if (c === CLOSE_OBJECT) {
          this.state = DONE
          return bytes.length
        }
        if (c !== QUOTE) throw this.bad(`unexpected ${String.fromCharCode(c)} at byte ${this.offset + i}`)
        this.keyBytes = []
        this.state = KEY
        return i + 1
      case KEY:
        if (c === QUOTE) {
          this.key = Buffer.from(this.keyBytes).toString('utf8')
          this.state = BEFORE_COLON
        } else {
          this.keyBytes.push(c)
        }
        return i + 1
      case BEFORE_COLON:
        if (space) return i + 1
        if (c !== COLON) throw this.bad(`expected : after "${this.key}"`)
        this.state = BEFORE_VALUE
        return i + 1
      case BEFORE_VALUE:
        if (space) return i + 1
        return this.startValue(bytes, i, c)
      case DONE:
        return bytes.length
    }
    return i + 1
  }

  /**
   * @param {Buffer} bytes
   * @param {number} i at the value's first byte
   * @param {number} c that byte
   */
  startValue (bytes, i, c) {
    const key = this.key
    this.seen.add(key)
    const numeric = key === 'nodes' || key === 'edges' || key === 'locations'
    const wanted = !this.idsOnly || key === 'nodes' || key === 'snapshot'
    if (numeric && wanted) {
      if (c !== OPEN_ARRAY) throw this.bad(`"${key}" is not an array`)
      if (key !== 'locations' && this.meta === null) throw this.bad(`"${key}" comes before "snapshot"`)
      this.startNumbers(key)
      this.state = NUMBERS
      return i + 1
    }
    if (key === 'strings' && wanted) {
      if (c !== OPEN_ARRAY) throw this.bad('"strings" is not an array')
      this.state = STRINGS
      return i + 1
    }
    // Anything else is captured (the small `snapshot` header) or skipped, nesting and strings followed.
    this.capture = key === 'snapshot'
    this.pieces = []
    this.depth = 0
    this.inString = false
    this.escaped = false
    this.state = VALUE
    return i
  }

  /** @param {string} key */
  startNumbers (key) {
    const meta = /** @type {Meta} */ (this.meta)
    this.number = 0
    this.inNumber = false
    this.length = 0
    this.field = 0
    this.keepEvery = 1
    this.keepAt = 0
    if (key === 'nodes') {
      const fields = meta.node_fields.length
      if (this.idsOnly) {
        this.keepEvery = fields
        this.keepAt = meta.node_fields.indexOf('id')
        this.target = new Uint32Array(this.nodeCount)
      } else {
        this.target = new Uint32Array(this.nodeCount * fields)
      }
    } else if (key === 'edges') {
      this.target = new Uint32Array(this.edgeCount * meta.edge_fields.length)
    } else {
      this.target = new Uint32Array(1 << 16)
    }
  }

  /**
   * Non-negative integers separated by commas, into `target` (grown when the count was not announced).
   * @param {Buffer} bytes
   * @param {number} i
   * @returns {number}
   */
  scanNumbers (bytes, i) {
    const n = bytes.length
    let { number, inNumber, length, target, field } = this
    const { keepEvery, keepAt } = this
    const all = keepEvery === 1
    for (; i < n; i++) {
      const c = bytes[i]
      if (c >= ZERO && c <= NINE) {
        number = number * 10 + (c - ZERO)
        inNumber = true
        continue
      }
      if (inNumber) {
        if (all || field === keepAt) {
          if (length === target.length) target = this.grow(target)
          target[length++] = number
        }
        if (++field === keepEvery) field = 0
        number = 0
        inNumber = false
      }
      if (c === CLOSE_ARRAY) {
        this.finishNumbers(target, length)
        this.state = KEY_OR_END
        return i + 1
      }
      if (c !== COMMA && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
        throw this.bad(`unexpected ${String.fromCharCode(c)} in "${this.key}" at byte ${this.offset + i}`)
      }
    }
    // Plain stores, not Object.assign: a store V8 has seen once stays in the optimized loop; Object.assign's object
    // literal deoptimized it at the end of every chunk (half the parse time).
    this.number = number
    this.inNumber = inNumber
    this.length = length
    this.target = target
    this.field = field
    return i
  }

  /**
   * @param {Uint32Array} target
   * @returns {Uint32Array}
   */
  grow (target) {
    if (this.key !== 'locations') throw this.bad(`"${this.key}" holds more numbers than node_count/edge_count announce`)
    const bigger = new Uint32Array(target.length * 2)
    bigger.set(target)
    return bigger
  }

  /**
   * @param {Uint32Array} target
   * @param {number} length
   */
  finishNumbers (target, length) {
    const meta = /** @type {Meta} */ (this.meta)
    if (this.key === 'nodes') {
      const expected = this.idsOnly ? this.nodeCount : this.nodeCount * meta.node_fields.length
      if (length !== expected) throw this.bad(`"nodes" holds ${length} numbers, node_count says ${expected}`)
      this.nodes = target
    } else if (this.key === 'edges') {
      if (length !== target.length) throw this.bad(`"edges" holds ${length} numbers, edge_count says ${target.length}`)
      this.edges = target
    } else {
      this.locations = target.slice(0, length)
    }
  }

  /**
   * Between the members of `strings`.
   * @param {Buffer} bytes
   * @param {number} i
   * @returns {number}
   */
  scanStrings (bytes, i) {
    const n = bytes.length
    for (; i < n; i++) {
      const c = bytes[i]
      if (c === QUOTE) {
        this.pieces = []
        this.escaped = false
        this.hasEscape = false
        this.state = STRING
        return this.scanString(bytes, i + 1, i)
      }
      if (c === CLOSE_ARRAY) {
        this.state = KEY_OR_END
        return i + 1
      }
    }
    return i
  }

  /**
   * Inside one string of `strings`; `from` is where its text in this chunk starts (its opening quote, if here).
   * @param {Buffer} bytes
   * @param {number} i
   * @param {number} from
   * @returns {number}
   */
  scanString (bytes, i, from) {
    const n = bytes.length
    let escaped = this.escaped
    for (; i < n; i++) {
      const c = bytes[i]
      if (escaped) {
        escaped = false
      } else if (c === BACKSLASH) {
        escaped = true
        this.hasEscape = true
      } else if (c === QUOTE) {
        this.pieces.push(bytes.subarray(from, i + 1))
        this.strings.push(this.decodeString())
        this.pieces = []
        this.state = STRINGS
        return i + 1
      }
    }
    this.escaped = escaped
    this.pieces.push(bytes.subarray(from, n))
    return n
  }

  /** The string just read, its quotes included in `pieces`. */
  decodeString () {
    const text = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces)
    if (!this.hasEscape) return text.toString('utf8', 1, text.length - 1)
    try {
      return JSON.parse(text.toString('utf8'))
    } catch {
      throw this.bad(`a broken string at byte ${this.offset}`)
    }
  }

  /**
   * A value captured or skipped, up to the end of its outermost container (or of a scalar).
   * @param {Buffer} bytes
   * @param {number} i
   * @param {number} from
   * @returns {number}
   */
  scanValue (bytes, i, from) {
    const n = bytes.length
    let { depth, inString, escaped } = this
    for (; i < n; i++) {
      const c = bytes[i]
      if (inString) {
        if (escaped) escaped = false
        else if (c === BACKSLASH) escaped = true
        else if (c === QUOTE) inString = false
        continue
      }
      if (c === QUOTE) inString = true
      else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY || c === COMMA) {
        // A comma or the root's } ends a scalar; a closing bracket at depth 1 ends a container (itself included).
        if (depth === 0) return this.endValue(bytes.subarray(from, i), i)
        if (c !== COMMA && --depth === 0) return this.endValue(bytes.subarray(from, i + 1), i + 1)
      }
    }
    this.depth = depth
    this.inString = inString
    this.escaped = escaped
    if (this.capture) this.pieces.push(bytes.subarray(from, n))
    return n
  }

  /**
   * @param {Buffer} last the value's text in this chunk
   * @param {number} next where scanning goes on
   */
  endValue (last, next) {
    this.state = KEY_OR_END
    if (!this.capture) return next
    this.pieces.push(last)
    /** @type {any} */
    let header
    try {
      header = JSON.parse(Buffer.concat(this.pieces).toString('utf8'))
    } catch {
      throw this.bad('its "snapshot" header is not JSON')
    }
    this.pieces = []
    const meta = header?.meta
    if (!meta || !Array.isArray(meta.node_fields) || !Array.isArray(meta.edge_fields) || !Number.isInteger(header.node_count) || !Number.isInteger(header.edge_count)) {
      throw this.bad('its "snapshot" header has no meta, node_count or edge_count')
    }
    for (const field of ['type', 'name', 'id', 'self_size', 'edge_count']) {
      if (!meta.node_fields.includes(field)) throw this.bad(`its nodes have no "${field}" field`)
    }
    for (const field of ['type', 'name_or_index', 'to_node']) {
      if (!meta.edge_fields.includes(field)) throw this.bad(`its edges have no "${field}" field`)
    }
    this.meta = meta
    this.nodeCount = header.node_count
    this.edgeCount = header.edge_count
    return next
  }

  /** @returns {RawSnapshot} */
  result () {
    if (this.meta === null) throw this.bad('it has no "snapshot" header')
    for (const key of this.idsOnly ? ['nodes'] : ['nodes', 'edges', 'strings']) {
      if (!this.seen.has(key) || (this.state !== DONE && !this.enough())) throw this.bad(`it ends before "${key}" does`)
    }
    if (!this.idsOnly && this.state !== DONE) throw this.bad('it ends before its last value does')
    return {
      meta: this.meta,
      nodeCount: this.nodeCount,
      edgeCount: this.edgeCount,
      nodes: this.nodes,
      edges: this.edges,
      locations: this.locations,
      strings: this.strings,
      bytes: this.offset
    }
  }
}
