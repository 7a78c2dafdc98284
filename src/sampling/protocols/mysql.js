// MySQL (client/server protocol 4.1+).

import { find, i32le, u24le, u8 } from './bytes.js'
import { Framer } from './framing.js'
import { Tally } from './handler.js'
import { RecentSql, SQL_BYTES, STATEMENTS_PER_CONNECTION } from './sql.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */
/** @typedef {import('./framing.js').OnMessage} OnMessage */
/** @typedef {import('./framing.js').SizeOf} SizeOf */
/** @typedef {import('./handler.js').Handler} Handler */
/** @typedef {import('./handler.js').Protocol} Protocol */

const MYSQL_PROTOCOL_41 = 0x200
const MYSQL_COMPRESS = 0x20
const MYSQL_SSL = 0x800
const MYSQL_QUERY_ATTRIBUTES = 0x8000000
const MYSQL_QUERY = 0x03
const MYSQL_PREPARE = 0x16
const MYSQL_EXECUTE = 0x17
const MYSQL_LONG_DATA = 0x18
const MYSQL_CLOSE = 0x19
const MYSQL_QUIT = 0x01
/** Commands other than queries and statements, by their byte; those the server answers. */
const MYSQL_COMMANDS = new Map([
  [0x02, 'USE'], [0x04, 'FIELD_LIST'], [0x05, 'CREATE_DB'], [0x06, 'DROP_DB'], [0x07, 'REFRESH'], [0x08, 'SHUTDOWN'],
  [0x09, 'STATISTICS'], [0x0a, 'PROCESS_INFO'], [0x0c, 'KILL'], [0x0d, 'DEBUG'], [0x0e, 'PING'], [0x11, 'CHANGE_USER'],
  [0x12, 'BINLOG_DUMP'], [0x1a, 'STMT_RESET'], [0x1b, 'SET_OPTION'], [0x1c, 'STMT_FETCH'], [0x1e, 'BINLOG_DUMP_GTID'],
  [0x1f, 'RESET_CONNECTION']
])
const MYSQL_KNOWN = new Set([MYSQL_QUERY, MYSQL_PREPARE, MYSQL_EXECUTE, MYSQL_LONG_DATA, MYSQL_CLOSE, MYSQL_QUIT,
  ...MYSQL_COMMANDS.keys()])
const MYSQL_LONG_PACKET = 0xffffff

/** @type {SizeOf} */
function mysqlPacketSize (c, at) {
  return u24le(c, at) + 4
}

/** @type {SizeOf} a command packet: sequence 0 and a known command byte */
export function mysqlCommandSize (c, at) {
  const length = u24le(c, at)
  return length >= 1 && u8(c, at + 3) === 0 && MYSQL_KNOWN.has(u8(c, at + 4)) ? length + 4 : -1
}

/**
 * The client's HandshakeResponse41 or SSLRequest: sequence 1, the 4.1 capability and 23 zero bytes of filler.
 * @param {Bytes} c
 */
export function isMysqlHandshake (c) {
  if (c.length < 36 || u8(c, 3) !== 1 || u24le(c, 0) < 32) return false
  if ((i32le(c, 4) & MYSQL_PROTOCOL_41) === 0) return false
  for (let i = 13; i < 36; i++) if (u8(c, i) !== 0) return false
  return true
}

/**
 * The server's first packet, which MySQL sends before the client says anything: protocol version 10, then the
 * server's version as text.
 * @param {Bytes} c
 */
export function isMysqlGreeting (c) {
  if (c.length < 10 || u8(c, 3) !== 0 || u8(c, 4) !== 10 || u24le(c, 0) > 1024) return false
  return u8(c, 5) >= 0x30 && u8(c, 5) <= 0x39 && find(c, 0, 5, Math.min(c.length, 5 + 64)) > 0
}

/**
 * Names MySQL commands. A prepared statement is executed by id, which only the server's answer to the PREPARE
 * tells: the answers are framed to learn it, though they are not counted (their shape depends on the command and on
 * capabilities negotiated at the handshake).
 * @implements {Handler}
 */
