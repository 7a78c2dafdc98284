// Recognises what an app's outgoing client sockets ask their servers — a query, a command, a request — from the
// bytes the client writes, with no knowledge of any driver: only the wire protocols of PostgreSQL, MySQL, Redis,
// MongoDB, HTTP/1.x and memcached, and a fallback for any other line protocol. The probe calls it on every write of
// every client socket of the user's server, so each write costs a few byte reads: payloads are skipped by their
// length, never scanned, and only the few hundred bytes that name an operation are decoded.

/**
 * @typedef {'postgres' | 'mysql' | 'redis' | 'mongodb' | 'http' | 'memcached' | 'tls' | 'tcp'} Protocol
 *   `tls`: encrypted from the first byte; `tcp`: not recognised
 */

/**
 * @typedef {object} Operation what one write of a client asks its server
 * @property {Protocol} protocol
 * @property {string | null} op the operation, in words fit to group by: `SELECT … FROM sessions WHERE id = $1`,
 *   `GET`, `GET ×3`, `find sessions`, `GET /price/:id`, `startup`; null when it cannot be named (an unknown binary
 *   protocol, encrypted bytes)
 */

/** Bytes of SQL decoded per statement: enough to reach the FROM of a long ORM select list. */
const SQL_BYTES = 1024
/** Folded statements cached per process, keyed by their raw text; cleared when full. */
const FOLD_CACHE_SIZE = 500
/** Prepared statements remembered per connection; forgotten all at once when full. */
const STATEMENTS_PER_CONNECTION = 200
/** Writes of an unrecognised connection that may still reveal a protocol (a driver that first says `PING`). */
const LATE_DETECTION_WRITES = 3
/** Longest command name, Redis key word or line-protocol word kept. */
const WORD_LENGTH = 32
/** Statements remembered by their bytes per connection. */
const RECENT_SQL = 8
/** Unanswered operations followed per connection: past this, a server that does not answer is not counted. */
const MAX_UNANSWERED = 10000

/**
 * A connection's chunk: a Buffer, or a string whose chars are all ASCII, so that char offsets are byte offsets.
 * @typedef {Buffer | string} Bytes
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

/**
 * The protocol of a connection, from the first bytes its client writes. The strictest signatures come first.
 * @param {Bytes} c
 * @returns {Handler}
 */
function detect (c) {
  if (isTlsHello(c)) return new TlsHandler()
  if (isMongoRequest(c)) return new MongoHandler()
  if (isPostgresStartup(c)) return new PostgresHandler(true)
  if (isMysqlHandshake(c)) return new MysqlHandler(true)
  if (isRespArray(c)) return new RedisHandler()
  if (httpRequest(c, true) !== null) return new HttpHandler()
  if (isMemcachedCommand(c)) return new MemcachedHandler()
  // A connection seen after its start: messages that exactly fill the write
  if (tiles(c, postgresMessageSize)) return new PostgresHandler(false)
  if (tiles(c, mysqlCommandSize)) return new MysqlHandler(false)
  return new LineHandler()
}

