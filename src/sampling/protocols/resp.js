// Reading RESP (Redis's serialisation, 2 and 3) as a stream: header lines, the CRLF ending bulk strings, and the count
// of the complete top-level replies a server sends.

import { CR, LF, find, isDigit, u8 } from './bytes.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */

/** Longest line of text (an inline command, a simple string or error) before the bytes are taken for garbage. */
export const RESP_LINE = 65536

/**
 * Whether the CRLF that ends a bulk string is where its length says, for the part of it within the `k` bytes read
 * from `i` with `skip` bytes of the string left: a client or server out of step with us is caught at once.
 * @param {Bytes} c
 * @param {number} i
 * @param {number} k
 * @param {number} skip
 */
export function endsWell (c, i, k, skip) {
  const cr = i + skip - 2
  if (cr >= i && cr < i + k && u8(c, cr) !== CR) return false
  return !(cr + 1 >= i && cr + 1 < i + k && u8(c, cr + 1) !== LF)
}

/** Reads a RESP header line — `*3\r\n`, `$-1\r\n` — across chunks, a byte at a time (they are a few bytes long). */
export class LineNumber {
  type = 0
  value = 0
  done = false
  #digits = 0
  #negative = false

  /** @param {number} type */
  start (type) {
    this.type = type
    this.value = 0
    this.done = false
    this.#digits = 0
    this.#negative = false
  }

  reset () {
    this.type = 0
    this.done = false
  }

  /**
   * @param {Bytes} c
   * @param {number} i
   * @returns {number} where reading stopped: after the line's LF or at the chunk's end; -1 when it is no number
   */
  read (c, i) {
    for (; i < c.length; i++) {
      const b = u8(c, i)
      if (isDigit(b) && this.#digits < 12) {
        this.value = this.value * 10 + b - 0x30
        this.#digits++
      } else if (b === 0x2d && this.#digits === 0 && !this.#negative) {
        this.#negative = true
      } else if (b === LF && this.#digits > 0) {
        if (this.#negative) this.value = -this.value
        this.done = true
        return i + 1
      } else if (b !== CR) {
        return -1
      }
    }
    return i
  }
}

const RESP_SIMPLE = new Set([...'+-:_#,('].map(ch => ch.charCodeAt(0)))
const RESP_BULK = new Set([...'$!='].map(ch => ch.charCodeAt(0)))
const RESP_AGGREGATE = new Set([...'*~>%|'].map(ch => ch.charCodeAt(0)))
const RESP_PUSH = 0x3e
const RESP_MAP = 0x25
const RESP_ATTRIBUTE = 0x7c
const RESP_DEPTH = 64

/**
 * Counts complete top-level replies in a stream of RESP2/RESP3 bytes, nested aggregates included; RESP3 pushes and
 * attributes are not replies to a command. Bulk strings are skipped by their length.
 */
export class RespCounter {
  /** elements left in each open aggregate; negative for an attribute, which is no element of its parent */
  #open = /** @type {number[]} */ ([])
  #skip = 0
  #simple = false
  /** bytes the simple value may still take before its line ends */
  #lineLeft = 0
  /** type of the top-level value being read */
  #top = 0
  #count = 0
  #line = new LineNumber()

  /**
   * @param {Bytes} c
   * @returns {number} replies completed, -1 when the bytes are no RESP
   */
  count (c) {
    this.#count = 0
    const n = c.length
    let i = 0
    while (i < n) {
      if (this.#skip > 0) {
        const k = Math.min(this.#skip, n - i)
        if (!endsWell(c, i, k, this.#skip)) return -1
        this.#skip -= k
        i += k
        if (this.#skip === 0) this.#ended()
      } else if (this.#simple) {
        const lf = find(c, LF, i, Math.min(n, i + this.#lineLeft))
        if (lf < 0) {
          this.#lineLeft -= n - i
          return this.#lineLeft > 0 ? this.#count : -1
        }
        this.#simple = false
        i = lf + 1
        this.#ended()
      } else if (this.#line.type === 0) {
        const type = u8(c, i++)
        if (this.#open.length === 0) this.#top = type
        if (RESP_SIMPLE.has(type)) {
          this.#simple = true
          this.#lineLeft = RESP_LINE
        } else if (RESP_BULK.has(type) || RESP_AGGREGATE.has(type)) this.#line.start(type)
        else return -1
      } else {
        i = this.#line.read(c, i)
        if (i < 0) return -1
        if (this.#line.done && !this.#header()) return -1
      }
    }
    return this.#count
  }

  #header () {
    const { type, value } = this.#line
    this.#line.reset()
    if (RESP_BULK.has(type)) {
      if (value < 0) this.#ended()
      else this.#skip = value + 2
      return true
    }
    const elements = type === RESP_MAP || type === RESP_ATTRIBUTE ? value * 2 : value
    if (elements <= 0) {
      if (type !== RESP_ATTRIBUTE) this.#ended()
      return true
    }
    if (this.#open.length >= RESP_DEPTH) return false
    this.#open.push(type === RESP_ATTRIBUTE ? -elements : elements)
    return true
  }

  /** A value has been read: it may complete its parents, and a top-level reply. */
  #ended () {
    const open = this.#open
    while (open.length > 0) {
      const last = open.length - 1
      const left = open[last]
      if (left > 1) {
        open[last] = left - 1
        return
      }
      if (left < -1) {
        open[last] = left + 1
        return
      }
      open.pop()
      // An attribute annotates the value that follows it, which is read next at the same level
      if (left < 0) return
    }
    if (this.#top !== RESP_PUSH && this.#top !== RESP_ATTRIBUTE) this.#count++
  }
}