export class MysqlHandler {
  /** @type {Protocol} */
  protocol = 'mysql'
  #commandSeen = false
  /** the previous packet was full: the next continues its command */
  #continued = false
  #opaque = false
  #capabilities = 0
  /** @type {string | null} the SQL of a PREPARE whose answer has not been read yet */
  #preparing = null
  /** @type {Map<number, string>} statement id → its folded SQL */
  #statements = new Map()
  #sql = new RecentSql()
  #tally = new Tally()
  #in = new Framer(4, 9, mysqlPacketSize, (c, start, end, size) => this.#reply(c, start, end, size))
  #out = new Framer(4, 4 + 1 + 2 + SQL_BYTES, mysqlPacketSize,
    (c, start, end, size) => this.#packet(c, start, end, size))

  /** @param {boolean} atStart whether the handshake comes next (else the connection is seen after it) */
  constructor (atStart) {
    this.#commandSeen = !atStart
  }

  /** @param {Bytes} c */
  write (c) {
    if (this.#opaque) return { protocol: this.protocol, op: null, replies: 1 }
    this.#tally.reset()
    if (!this.#out.feed(c)) this.#opaque = true
    return this.#tally.result(this.protocol)
  }

  /** @param {Bytes} c */
  reads (c) {
    if (!this.#opaque && !this.#in.feed(c)) this.#opaque = true
    return -1
  }

  /** @type {OnMessage} */
  #packet (c, start, end, size) {
    const length = size - 4
    const continued = this.#continued
    this.#continued = length === MYSQL_LONG_PACKET
    if (continued) return
    const sequence = u8(c, start + 3)
    if (sequence !== 0) {
      // Before the first command, the handshake and the authentication exchange; after it, packets of a command
      // under way (the file of LOAD DATA LOCAL, a CHANGE_USER's authentication).
      if (!this.#commandSeen) this.#handshake(c, start, end, sequence, length)
      return
    }
    this.#commandSeen = true
    if (length === 0) return
    const command = u8(c, start + 4)
    const body = start + 5
    const sqlEnd = Math.min(end, body + SQL_BYTES)
    if (command === MYSQL_QUERY) this.#tally.add(this.#query(c, body, sqlEnd))
    else if (command === MYSQL_PREPARE) {
      this.#preparing = this.#sql.fold(c, body, sqlEnd)
      this.#tally.add(`PREPARE ${this.#preparing}`)
    } else if (command === MYSQL_EXECUTE) this.#tally.add(this.#statements.get(i32le(c, body)) ?? 'EXECUTE')
    else if (command === MYSQL_CLOSE) this.#statements.delete(i32le(c, body))
    else if (command !== MYSQL_QUIT && command !== MYSQL_LONG_DATA) this.#tally.add(MYSQL_COMMANDS.get(command) ?? null)
  }

  /**
   * @param {Bytes} c
   * @param {number} start
   * @param {number} end
   * @param {number} sequence
   * @param {number} length
   */
  #handshake (c, start, end, sequence, length) {
    if (sequence === 1 && end - start >= 8) {
      this.#capabilities = i32le(c, start + 4)
      const ssl = length === 32 && (this.#capabilities & MYSQL_SSL) !== 0
      // After an SSLRequest the handshake goes on in TLS; compressed packets have other headers
      if (ssl || (this.#capabilities & MYSQL_COMPRESS) !== 0) this.#opaque = true
      this.#tally.add(ssl ? 'SSLRequest' : 'handshake')
    } else {
      this.#tally.add('auth')
    }
  }

  /**
   * A COM_QUERY's SQL, after its query attributes when the connection sends them.
   * @param {Bytes} c
   * @param {number} body
   * @param {number} end
   */
  #query (c, body, end) {
    if ((this.#capabilities & MYSQL_QUERY_ATTRIBUTES) !== 0) {
      // parameter count and parameter set count (both small); with parameters, the SQL comes after their values
      if (u8(c, body) !== 0) return null
      body += 2
    }
    return this.#sql.fold(c, body, end)
  }

  /** @type {OnMessage} */
  #reply (c, start, end) {
    if (this.#preparing === null || u8(c, start + 3) !== 1) return
    // The first packet of the answer to a PREPARE: STMT_PREPARE_OK (0x00, statement id, …) or an error
    if (u8(c, start + 4) === 0 && end - start >= 9) {
      if (this.#statements.size >= STATEMENTS_PER_CONNECTION) this.#statements.clear()
      this.#statements.set(i32le(c, start + 5), this.#preparing)
    }
    this.#preparing = null
  }
}
