// The sniffer of one client connection: it finds the connection's protocol from its first writes (detect.js), then
// hands each chunk to that protocol's handler, and pairs the replies the handler counts with the operations it named.

import { detect } from './detect.js'
import { LineHandler } from './line.js'
import { MysqlHandler, isMysqlGreeting } from './mysql.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */
/** @typedef {import('./handler.js').Handler} Handler */
/** @typedef {import('./handler.js').Protocol} Protocol */

/**
 * @typedef {object} Operation what one write of a client asks its server
 * @property {Protocol} protocol
 * @property {string | null} op the operation, in words fit to group by: `SELECT … FROM sessions WHERE id = $1`,
 *   `GET`, `GET ×3`, `find sessions`, `GET /price/:id`, `startup`; null when it cannot be named (an unknown binary
 *   protocol, encrypted bytes)
 */

/** Writes of an unrecognised connection that may still reveal a protocol (a driver that first says `PING`). */
const LATE_DETECTION_WRITES = 3

/** Unanswered operations followed per connection: past this, a server that does not answer is not counted. */
const MAX_UNANSWERED = 10000

/**
 * A sniffer for one new client connection.
 * @returns {Sniffer}
 */
export function createSniffer () {
  return new Sniffer()
}

/** Watches one client connection: what each write asks, and which reads answer it. */
export class Sniffer {
  /** @type {Handler | null} */
  #handler = null
  #writes = 0
  /** replies still owed to each unanswered operation, oldest first from #first */
  #owed = /** @type {number[]} */ ([])
  #first = 0
  #uncounted = false

  /**
   * Called with each chunk the client writes, in order.
   * @param {Uint8Array | string} chunk
   * @returns {Operation | null} what the chunk starts; null when it starts nothing the server answers: the rest of a
   *   message written earlier, the Bind/Execute/Sync that follow a PostgreSQL Parse, a message that gets no reply
   *   (PostgreSQL Terminate, MySQL COM_QUIT, a MongoDB message flagged moreToCome)
   */
  write (chunk) {
    try {
      const c = bytesOf(chunk)
      if (c === null || c.length === 0) return null
      this.#writes++
      if (this.#handler === null || (this.#handler instanceof LineHandler && this.#writes <= LATE_DETECTION_WRITES)) {
        const found = detect(c)
        if (this.#handler === null || !(found instanceof LineHandler)) this.#handler = found
      }
      const started = this.#handler.write(c)
      if (started === null) return null
      if (!this.#uncounted) {
        if (this.#owed.length - this.#first >= MAX_UNANSWERED) this.#stopCounting()
        else this.#owed.push(started.replies)
      }
      return { protocol: started.protocol, op: started.op }
    } catch {
      return null
    }
  }

  /**
   * Called with each chunk read from the server, in order.
   * @param {Uint8Array | string} chunk
   * @returns {number} how many of the operations `write` returned the chunk completes the answers to, oldest first
   *   (a write of three pipelined Redis commands is answered by its third reply); -1 when that cannot be told: a
   *   protocol whose replies are not counted (MySQL, HTTP, memcached, TLS, unknown ones), bytes read before the
   *   client wrote any, a Redis connection in subscribe or monitor mode, or bytes that do not parse — after which
   *   it stays -1
   */
  reads (chunk) {
    try {
      const c = bytesOf(chunk)
      if (c === null) return -1
      if (this.#handler === null && this.#writes === 0 && isMysqlGreeting(c)) this.#handler = new MysqlHandler(true)
      if (this.#handler === null) return -1
      const replies = this.#handler.reads(c)
      if (replies < 0 || this.#uncounted) {
        this.#stopCounting()
        return -1
      }
      return this.#answer(replies)
    } catch {
      this.#stopCounting()
      return -1
    }
  }

  /** @returns {Protocol | null} the connection's protocol, null until its client writes */
  protocol () {
    return this.#handler?.protocol ?? null
  }

  /**
   * Pays replies to the oldest operations; replies nobody is owed (to writes made before the sniffer) are dropped.
   * @param {number} replies
   */
  #answer (replies) {
    const owed = this.#owed
    let done = 0
    while (replies > 0 && this.#first < owed.length) {
      const due = owed[this.#first]
      if (replies < due) {
        owed[this.#first] = due - replies
        break
      }
      replies -= due
      this.#first++
      done++
    }
    if (this.#first === owed.length) {
      owed.length = 0
      this.#first = 0
    } else if (this.#first > 64) {
      owed.splice(0, this.#first)
      this.#first = 0
    }
    return done
  }

  #stopCounting () {
    this.#uncounted = true
    this.#owed.length = 0
    this.#first = 0
  }
}

/**
 * @param {unknown} chunk
 * @returns {Bytes | null}
 */
function bytesOf (chunk) {
  if (typeof chunk === 'string') {
    // A non-ASCII string has to be encoded to find byte offsets; an ASCII one (nearly all) is read as it is.
    return Buffer.byteLength(chunk) === chunk.length ? chunk : Buffer.from(chunk)
  }
  if (Buffer.isBuffer(chunk)) return chunk
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  return null
}
