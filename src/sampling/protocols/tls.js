// TLS: a connection encrypted from its first byte.

import { u8 } from './bytes.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */
/** @typedef {import('./handler.js').Handler} Handler */
/** @typedef {import('./handler.js').Protocol} Protocol */

/** @param {Bytes} c */
export function isTlsHello (c) {
  return c.length >= 6 && u8(c, 0) === 0x16 && u8(c, 1) === 3 && u8(c, 2) >= 1 && u8(c, 2) <= 4 && u8(c, 5) === 1
}

/**
 * An encrypted connection: its first write opens the TLS handshake; what later ones carry cannot be read.
 * @implements {Handler}
 */
export class TlsHandler {
  /** @type {Protocol} */
  protocol = 'tls'
  #first = true

  write () {
    const op = this.#first ? 'handshake' : null
    this.#first = false
    return { protocol: this.protocol, op, replies: 1 }
  }

  reads () {
    return -1
  }
}
