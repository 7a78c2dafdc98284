// PostgreSQL (frontend/backend protocol 3).

import { find, i32be, isAlnum, latin1, rest, u8 } from './bytes.js'
import { Framer } from './framing.js'
import { Tally } from './handler.js'
import { RecentSql, SQL_BYTES, STATEMENTS_PER_CONNECTION } from './sql.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */
/** @typedef {import('./framing.js').OnMessage} OnMessage */
/** @typedef {import('./framing.js').SizeOf} SizeOf */
/** @typedef {import('./handler.js').Handler} Handler */
/** @typedef {import('./handler.js').Protocol} Protocol */

const PG_SSL_REQUEST = 80877103
const PG_GSSENC_REQUEST = 80877104
const PG_CANCEL_REQUEST = 80877102
/** Type bytes of the messages a client sends after its startup (a table: this runs for every message). */
const PG_FRONTEND = new Uint8Array(256)
for (const ch of 'BCcDdEFfHPpQSX') PG_FRONTEND[ch.charCodeAt(0)] = 1
/** Authentication requests (the 'R' message's code) that wait for a client's answer: each ends a round trip. */
const PG_AUTH_REQUESTS = new Set([2, 3, 5, 7, 8, 9, 10, 11])
const PG_MAX_MESSAGE = 1 << 30

/** @type {SizeOf} */
export function postgresMessageSize (c, at) {
  if (PG_FRONTEND[u8(c, at)] !== 1) return -1
  const length = i32be(c, at + 1)
  return length >= 4 && length <= PG_MAX_MESSAGE ? length + 1 : -1
}

/** @type {SizeOf} */
function postgresReplySize (c, at) {
  const type = u8(c, at)
  const length = i32be(c, at + 1)
  return isAlnum(type) && length >= 4 && length <= PG_MAX_MESSAGE ? length + 1 : -1
}

/** @param {Bytes} c */
export function isPostgresStartup (c) {
  if (c.length < 8) return false
  const length = i32be(c, 0)
  const code = i32be(c, 4)
  return length >= 8 && length <= 10000 &&
    (code >>> 16 === 3 || code === PG_SSL_REQUEST || code === PG_GSSENC_REQUEST || code === PG_CANCEL_REQUEST)
}

/**
 * Names PostgreSQL operations: a simple Query is one, and so is each extended-protocol batch, from its first Parse or
 * Bind to its Sync, since the server answers both with one ReadyForQuery. Replies are the ReadyForQuery messages,
 * plus the authentication requests and the one-byte answer to an SSLRequest, which end the start-up's round trips.
 * @implements {Handler}
 */
export class PostgresHandler {
  /** @type {Protocol} */
  protocol = 'postgres'
  #untyped
  #inBatch = false
  /** the connection is encrypted from here on, or its bytes stopped making sense */
  #opaque = false
  /** one-byte answers the server owes to SSLRequest/GSSENCRequest */
  #answers = 0
  #counting = true
  #count = 0
  /** @type {Map<string, string>} statement name → its folded SQL */
  #statements = new Map()
  /** the unnamed statement's folded SQL, which most drivers parse before every query */
  #unnamed = 'EXECUTE'
  #sql = new RecentSql()
  #tally = new Tally()
  #out
  #in

  /** @param {boolean} atStart whether the connection's first message (untyped) comes next */
  constructor (atStart) {
    this.#untyped = atStart
    this.#out = new Framer(5, 5 + 64 + SQL_BYTES,
      (c, at) => this.#untyped ? startupSize(c, at) : postgresMessageSize(c, at),
      (c, start, end, size) => this.#message(c, start, end, size))
    this.#in = new Framer(5, 9, postgresReplySize, (c, start, end, size) => this.#reply(c, start, end, size))
    // Seen mid-connection, ReadyForQuery of a batch begun earlier would be counted against the next one.
    this.#counting = atStart
  }

