// Any other protocol: each write one request, and replies counted by lines while the protocol is one of lines.

import { firstWord, u8 } from './bytes.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */
/** @typedef {import('./handler.js').Handler} Handler */
/** @typedef {import('./handler.js').Protocol} Protocol */

/**
 * An unrecognised protocol: each write is taken as one request, named by its first word when it is a line of text
 * (`PING`, `GET`, `QUIT`), unnamed when binary. While every request is one line of text, each reply is taken to be one
 * line too (a home-made protocol's `GET key\n` → `value\n`), so that replies pipelined into one read are counted; a
 * request that is not one line, or a read holding more lines than requests are owed, ends the counting.
 * @implements {Handler}
 */
export class LineHandler {
  /** @type {Protocol} */
  protocol = 'tcp'
  #lines = true
  #owed = 0

  /** @param {Bytes} c */
  write (c) {
    if (this.#lines && !isOneLine(c)) this.#lines = false
    this.#owed++
    return { protocol: this.protocol, op: firstWord(c, 0), replies: 1 }
  }

  /** @param {Bytes} c */
  reads (c) {
    if (!this.#lines) return -1
    const n = countNewlines(c)
    if (n > this.#owed) {
      this.#lines = false
      return -1
    }
    this.#owed -= n
    return n
  }
}

/**
 * One line of text: ends with its only newline.
 * @param {Bytes} c
 */
function isOneLine (c) {
  const n = c.length
  if (n === 0 || u8(c, n - 1) !== 0x0a) return false
  for (let i = 0; i < n - 1; i++) {
    const b = u8(c, i)
    if (b === 0x0a || b === 0) return false
  }
  return true
}

/** @param {Bytes} c */
function countNewlines (c) {
  let n = 0
  if (typeof c === 'string') {
    for (let i = c.indexOf('\n'); i !== -1; i = c.indexOf('\n', i + 1)) n++
  } else {
    for (let i = c.indexOf(0x0a); i !== -1; i = c.indexOf(0x0a, i + 1)) n++
  }
  return n
}
