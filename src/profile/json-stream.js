// Reading a JSON file longer than V8's longest string (~512 MB): a long `.cpuprofile` cannot be read as one string,
// so it is read in chunks and parsed a batch of sibling values at a time. The outer containers are built here (the
// root, an object inside it such as `{ profile }`, and arrays up to two levels down such as `nodes` and `samples`);
// everything inside them (a node, a number) is parsed by JSON.parse, many siblings per call.
import { createReadStream } from 'node:fs'
import { UsageError } from '../errors.js'

// Sibling values parsed together once their text reaches this many bytes.
const BATCH = 1 << 20

const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const COMMA = 0x2c
const QUOTE = 0x22
const BACKSLASH = 0x5c

// What each byte is to the scanner, outside strings.
const OTHER = 0
const SPACE = 1
const OPEN = 2
const CLOSE = 3
const COMMA_KIND = 4
const STRING = 5
const KIND = new Uint8Array(256)
for (const c of [0x20, 0x0a, 0x0d, 0x09]) KIND[c] = SPACE
KIND[OPEN_OBJECT] = KIND[OPEN_ARRAY] = OPEN
KIND[CLOSE_OBJECT] = KIND[CLOSE_ARRAY] = CLOSE
KIND[COMMA] = COMMA_KIND
KIND[QUOTE] = STRING

/**
 * A container being built: what is parsed of it, and the text of its members since the last batch was parsed.
 * @typedef {object} Open
 * @property {boolean} isArray
 * @property {unknown[][]} parts an array's members, a batch at a time (joined once, when it closes: appending tens of
 *   millions of numbers one by one to a growing array costs five times as much)
 * @property {Record<string, unknown>} object an object's members
 * @property {string | undefined} key its key in the object it is in
 * @property {Buffer[]} pieces
 * @property {number} length bytes in pieces
 * @property {number} memberStart where the member being read starts, in bytes of pieces
 */

/**
 * @typedef {object} State
 * @property {Open[]} stack the containers built here that are open, outermost first
 * @property {Open | undefined} top the innermost
 * @property {unknown} root
 * @property {boolean} closed the root has ended
 * @property {number} depth containers open, built here or not
 * @property {boolean} inString
 * @property {boolean} escaped
 * @property {boolean} content whether the text of `top` since its last batch holds a member, not only white space and
 *   commas
 * @property {number} offset bytes read before this chunk
 */

/**
 * Reads and parses a JSON file whose root is an object or an array, of any length.
 * @param {string} file
 * @param {string} [expected] what it should hold, for the message, e.g. 'a .cpuprofile or .heapprofile'
 * @returns {Promise<unknown>}
 */
export async function readJsonStream (file, expected) {
  const notJson = (/** @type {string} */ why) => new UsageError(`'${file}' is not JSON${expected ? ` (expected ${expected})` : ''}: ${why}`)
  /** @type {State} */
  const state = { stack: [], top: undefined, root: undefined, closed: false, depth: 0, inString: false, escaped: false, content: false, offset: 0 }
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) scan(state, chunk, notJson)
  } catch (err) {
    if (err instanceof UsageError) throw err
    const e = /** @type {NodeJS.ErrnoException} */ (err)
    // One value inside (not an array of many) longer than V8's longest string: such a file is not one hotpath writes
    // or reads.
    if (e.code === 'ERR_STRING_TOO_LONG' || e instanceof RangeError) {
      throw new UsageError(`cannot read '${file}' (${Math.round(state.offset / 1e6)} MB read): one value in it is longer than the longest string V8 can hold`)
    }
    throw new UsageError(`cannot read '${file}': ${e.code ?? e.message}`)
  }
  if (!state.closed) throw notJson(state.stack.length === 0 ? 'it is empty' : 'it ends before its last value does')
  return state.root
}

/**
 * Reads one chunk. The state is copied into locals and back: the loop runs once per byte, and a variable of an async
 * function lives on the heap.
 * @param {State} state
 * @param {Buffer} bytes
 * @param {(why: string) => Error} notJson
 */
