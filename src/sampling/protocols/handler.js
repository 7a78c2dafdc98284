// What every protocol's handler is to the sniffer: the shape of a handler, and the tally of the operations one write
// starts.

/** @typedef {import('./bytes.js').Bytes} Bytes */

/**
 * @typedef {'postgres' | 'mysql' | 'redis' | 'mongodb' | 'http' | 'memcached' | 'tls' | 'tcp'} Protocol
 *   `tls`: encrypted from the first byte; `tcp`: not recognised
 */

/**
 * @typedef {object} Started what a handler found in one write
 * @property {Protocol} protocol
 * @property {string | null} op
 * @property {number} replies the replies it asks for, in the unit its handler's `reads` counts (ReadyForQuery
 *   messages, RESP replies, MongoDB messages): 3 for three pipelined Redis commands
 */

/**
 * @typedef {object} Handler one protocol's reading of a connection
 * @property {Protocol} protocol
 * @property {(c: Bytes) => Started | null} write
 * @property {(c: Bytes) => number} reads replies completed by the chunk, -1 when they cannot be counted
 */

/** Counts the operations one write starts; the first one names them all. */
export class Tally {
  /** @type {string | null} */
  op = null
  replies = 0

  reset () {
    this.op = null
    this.replies = 0
  }

  /** @param {string | null} op */
  add (op) {
    if (this.replies++ === 0) this.op = op
  }

  /**
   * @param {Protocol} protocol
   * @returns {Started | null}
   */
  result (protocol) {
    return this.replies === 0 ? null : { protocol, op: this.op, replies: this.replies }
  }
}
