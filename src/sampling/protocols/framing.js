// Length-prefixed framing, shared by PostgreSQL, MySQL and MongoDB in both directions.

import { copy } from './bytes.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */

/**
 * @callback SizeOf the size of the message whose header starts at `at`, header included; -1 when it is no message
 * @param {Bytes} c
 * @param {number} at
 * @returns {number}
 */

/**
 * @callback OnMessage
 * @param {Bytes} c holds the message's head from `start` to `end`: its first bytes, all of them or `headSize`
 * @param {number} start
 * @param {number} end
 * @param {number} size the whole message's size
 * @returns {void}
 */

/**
 * Frames one direction of a connection into messages across chunks, and hands over each message's head once it has
 * arrived, whether in one chunk or several: bytes are copied only when a head is split between chunks.
 */
export class Framer {
  #headerSize
  #headSize
  #sizeOf
  #onMessage
  #held
  #heldLength = 0
  /** size of the held message, -1 while its header is incomplete */
  #heldSize = -1
  /** bytes of the current message still to come after its head */
  #skip = 0

  /**
   * @param {number} headerSize bytes needed to know a message's size
   * @param {number} headSize bytes of each message handed to onMessage
   * @param {SizeOf} sizeOf
   * @param {OnMessage} onMessage
   */
  constructor (headerSize, headSize, sizeOf, onMessage) {
    this.#headerSize = headerSize
    this.#headSize = headSize
    this.#sizeOf = sizeOf
    this.#onMessage = onMessage
    this.#held = Buffer.alloc(headSize)
  }

  /**
   * @param {Bytes} c
   * @returns {boolean} false when the bytes are not messages of this protocol
   */
  feed (c) {
    const n = c.length
    let i = Math.min(this.#skip, n)
    this.#skip -= i
    if (i < n && this.#heldLength > 0) {
      i = this.#fill(c, i)
      if (i < 0) return false
    }
    while (i < n) {
      const left = n - i
      if (left < this.#headerSize) return this.#hold(c, i, -1)
      const size = this.#sizeOf(c, i)
      if (size < this.#headerSize) return false
      const head = Math.min(size, this.#headSize)
      if (left < head) return this.#hold(c, i, size)
      this.#onMessage(c, i, i + head, size)
      if (left < size) {
        this.#skip = size - left
        return true
      }
      i += size
    }
    return true
  }

  /**
   * @param {Bytes} c
   * @param {number} i
   * @param {number} size
   */
  #hold (c, i, size) {
    copy(c, i, c.length, this.#held, 0)
    this.#heldLength = c.length - i
    this.#heldSize = size
    return true
  }

  /**
   * Completes the held head from the chunk.
   * @param {Bytes} c
   * @param {number} i
   * @returns {number} where the chunk's next message starts, or -1 when the held one is no message
   */
  #fill (c, i) {
    const n = c.length
    if (this.#heldSize < 0) {
      i = this.#take(c, i, this.#headerSize)
      if (this.#heldLength < this.#headerSize) return i
      this.#heldSize = this.#sizeOf(this.#held, 0)
      if (this.#heldSize < this.#headerSize) return -1
    }
    const head = Math.min(this.#heldSize, this.#headSize)
    i = this.#take(c, i, head)
    if (this.#heldLength < head) return i
    const rest = this.#heldSize - head
    this.#heldLength = 0
    this.#heldSize = -1
    this.#onMessage(this.#held, 0, head, head + rest)
    const skipped = Math.min(rest, n - i)
    this.#skip = rest - skipped
    return i + skipped
  }

  /**
   * Copies bytes from the chunk until `length` are held.
   * @param {Bytes} c
   * @param {number} i
   * @param {number} length
   */
  #take (c, i, length) {
    const k = Math.min(length - this.#heldLength, c.length - i)
    copy(c, i, i + k, this.#held, this.#heldLength)
    this.#heldLength += k
    return i + k
  }
}

/**
 * Whether the chunk is one or more whole messages, each of which `sizeOf` accepts.
 * @param {Bytes} c
 * @param {SizeOf} sizeOf
 */
export function tiles (c, sizeOf) {
  let i = 0
  for (let k = 0; k < 16 && i < c.length; k++) {
    if (c.length - i < 5) return false
    const size = sizeOf(c, i)
    if (size < 5 || i + size > c.length) return false
    i += size
  }
  return true
}