  /** @param {Bytes} c */
  write (c) {
    if (this.#opaque) return { protocol: this.protocol, op: null, replies: 1 }
    this.#tally.reset()
    if (!this.#out.feed(c)) {
      this.#opaque = true
      this.#counting = false
      return { protocol: this.protocol, op: this.#tally.op, replies: Math.max(1, this.#tally.replies) }
    }
    return this.#tally.result(this.protocol)
  }

  /** @param {Bytes} c */
  reads (c) {
    if (!this.#counting) return -1
    this.#count = 0
    let i = 0
    while (this.#answers > 0 && i < c.length) {
      const answer = u8(c, i)
      if (answer !== 0x53 && answer !== 0x47 && answer !== 0x4e) break // an old server's ErrorResponse instead
      i++
      this.#answers--
      this.#count++
      // 'S' and 'G': TLS or GSS encryption follows, on this socket
      if (answer !== 0x4e) {
        this.#counting = false
        return this.#count
      }
    }
    if (!this.#in.feed(i === 0 ? c : rest(c, i))) {
      this.#counting = false
      return -1
    }
    return this.#count
  }

  /** @type {OnMessage} */
  #message (c, start, end, size) {
    if (this.#untyped) return this.#startup(c, start)
    const type = u8(c, start)
    const body = start + 5
    switch (type) {
      case 0x51: // Q: simple query — its SQL ends where the message does, with a NUL
        this.#tally.add(this.#sql.fold(c, body, Math.min(start + size - 1, body + SQL_BYTES)))
        break
      case 0x50: { // P: Parse — statement name, SQL
        const nameEnd = find(c, 0, body, end)
        if (nameEnd < 0) return this.#begin('Parse')
        const sqlEnd = find(c, 0, nameEnd + 1, Math.min(end, nameEnd + 1 + SQL_BYTES))
        const sql = this.#sql.fold(c, nameEnd + 1, sqlEnd < 0 ? Math.min(end, nameEnd + 1 + SQL_BYTES) : sqlEnd)
        this.#remember(nameEnd === body ? '' : latin1(c, body, nameEnd), sql)
        return this.#begin(sql)
      }
      case 0x42: { // B: Bind — portal name, statement name
        if (this.#inBatch) return
        const portalEnd = find(c, 0, body, end)
        const nameEnd = portalEnd < 0 ? -1 : find(c, 0, portalEnd + 1, end)
        if (nameEnd === portalEnd + 1) return this.#begin(this.#unnamed)
        const name = nameEnd < 0 ? null : latin1(c, portalEnd + 1, nameEnd)
        return this.#begin((name === null ? undefined : this.#statements.get(name)) ?? 'EXECUTE')
      }
      case 0x53: // S: Sync ends a batch; alone it still gets its ReadyForQuery
        if (this.#inBatch) this.#inBatch = false
        else this.#tally.add('Sync')
        break
      case 0x43: // C: Close — a closed statement's name may be reused for other SQL
        if (u8(c, body) === 0x53) {
          const nameEnd = find(c, 0, body + 1, end)
          if (nameEnd > 0) this.#statements.delete(latin1(c, body + 1, nameEnd))
        }
        break
      case 0x46: // F: FunctionCall
        this.#tally.add('function call')
        break
      case 0x70: // p: password, SASL or GSS response
        this.#tally.add('auth')
        break
      // X (Terminate) gets no reply; D, E, H and the COPY messages belong to the batch or query under way
    }
  }

  /**
   * @param {Bytes} c
   * @param {number} start
   */
  #startup (c, start) {
    const code = i32be(c, start + 4)
    if (code === PG_SSL_REQUEST || code === PG_GSSENC_REQUEST) {
      this.#answers++
      this.#tally.add(code === PG_SSL_REQUEST ? 'SSLRequest' : 'GSSENCRequest')
    } else if (code >>> 16 === 3) {
      this.#untyped = false
      this.#tally.add('startup')
    }
    // CancelRequest: the server closes the connection without a word
  }

  /** @param {string} op */
  #begin (op) {
    if (this.#inBatch) return
    this.#inBatch = true
    this.#tally.add(op)
  }

  /**
   * @param {string} name
   * @param {string} sql
   */
  #remember (name, sql) {
    if (name === '') {
      this.#unnamed = sql
      return
    }
    if (this.#statements.size >= STATEMENTS_PER_CONNECTION) this.#statements.clear()
    this.#statements.set(name, sql)
  }

  /** @type {OnMessage} */
  #reply (c, start, end) {
    const type = u8(c, start)
    if (type === 0x5a) this.#count++ // Z: ReadyForQuery
    else if (type === 0x52 && end - start >= 9 && PG_AUTH_REQUESTS.has(i32be(c, start + 5))) this.#count++
  }
}

/** @type {SizeOf} */
function startupSize (c, at) {
  const length = i32be(c, at)
  return length >= 8 && length <= 10000 ? length : -1
}