function scan (state, bytes, notJson) {
  const { stack, offset } = state
  let { top, closed, depth, inString, escaped, content } = state
  // Where the text of `top` continues in this chunk.
  let from = 0
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (inString) {
      if (escaped) escaped = false
      else if (c === BACKSLASH) escaped = true
      else if (c === QUOTE) inString = false
      continue
    }
    const kind = KIND[c]
    if (kind === SPACE) continue
    if (kind === OTHER && content) continue
    if (closed) throw notJson(`text after the end, at byte ${offset + i}`)
    if (top === undefined && kind !== OPEN) throw notJson('it does not start with { or [')
    const direct = depth === stack.length
    if (kind === OPEN) {
      const isArray = c === OPEN_ARRAY
      if (direct && (top === undefined || (depth === 1 && !top.isArray) || (isArray && depth <= 2))) {
        let key
        if (top !== undefined) {
          add(top, bytes.subarray(from, i))
          key = openIn(top, notJson)
        }
        top = { isArray, parts: [], object: {}, key, pieces: [], length: 0, memberStart: 0 }
        stack.push(top)
        content = false
        from = i + 1
      } else {
        content = true
      }
      depth++
    } else if (kind === CLOSE) {
      depth--
      if (depth === stack.length - 1) {
        const closing = /** @type {Open} */ (top)
        if (closing.isArray !== (c === CLOSE_ARRAY)) throw notJson(`unexpected ${String.fromCharCode(c)} at byte ${offset + i}`)
        add(closing, bytes.subarray(from, i))
        flush(closing, closing.length, notJson)
        const value = closing.isArray ? join(closing.parts) : closing.object
        stack.pop()
        top = stack[stack.length - 1]
        if (top === undefined) {
          state.root = value
          closed = true
        } else if (top.isArray) {
          top.parts.push([value])
        } else {
          define(top.object, /** @type {string} */ (closing.key), value)
        }
        // Its parent's members before it were parsed when it opened.
        content = false
        from = i + 1
      }
    } else if (kind === COMMA_KIND && direct) {
      const current = /** @type {Open} */ (top)
      if (content && current.length + i - from < BATCH) {
        // The comma stays in the batch's text (added with what follows); the next member starts after it.
        current.memberStart = current.length + i - from + 1
      } else {
        // The end of a batch, or a comma after a container built here: not part of the next batch's text.
        add(current, bytes.subarray(from, i))
        flush(current, current.length, notJson)
        content = false
        from = i + 1
      }
    } else {
      if (kind === STRING) inString = true
      content = true
    }
  }
  if (top !== undefined) add(top, bytes.subarray(from))
  Object.assign(state, { top, closed, depth, inString, escaped, content, offset: offset + bytes.length })
}

/**
 * @param {Open} open
 * @param {Buffer} piece
 */
function add (open, piece) {
  if (piece.length === 0) return
  open.pieces.push(piece)
  open.length += piece.length
}

/**
 * Parses the members read so far, up to `end` bytes, into the container, and keeps what follows.
 * @param {Open} open
 * @param {number} end
 * @param {(why: string) => Error} notJson
 */
function flush (open, end, notJson) {
  const all = Buffer.concat(open.pieces, open.length)
  let text = all.subarray(0, end).toString('utf8').trim()
  if (text.endsWith(',')) text = text.slice(0, -1)
  const rest = all.subarray(end)
  open.pieces = rest.length > 0 ? [rest] : []
  open.length = rest.length
  open.memberStart = 0
  if (text === '') return
  let parsed
  try {
    parsed = JSON.parse(open.isArray ? `[${text}]` : `{${text}}`)
  } catch (err) {
    throw notJson(/** @type {Error} */ (err).message)
  }
  if (open.isArray) open.parts.push(parsed)
  else for (const [key, v] of Object.entries(parsed)) define(open.object, key, v)
}

/**
 * @param {unknown[][]} parts
 * @returns {unknown[]}
 */
function join (parts) {
  if (parts.length === 1) return parts[0]
  /** @type {unknown[]} */
  let all = []
  // In groups: a call takes only so many arguments.
  for (let i = 0; i < parts.length; i += 4096) all = all.concat(...parts.slice(i, i + 4096))
  return all
}

/**
 * A container built here opens inside `open`: the members before it are parsed first, so an array keeps its order.
 * @param {Open} open
 * @param {(why: string) => Error} notJson
 * @returns {string | undefined} its key, inside an object
 */
function openIn (open, notJson) {
  const start = open.memberStart
  const member = Buffer.concat(open.pieces, open.length).subarray(start).toString('utf8').trim()
  flush(open, start, notJson)
  open.pieces = []
  open.length = 0
  if (open.isArray) {
    if (member !== '') throw notJson(`unexpected ${member.slice(0, 20)}`)
    return undefined
  }
  let key
  try {
    key = member.endsWith(':') ? JSON.parse(member.slice(0, -1)) : undefined
  } catch {}
  if (typeof key !== 'string') throw notJson(`expected a key before a value, got ${member.slice(0, 20) || 'nothing'}`)
  return key
}

/**
 * Sets a key as JSON.parse does: `__proto__` is a key like any other, never the prototype.
 * @param {Record<string, any>} object
 * @param {string} key
 * @param {unknown} value
 */
function define (object, key, value) {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true })
}