/** Counts the operations one write starts; the first one names them all. */
class Tally {
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

// ---------------------------------------------------------------------------------------------------------------
// Length-prefixed framing, shared by PostgreSQL, MySQL and MongoDB in both directions

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
class Framer {
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
function tiles (c, sizeOf) {
  let i = 0
  for (let k = 0; k < 16 && i < c.length; k++) {
    if (c.length - i < 5) return false
    const size = sizeOf(c, i)
    if (size < 5 || i + size > c.length) return false
    i += size
  }
  return true
}

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL (frontend/backend protocol 3)

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
function postgresMessageSize (c, at) {
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
function isPostgresStartup (c) {
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
class PostgresHandler {
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

// ---------------------------------------------------------------------------------------------------------------
// MySQL (client/server protocol 4.1+)

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
function mysqlCommandSize (c, at) {
  const length = u24le(c, at)
  return length >= 1 && u8(c, at + 3) === 0 && MYSQL_KNOWN.has(u8(c, at + 4)) ? length + 4 : -1
}

/**
 * The client's HandshakeResponse41 or SSLRequest: sequence 1, the 4.1 capability and 23 zero bytes of filler.
 * @param {Bytes} c
 */
function isMysqlHandshake (c) {
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
function isMysqlGreeting (c) {
  if (c.length < 10 || u8(c, 3) !== 0 || u8(c, 4) !== 10 || u24le(c, 0) > 1024) return false
  return u8(c, 5) >= 0x30 && u8(c, 5) <= 0x39 && find(c, 0, 5, Math.min(c.length, 5 + 64)) > 0
}

/**
 * Names MySQL commands. A prepared statement is executed by id, which only the server's answer to the PREPARE
 * tells: the answers are framed to learn it, though they are not counted (their shape depends on the command and on
 * capabilities negotiated at the handshake).
 * @implements {Handler}
 */
class MysqlHandler {
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

// ---------------------------------------------------------------------------------------------------------------
// Redis (RESP2 and RESP3)

const CR = 0x0d
const LF = 0x0a
const STAR = 0x2a
const DOLLAR = 0x24
/** Commands named with their first argument: `CLIENT SETNAME`, `CONFIG GET`. */
const REDIS_CONTAINERS = new Set(['ACL', 'CLIENT', 'CLUSTER', 'COMMAND', 'CONFIG', 'FUNCTION', 'LATENCY', 'MEMORY',
  'MODULE', 'OBJECT', 'PUBSUB', 'SCRIPT', 'SLOWLOG', 'XGROUP', 'XINFO'])
/** Longest line of text (an inline command, a simple string or error) before the bytes are taken for garbage. */
const RESP_LINE = 65536
/** Command names kept per write to name a pipeline. */
const REDIS_NAMES_KEPT = 64
/** After these, the server sends messages no command asked for, or stops answering: replies cannot be paired. */
const REDIS_UNPAIRED = new Set(['SUBSCRIBE', 'PSUBSCRIBE', 'SSUBSCRIBE', 'MONITOR', 'CLIENT REPLY'])

/** @param {Bytes} c */
function isRespArray (c) {
  if (u8(c, 0) !== STAR) return false
  let i = 1
  while (i < c.length && i < 12 && isDigit(u8(c, i))) i++
  return i > 1 && u8(c, i) === CR && u8(c, i + 1) === LF && (i + 2 === c.length || u8(c, i + 2) === DOLLAR)
}

/**
 * Names Redis commands, which clients send as arrays of bulk strings (or as inline text), often many in one write
 * (pipelines, MULTI … EXEC), and sometimes one command over several writes: the requests are parsed as a stream,
 * reading only the headers and the first one or two arguments, and skipping values by their length.
 * @implements {Handler}
 */
class RedisHandler {
  /** @type {Protocol} */
  protocol = 'redis'
  /** bulk strings left in the command being read */
  #args = 0
  /** index of the next one */
  #arg = 0
  /** bytes left in the bulk string being read, its CRLF included */
  #skip = 0
  /** the bulk string names the command: its first bytes are kept */
  #capturing = false
  #captured = ''
  #name = ''
  #inline = false
  /** bytes the inline command may still take before its line ends */
  #lineLeft = 0
  #line = new LineNumber()
  /** @type {string[]} the first commands named in the current write, up to REDIS_NAMES_KEPT */
  #names = []
  /** commands named in the current write */
  #named = 0
  /** not all of them the same */
  #mixed = false
  #replies = new RespCounter()
  #counting = true

  /** @param {Bytes} c */
  write (c) {
    this.#named = 0
    this.#mixed = false
    if (!this.#parse(c)) {
      // Out of step with the client: parse afresh from its next write, and count replies no more
      this.#counting = false
      this.#reset()
      return { protocol: this.protocol, op: this.#named > 0 ? this.#summary() : null, replies: 1 }
    }
    if (this.#named === 0) return null
    return { protocol: this.protocol, op: this.#summary(), replies: this.#named }
  }

  /** One name for the commands of a write: `GET`, `GET ×3`, `MULTI (SET, INCR)`, `pipeline (GET, SET, HGET, …)` */
  #summary () {
    const first = this.#names[0]
    if (this.#named === 1) return first
    if (!this.#mixed) return `${first} ×${this.#named}`
    const multi = first === 'MULTI'
    /** @type {string[]} */
    const distinct = []
    for (let i = 0; i < Math.min(this.#named, REDIS_NAMES_KEPT) && distinct.length <= 3; i++) {
      const name = this.#names[i]
      if (!(multi && (name === 'MULTI' || name === 'EXEC')) && !distinct.includes(name)) distinct.push(name)
    }
    const list = distinct.length > 3 ? `${distinct.slice(0, 3).join(', ')}, …` : distinct.join(', ')
    return multi ? `MULTI (${list})` : `pipeline (${list})`
  }

  /** @param {Bytes} c */
  reads (c) {
    if (!this.#counting) return -1
    const n = this.#replies.count(c)
    if (n < 0) this.#counting = false
    return n
  }

  #reset () {
    this.#args = 0
    this.#skip = 0
    this.#inline = false
    this.#line.reset()
  }

  /**
   * @param {Bytes} c
   * @returns {boolean} false when the bytes are no requests
   */
  #parse (c) {
    const n = c.length
    let i = 0
    while (i < n) {
      if (this.#skip > 0) {
        i = this.#bulk(c, i)
        if (i < 0) return false
        continue
      }
      if (this.#inline) {
        const lf = find(c, LF, i, Math.min(n, i + this.#lineLeft))
        if (lf < 0) {
          this.#lineLeft -= n - i
          return this.#lineLeft > 0
        }
        this.#inline = false
        i = lf + 1
        continue
      }
      if (this.#line.type === 0) {
        const b = u8(c, i)
        if (this.#args === 0 && b !== STAR) {
          if (b !== CR && b !== LF) i = this.#inlineCommand(c, i)
          else i++
          continue
        }
        if (b !== (this.#args === 0 ? STAR : DOLLAR)) return false
        this.#line.start(b)
        i++
        continue
      }
      const read = this.#line.read(c, i)
      if (read < 0) return false
      i = read
      if (this.#line.done && !this.#header()) return false
    }
    return true
  }

  /**
   * An array's or a bulk string's header line has been read.
   * @returns {boolean} false for a header no request has
   */
  #header () {
    const { type, value } = this.#line
    this.#line.reset()
    if (type === STAR) {
      if (value > 0) {
        this.#args = value
        this.#arg = 0
      }
      return true
    }
    if (value < 0) return false
    this.#skip = value + 2
    this.#capturing = this.#arg === 0 || (this.#arg === 1 && REDIS_CONTAINERS.has(this.#name))
    this.#captured = ''
    return true
  }

  /**
   * Reads on in a bulk string.
   * @param {Bytes} c
   * @param {number} i
   */
  #bulk (c, i) {
    const k = Math.min(this.#skip, c.length - i)
    if (this.#capturing) {
      const want = Math.min(k, this.#skip - 2, WORD_LENGTH - this.#captured.length)
      if (want > 0) this.#captured += latin1(c, i, i + want)
    }
    if (!endsWell(c, i, k, this.#skip)) return -1
    this.#skip -= k
    if (this.#skip === 0) this.#argument()
    return i + k
  }

  #argument () {
    this.#args--
    const arg = this.#arg++
    if (arg === 0) {
      this.#name = commandName(this.#captured)
      if (this.#args === 0 || !REDIS_CONTAINERS.has(this.#name)) this.#command(this.#name)
    } else if (arg === 1 && this.#capturing) {
      const sub = commandName(this.#captured)
      this.#command(sub === '?' ? this.#name : `${this.#name} ${sub}`)
    }
    this.#capturing = false
  }

  /**
   * A command sent as a line of text: `PING\r\n`.
   * @param {Bytes} c
   * @param {number} i
   */
  #inlineCommand (c, i) {
    const end = wordEnd(c, i, Math.min(c.length, i + WORD_LENGTH))
    this.#command(commandName(latin1(c, i, end)))
    this.#inline = true
    this.#lineLeft = RESP_LINE - (end - i)
    return end
  }

  /** @param {string} name */
  #command (name) {
    if (this.#named < REDIS_NAMES_KEPT) this.#names[this.#named] = name
    if (this.#named++ > 0 && name !== this.#names[0]) this.#mixed = true
    if (REDIS_UNPAIRED.has(name)) this.#counting = false
  }
}

/** Command names as written (`get`) → as shown (`GET`), for the few a connection uses; cleared when full. */
const commandNames = new Map()

/**
 * A command's name, upper-cased; `?` when it is no word.
 * @param {string} raw
 * @returns {string}
 */
function commandName (raw) {
  let name = commandNames.get(raw)
  if (name === undefined) {
    name = isWord(raw) ? raw.toUpperCase() : '?'
    if (commandNames.size >= 512) commandNames.clear()
    commandNames.set(raw, name)
  }
  return name
}

/**
 * Whether the CRLF that ends a bulk string is where its length says, for the part of it within the `k` bytes read
 * from `i` with `skip` bytes of the string left: a client or server out of step with us is caught at once.
 * @param {Bytes} c
 * @param {number} i
 * @param {number} k
 * @param {number} skip
 */
function endsWell (c, i, k, skip) {
  const cr = i + skip - 2
  if (cr >= i && cr < i + k && u8(c, cr) !== CR) return false
  return !(cr + 1 >= i && cr + 1 < i + k && u8(c, cr + 1) !== LF)
}

/** Reads a RESP header line — `*3\r\n`, `$-1\r\n` — across chunks, a byte at a time (they are a few bytes long). */
class LineNumber {
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
class RespCounter {
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

// ---------------------------------------------------------------------------------------------------------------
// MongoDB (wire protocol: OP_MSG, and OP_QUERY for the first hello of older drivers)

const OP_MSG = 2013
const OP_QUERY = 2004
const OP_COMPRESSED = 2012
/** Legacy requests the server does not answer: OP_UPDATE, OP_INSERT, OP_DELETE, OP_KILL_CURSORS. */
const MONGO_UNANSWERED = new Set([2001, 2002, 2006, 2007])
const MONGO_MORE_TO_COME = 2
const MONGO_MAX_MESSAGE = 64 * 1024 * 1024
/** bytes of a request read to name it: header, flags, a section, the first element of its document */
const MONGO_HEAD = 320

/** @type {SizeOf} */
function mongoMessageSize (c, at) {
  const size = i32le(c, at)
  return size >= 16 && size <= MONGO_MAX_MESSAGE ? size : -1
}

/** @param {Bytes} c */
function isMongoRequest (c) {
  if (c.length < 21) return false
  const opCode = i32le(c, 12)
  return mongoMessageSize(c, 0) > 20 && i32le(c, 8) === 0 &&
    (opCode === OP_MSG || opCode === OP_QUERY || opCode === OP_COMPRESSED)
}

/**
 * Names MongoDB commands by the first key of their document — MongoDB's rule for which command a document is — and
 * the collection when that key's value is a string: `find sessions`. Replies are length-prefixed messages, less
 * those flagged moreToCome (more of an exhaust stream follows).
 * @implements {Handler}
 */
class MongoHandler {
  /** @type {Protocol} */
  protocol = 'mongodb'
  #tally = new Tally()
  #counting = true
  #count = 0
  #opaque = false
  #out = new Framer(4, MONGO_HEAD, mongoMessageSize, (c, start, end, size) => this.#request(c, start, end, size))
  #in = new Framer(4, 20, mongoMessageSize, (c, start, end, size) => this.#reply(c, start, end, size))

  /** @param {Bytes} c */
  write (c) {
    if (this.#opaque) return { protocol: this.protocol, op: null, replies: 1 }
    this.#tally.reset()
    if (!this.#out.feed(c)) {
      this.#opaque = true
      this.#counting = false
    }
    return this.#tally.result(this.protocol)
  }

  /** @param {Bytes} c */
  reads (c) {
    if (!this.#counting) return -1
    this.#count = 0
    if (!this.#in.feed(c)) this.#counting = false
    return this.#counting ? this.#count : -1
  }

  /** @type {OnMessage} */
  #request (c, start, end) {
    if (end - start < 16) return
    const opCode = i32le(c, start + 12)
    if (opCode === OP_MSG) {
      if (end - start < 21 || (i32le(c, start + 16) & MONGO_MORE_TO_COME) !== 0) return
      this.#tally.add(opMsgCommand(c, start + 20, end))
    } else if (opCode === OP_QUERY) {
      this.#tally.add(opQueryCommand(c, start + 20, end))
    } else if (opCode === OP_COMPRESSED) {
      this.#tally.add('compressed')
    } else if (!MONGO_UNANSWERED.has(opCode)) {
      this.#tally.add(null)
    }
  }

  /** @type {OnMessage} */
  #reply (c, start, end) {
    const moreToCome = end - start >= 20 && i32le(c, start + 12) === OP_MSG &&
      (i32le(c, start + 16) & MONGO_MORE_TO_COME) !== 0
    if (!moreToCome) this.#count++
  }
}

/**
 * The command of an OP_MSG: its body is the one section of kind 0, usually first, else after document sequences.
 * @param {Bytes} c
 * @param {number} i the first section
 * @param {number} end
 */
function opMsgCommand (c, i, end) {
  while (i + 5 < end) {
    const kind = u8(c, i)
    if (kind === 0) return bsonFirstElement(c, i + 1, end)
    if (kind !== 1) return null
    const size = i32le(c, i + 1)
    if (size < 4) return null
    i += 1 + size
  }
  return null
}

/**
 * OP_QUERY: flags, `db.collection`, numberToSkip, numberToReturn, the query document. On `db.$cmd` the document is
 * a command; elsewhere it is a legacy query of that collection.
 * @param {Bytes} c
 * @param {number} i
 * @param {number} end
 */
function opQueryCommand (c, i, end) {
  const nameEnd = find(c, 0, i, end)
  if (nameEnd < 0) return null
  const collection = latin1(c, i, nameEnd)
  if (collection.endsWith('.$cmd')) return bsonFirstElement(c, nameEnd + 9, end)
  const dot = collection.indexOf('.')
  return isPrintable(collection) ? `query ${collection.slice(dot + 1)}` : null
}

/**
 * `key` or `key value` from a BSON document's first element, the value only when it is a string (a collection).
 * @param {Bytes} c
 * @param {number} doc
 * @param {number} end
 */
function bsonFirstElement (c, doc, end) {
  const type = u8(c, doc + 4)
  if (type === 0) return null
  const keyStart = doc + 5
  const keyEnd = find(c, 0, keyStart, Math.min(end, keyStart + 64))
  if (keyEnd <= keyStart) return null
  const key = latin1(c, keyStart, keyEnd)
  if (!isWord(key)) return null
  if (type !== 0x02) return key
  const length = i32le(c, keyEnd + 1)
  const value = keyEnd + 5
  if (length < 2 || length > 128 || value + length - 1 > end) return key
  const collection = utf8(c, value, value + length - 1)
  return isPrintable(collection) ? `${key} ${collection}` : key
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP/1.x requests, memcached, TLS and other protocols

const HTTP_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'CONNECT', 'TRACE'])
const HTTP_TARGET_BYTES = 512

/**
 * `GET /price/:id` from a request line at the chunk's start, or null.
 * @param {Bytes} c
 * @param {boolean} strict only the standard methods (to recognise a connection); else any upper-case word
 * @returns {string | null}
 */
function httpRequest (c, strict) {
  const space = wordEnd(c, 0, Math.min(c.length, 17))
  if (space < 3 || u8(c, space) !== 0x20) return null
  const method = latin1(c, 0, space)
  if (strict ? !HTTP_METHODS.has(method) : !/^[A-Z][A-Z-]+$/.test(method)) return null
  const t = space + 1
  const first = u8(c, t)
  if (first !== 0x2f && first !== 0x2a && first !== 0x68 && method !== 'CONNECT') return null
  let end = find(c, 0x20, t, Math.min(c.length, t + HTTP_TARGET_BYTES))
  if (end < 0) end = Math.min(c.length, t + HTTP_TARGET_BYTES)
  const target = latin1(c, t, end)
  return isPrintable(target) ? `${method} ${pathPattern(target)}` : null
}

/**
 * `/users/42/orders?x=1` → `/users/:id/orders`: ids in paths would make every request its own operation. A proxy's
 * `http://host:8080/users/42` keeps its origin.
 * @param {string} target
 */
function pathPattern (target) {
  const q = target.search(/[?#]/)
  const bare = q === -1 ? target : target.slice(0, q)
  const scheme = bare.indexOf('://')
  const slash = scheme < 0 ? 0 : bare.indexOf('/', scheme + 3)
  if (slash < 0) return bare
  return bare.slice(0, slash) + bare.slice(slash).split('/').map(s => /\d/.test(s) ? ':id' : s).join('/')
}

/**
 * Names HTTP/1.x requests by their request line; writes that do not start with one carry headers or a body.
 * @implements {Handler}
 */
class HttpHandler {
  /** @type {Protocol} */
  protocol = 'http'

  /** @param {Bytes} c */
  write (c) {
    const op = httpRequest(c, false)
    return op === null ? null : { protocol: this.protocol, op, replies: 1 }
  }

  reads () {
    return -1
  }
}

/** memcached's text commands; those followed by a data block, with the index of the token giving its size. */
const MEMCACHED_STORAGE = new Map([['set', 4], ['add', 4], ['replace', 4], ['append', 4], ['prepend', 4], ['cas', 4],
  ['ms', 2]])
const MEMCACHED_KEYED = new Set(['get', 'gets', 'gat', 'gats', 'delete', 'incr', 'decr', 'touch', 'mg', 'md', 'ma'])
const MEMCACHED_OTHER = new Set(['stats', 'version', 'flush_all', 'verbosity', 'quit', 'mn', 'me', 'shutdown',
  'cache_memlimit', 'lru_crawler', 'slabs', 'watch'])
const MEMCACHED_LINE = 1024

/**
 * A memcached command whose shape leaves no doubt: a storage command with its numbers, or a keyed one.
 * @param {Bytes} c
 */
function isMemcachedCommand (c) {
  const line = firstLine(c, 0)
  if (line === null) return false
  const tokens = line.split(' ')
  const sizeAt = MEMCACHED_STORAGE.get(tokens[0])
  if (sizeAt !== undefined) {
    const numbers = tokens[0] === 'ms' ? tokens.slice(2, 3) : tokens.slice(2, tokens[0] === 'cas' ? 6 : 5)
    return tokens.length > sizeAt && numbers.every(t => /^\d{1,20}$/.test(t))
  }
  return MEMCACHED_KEYED.has(tokens[0]) && tokens.length >= 2 && tokens[1].length > 0
}

/**
 * The text of the line starting at `i` when it ends with CRLF within a bounded length, else null.
 * @param {Bytes} c
 * @param {number} i
 */
function firstLine (c, i) {
  const lf = find(c, LF, i, Math.min(c.length, i + MEMCACHED_LINE))
  if (lf < 1 || u8(c, lf - 1) !== CR) return null
  const line = latin1(c, i, lf - 1)
  return isPrintable(line) ? line : null
}

/**
 * Names memcached commands by their first word, skipping the data blocks of storage commands by their size.
 * @implements {Handler}
 */
class MemcachedHandler {
  /** @type {Protocol} */
  protocol = 'memcached'
  /** bytes of a data block still to come */
  #skip = 0
  #tally = new Tally()

  /** @param {Bytes} c */
  write (c) {
    this.#tally.reset()
    let i = Math.min(this.#skip, c.length)
    this.#skip -= i
    while (i < c.length) {
      const line = firstLine(c, i)
      if (line === null) {
        // A line longer than we read, or split across writes: named by its first word, not followed
        if (this.#tally.replies === 0) this.#tally.add(memcachedName(firstWord(c, i)?.toLowerCase() ?? ''))
        break
      }
      i += line.length + 2
      const tokens = line.split(' ')
      const sizeAt = MEMCACHED_STORAGE.get(tokens[0])
      if (sizeAt !== undefined) {
        const size = Number(tokens[sizeAt])
        if (!(size >= 0)) break
        const skipped = Math.min(size + 2, c.length - i)
        this.#skip = size + 2 - skipped
        i += skipped
      }
      if (tokens[tokens.length - 1] !== 'noreply') this.#tally.add(memcachedName(tokens[0]))
    }
    return this.#tally.result(this.protocol)
  }

  reads () {
    return -1
  }
}

/** @param {string} word */
function memcachedName (word) {
  return MEMCACHED_STORAGE.has(word) || MEMCACHED_KEYED.has(word) || MEMCACHED_OTHER.has(word) ? word : null
}

/** @param {Bytes} c */
function isTlsHello (c) {
  return c.length >= 6 && u8(c, 0) === 0x16 && u8(c, 1) === 3 && u8(c, 2) >= 1 && u8(c, 2) <= 4 && u8(c, 5) === 1
}

/**
 * An encrypted connection: its first write opens the TLS handshake; what later ones carry cannot be read.
 * @implements {Handler}
 */
class TlsHandler {
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

/**
 * An unrecognised protocol: each write is taken as one request, named by its first word when it is a line of text
 * (`PING`, `GET`, `QUIT`), unnamed when binary. While every request is one line of text, each reply is taken to be one
 * line too (a home-made protocol's `GET key\n` → `value\n`), so that replies pipelined into one read are counted; a
 * request that is not one line, or a read holding more lines than requests are owed, ends the counting.
 * @implements {Handler}
 */
class LineHandler {
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

/**
 * The first word of a line of text, upper-cased: 1 to 16 letters, digits or underscores, starting with a letter and
 * ending the chunk or followed by a space, a tab or a line end. Null for binary bytes.
 * @param {Bytes} c
 * @param {number} i
 * @returns {string | null}
 */
function firstWord (c, i) {
  if (!isLetter(u8(c, i))) return null
  const end = wordEnd(c, i, Math.min(c.length, i + 17))
  if (end - i > 16) return null
  if (end < c.length) {
    const b = u8(c, end)
    if (b !== 0x20 && b !== 0x09 && b !== CR && b !== LF) return null
  }
  return latin1(c, i, end).toUpperCase()
}

// ---------------------------------------------------------------------------------------------------------------
// SQL

/** @type {Map<string, string>} raw SQL → folded */
const folded = new Map()

/**
 * The statements a connection sent last, by their bytes: a connection repeats a few statements, and comparing bytes
 * costs a quarter of decoding them to look them up in the process's cache.
 */
class RecentSql {
  /** @type {{ raw: Buffer, sql: string }[]} */
  #entries = []
  #next = 0

  /**
   * The folded SQL of the chunk's bytes from `start` to `end`.
   * @param {Bytes} c
   * @param {number} start
   * @param {number} end
   */
  fold (c, start, end) {
    if (typeof c === 'string') return sqlOp(c, start, end)
    const length = end - start
    for (const e of this.#entries) {
      if (e.raw.length === length && sameBytes(e.raw, c, start)) return e.sql
    }
    const entry = { raw: Buffer.from(c.subarray(start, end)), sql: sqlOp(c, start, end) }
    if (this.#entries.length < RECENT_SQL) this.#entries.push(entry)
    else this.#entries[this.#next] = entry
    this.#next = (this.#next + 1) % RECENT_SQL
    return entry.sql
  }
}

/**
 * @param {Buffer} raw
 * @param {Buffer} c holds as many bytes as raw from `start`
 * @param {number} start
 */
function sameBytes (raw, c, start) {
  for (let i = 0; i < raw.length; i++) if (raw[i] !== c[start + i]) return false
  return true
}

/**
 * The folded SQL of a statement whose text is the chunk's bytes from `start` to `end`, cached by its text.
 * @param {Bytes} c
 * @param {number} start
 * @param {number} end
 */
function sqlOp (c, start, end) {
  const text = utf8(c, start, end)
  let sql = folded.get(text)
  if (sql === undefined) {
    sql = foldSql(text) || '(empty)'
    if (folded.size >= FOLD_CACHE_SIZE) folded.clear()
    folded.set(text, sql)
  }
  return sql
}

/** Characters of SQL read by foldSql; the rest is not looked at. */
const FOLD_INPUT = 4096
/** Length of foldSql's result. */
const FOLD_OUTPUT = 120
/** A select list this long or longer, or with a comma, is shown as `…`. */
const SELECT_LIST = 24

/**
 * A SQL statement without its literals, to group the statements that differ only by them: strings (`'…'`, `E'…'`,
 * `$$…$$`) and numbers become `?`; `IN (…)` and `VALUES (…)` lists of literals and placeholders become `(…)`;
 * comments go and whitespace runs become one space; keywords keep their case and placeholders (`$1`, `?`, `:name`)
 * stay. A select list of more than one short item becomes `…`; the result is cut at 120 characters. One pass over
 * at most the first 4096 characters.
 * @param {string} text
 * @returns {string}
 */
export function foldSql (text) {
  const folder = new SqlFolder(text.length > FOLD_INPUT ? text.slice(0, FOLD_INPUT) : text)
  let out = folder.fold()
  if (text.length > FOLD_INPUT && !out.endsWith('…')) out += ' …'
  return out.length > FOLD_OUTPUT ? `${out.slice(0, FOLD_OUTPUT - 1).trimEnd()}…` : out
}

/** Words and symbols that may stand in a folded list, besides literals and placeholders. */
const LISTABLE = new Set([',', '-', 'NULL', 'TRUE', 'FALSE', 'DEFAULT'])

/**
 * @typedef {object} SqlGroup an open parenthesis
 * @property {number} start where its `(` is in the output
 * @property {'in' | 'values' | 'row' | null} list a list after IN or VALUES, or a further row of VALUES, or neither
 * @property {number} rowEnd for a further row: where the folded row before it ends in the output
 * @property {boolean} listable nothing but literals, placeholders and commas in it so far
 * @property {number} select where the select list of a SELECT at this depth starts in the output, or -1
 * @property {boolean} selectComma
 */

/** One pass of foldSql over a statement's text, writing the folded text as it goes. */
class SqlFolder {
  #s
  #i = 0
  #out = ''
  #space = false
  /**
   * What the last token written was, for what may follow it: IN or VALUES (a list), ROW (a folded VALUES row),
   * ROW, (a comma after one: another row), COLON (`:name` is a placeholder)
   * @type {'' | 'IN' | 'VALUES' | 'ROW' | 'ROW,' | 'COLON'}
   */
  #after = ''
  /** where the last folded VALUES row ends in the output */
  #rowEnd = 0
  /** @type {SqlGroup[]} the statement itself, then each open parenthesis */
  #groups = [group(0, null, 0)]

  /** @param {string} s */
  constructor (s) {
    this.#s = s
  }

  fold () {
    const s = this.#s
    while (this.#i < s.length) {
      const ch = s.charCodeAt(this.#i)
      const next = s.charCodeAt(this.#i + 1)
      if (ch === 0x20 || (ch >= 0x09 && ch <= 0x0d)) {
        this.#space = true
        this.#i++
      } else if (ch === 0x2d && next === 0x2d) this.#lineComment()
      else if (ch === 0x2f && next === 0x2a) this.#blockComment()
      else if (ch === 0x27) this.#literal(this.#string(this.#i, true))
      else if (ch === 0x22 || ch === 0x60) this.#quotedName()
      else if (ch === 0x24) this.#dollar()
      else if (isDigit(ch) || (ch === 0x2e && isDigit(next))) this.#number()
      else if (isNameStart(ch)) this.#word()
      else if (ch === 0x28) this.#open()
      else if (ch === 0x29) this.#close()
      else this.#symbol(s[this.#i++])
    }
    return this.#out.endsWith(';') ? this.#out.slice(0, -1) : this.#out
  }

  /**
   * Writes a token, after one space where the input had whitespace or a comment.
   * @param {string} token
   * @param {boolean} listable
   * @param {'' | 'IN' | 'VALUES' | 'ROW' | 'ROW,' | 'COLON'} [after]
   */
  #emit (token, listable, after = '') {
    if (this.#space && this.#out.length > 0) this.#out += ' '
    this.#space = false
    this.#out += token
    if (!listable) this.#groups[this.#groups.length - 1].listable = false
    this.#after = after
  }

  /** @param {number} end */
  #literal (end) {
    this.#i = end
    this.#emit('?', true)
  }

  #lineComment () {
    const lf = this.#s.indexOf('\n', this.#i)
    this.#i = lf < 0 ? this.#s.length : lf + 1
    this.#space = true
  }

  /** PostgreSQL's block comments nest */
  #blockComment () {
    const s = this.#s
    let depth = 0
    let i = this.#i
    while (i < s.length) {
      if (s.charCodeAt(i) === 0x2f && s.charCodeAt(i + 1) === 0x2a) {
        depth++
        i += 2
      } else if (s.charCodeAt(i) === 0x2a && s.charCodeAt(i + 1) === 0x2f) {
        i += 2
        if (--depth === 0) break
      } else i++
    }
    this.#i = i
    this.#space = true
  }

  /**
   * The end of a quoted string starting at `i`: a doubled quote is one quote, and so is one after a backslash when
   * backslashes escape (MySQL, and PostgreSQL's E'…'; a PostgreSQL string ending in a backslash is misread).
   * @param {number} i
   * @param {boolean} backslashes
   */
  #string (i, backslashes) {
    const s = this.#s
    const quote = s.charCodeAt(i)
    for (i++; i < s.length; i++) {
      const ch = s.charCodeAt(i)
      if (ch === 0x5c && backslashes) i++
      else if (ch === quote) {
        if (s.charCodeAt(i + 1) !== quote) return i + 1
        i++
      }
    }
    return s.length
  }

  /** A quoted identifier (`"…"`, `` `…` ``), kept */
  #quotedName () {
    const end = this.#string(this.#i, false)
    const name = this.#s.slice(this.#i, end)
    this.#i = end
    this.#emit(name, false)
  }

  /** `$1` is a placeholder; `$$…$$` and `$tag$…$tag$` a string */
  #dollar () {
    const s = this.#s
    const start = this.#i
    let i = start + 1
    if (isDigit(s.charCodeAt(i))) {
      while (isDigit(s.charCodeAt(i))) i++
      this.#i = i
      return this.#emit(s.slice(start, i), true)
    }
    while (i < s.length && isNamePart(s.charCodeAt(i)) && s.charCodeAt(i) !== 0x24) i++
    if (s.charCodeAt(i) !== 0x24) return this.#symbol(s[this.#i++])
    const tag = s.slice(start, i + 1)
    const close = s.indexOf(tag, i + 1)
    this.#literal(close < 0 ? s.length : close + tag.length)
  }

  /** `42`, `1.5`, `.5`, `1e-5`, `0x1F` */
  #number () {
    const s = this.#s
    const hex = (s.charCodeAt(this.#i + 1) | 0x20) === 0x78
    let i = this.#i
    while (i < s.length) {
      const ch = s.charCodeAt(i)
      const exponentSign = !hex && (ch === 0x2b || ch === 0x2d) && (s.charCodeAt(i - 1) | 0x20) === 0x65
      if (!(isNamePart(ch) || ch === 0x2e || exponentSign)) break
      i++
    }
    this.#literal(i)
  }

  #word () {
    const s = this.#s
    const start = this.#i
    let i = start + 1
    while (i < s.length && isNamePart(s.charCodeAt(i))) i++
    // E'…', N'…', B'…', X'…': a string with a prefix
    if (i === start + 1 && s.charCodeAt(i) === 0x27 && 'EeNnBbXx'.includes(s[start])) {
      return this.#literal(this.#string(i, true))
    }
    this.#i = i
    const word = s.slice(start, i)
    const upper = word.length <= 7 ? word.toUpperCase() : ''
    if (upper === 'FROM') this.#from()
    this.#emit(word, LISTABLE.has(upper) || this.#after === 'COLON', upper === 'IN' || upper === 'VALUES' ? upper : '')
    if (upper === 'SELECT') {
      const g = this.#groups[this.#groups.length - 1]
      g.select = this.#out.length
      g.selectComma = false
    }
  }

  /** A FROM ends the select list of the SELECT at its depth, which is shortened when long. */
  #from () {
    const g = this.#groups[this.#groups.length - 1]
    if (g.select < 0) return
    const list = this.#out.slice(g.select).trim()
    if (g.selectComma || list.length >= SELECT_LIST) this.#out = `${this.#out.slice(0, g.select)} …`
    g.select = -1
  }

  #open () {
    this.#i++
    const after = this.#after
    this.#emit('(', false)
    const list = after === 'IN' ? 'in' : after === 'VALUES' ? 'values' : after === 'ROW,' ? 'row' : null
    this.#groups.push(group(this.#out.length - 1, list, this.#rowEnd))
  }

  #close () {
    this.#i++
    const g = this.#groups.length > 1 ? /** @type {SqlGroup} */ (this.#groups.pop()) : null
    if (g === null || g.list === null || !g.listable || g.start === this.#out.length - 1) return this.#emit(')', false)
    // a list of literals: `(…)`; a further row of them after a folded one is dropped with its comma
    this.#out = g.list === 'row' ? this.#out.slice(0, g.rowEnd) : `${this.#out.slice(0, g.start)}(…)`
    this.#space = false
    this.#after = g.list === 'in' ? '' : 'ROW'
    this.#rowEnd = this.#out.length
  }

  /** @param {string} ch */
  #symbol (ch) {
    const g = this.#groups[this.#groups.length - 1]
    if (ch === ',' && g.select >= 0) g.selectComma = true
    const after = ch === ':' ? 'COLON' : ch === ',' && this.#after === 'ROW' ? 'ROW,' : ''
    this.#emit(ch, LISTABLE.has(ch) || ch === '?' || ch === ':', after)
  }
}

/**
 * @param {number} start
 * @param {SqlGroup['list']} list
 * @param {number} rowEnd
 * @returns {SqlGroup}
 */
function group (start, list, rowEnd) {
  return { start, list, rowEnd, listable: true, select: -1, selectComma: false }
}

// ---------------------------------------------------------------------------------------------------------------
// Bytes

/**
 * @param {Bytes} c
 * @param {number} i
 * @returns {number} NaN past the end of a string, undefined past the end of a Buffer: both fail every comparison
 */
function u8 (c, i) {
  return typeof c === 'string' ? c.charCodeAt(i) : c[i]
}

/**
 * @param {Bytes} c
 * @param {number} i
 */
function i32be (c, i) {
  return (u8(c, i) << 24) | (u8(c, i + 1) << 16) | (u8(c, i + 2) << 8) | u8(c, i + 3)
}

/**
 * @param {Bytes} c
 * @param {number} i
 */
function i32le (c, i) {
  return u8(c, i) | (u8(c, i + 1) << 8) | (u8(c, i + 2) << 16) | (u8(c, i + 3) << 24)
}

/**
 * @param {Bytes} c
 * @param {number} i
 */
function u24le (c, i) {
  return u8(c, i) | (u8(c, i + 1) << 8) | (u8(c, i + 2) << 16)
}

/**
 * @param {Bytes} c
 * @param {number} start
 * @param {number} end
 */
function latin1 (c, start, end) {
  if (typeof c === 'string') return c.slice(start, end)
  // a command name, a key: building it costs a third of what Buffer#toString's checks do
  end = Math.min(end, c.length)
  if (end - start <= 16) {
    let s = ''
    for (let i = start; i < end; i++) s += String.fromCharCode(c[i])
    return s
  }
  return c.toString('latin1', start, end)
}

/**
 * @param {Bytes} c
 * @param {number} start
 * @param {number} end
 */
function utf8 (c, start, end) {
  return typeof c === 'string' ? c.slice(start, end) : c.toString('utf8', start, end)
}

/**
 * @param {Bytes} c
 * @param {number} start
 * @returns {Bytes}
 */
function rest (c, start) {
  return typeof c === 'string' ? c.slice(start) : c.subarray(start)
}

/**
 * @param {Bytes} c
 * @param {number} start
 * @param {number} end
 * @param {Buffer} target
 * @param {number} at
 */
function copy (c, start, end, target, at) {
  if (typeof c === 'string') target.write(c.slice(start, end), at, 'latin1')
  else c.copy(target, at, start, end)
}

/**
 * Where `byte` is first found from `start` up to `end`, or -1: the search never runs past `end`.
 * @param {Bytes} c
 * @param {number} byte
 * @param {number} start
 * @param {number} end
 */
function find (c, byte, start, end) {
  end = Math.min(end, c.length)
  if (end - start <= 16) {
    for (let i = start; i < end; i++) if (u8(c, i) === byte) return i
    return -1
  }
  // Searching on past `end` to the chunk's end costs less than cutting the chunk, unless the chunk is large
  const searchOn = c.length - start <= SEARCH_ON
  let j
  if (typeof c === 'string') {
    const ch = String.fromCharCode(byte)
    j = searchOn ? c.indexOf(ch, start) : c.slice(start, end).indexOf(ch) + start
  } else {
    j = searchOn ? c.indexOf(byte, start) : c.subarray(start, end).indexOf(byte) + start
  }
  return j < start || j >= end ? -1 : j
}

/** Bytes a search may run past its end rather than cut the chunk. */
const SEARCH_ON = 16384

/**
 * Where the run of letters, digits, underscores and dashes from `start` ends, at most at `end`.
 * @param {Bytes} c
 * @param {number} start
 * @param {number} end
 */
function wordEnd (c, start, end) {
  let i = start
  while (i < end) {
    const b = u8(c, i)
    if (!(isLetter(b) || isDigit(b) || b === 0x5f || b === 0x2d)) break
    i++
  }
  return i
}

/** @param {number} b */
const isDigit = (b) => b >= 0x30 && b <= 0x39
/** @param {number} b */
const isLetter = (b) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
/** @param {number} b */
const isAlnum = (b) => isLetter(b) || isDigit(b)
/** @param {number} ch */
const isNameStart = (ch) => isLetter(ch) || ch === 0x5f || ch >= 0x80
/** @param {number} ch */
const isNamePart = (ch) => isNameStart(ch) || isDigit(ch) || ch === 0x24

/**
 * A command's name: visible ASCII, at most 32 characters.
 * @param {string} s
 */
function isWord (s) {
  if (s.length === 0 || s.length > WORD_LENGTH) return false
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i)
    if (ch <= 0x20 || ch >= 0x7f) return false
  }
  return true
}

/**
 * Text without control characters.
 * @param {string} s
 */
function isPrintable (s) {
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i)
    if (ch < 0x20 || ch === 0x7f) return false
  }
  return true
}
