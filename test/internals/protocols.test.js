// The protocol sniffer reads untrusted bytes on every write of the app's client sockets: it is tested on the bytes
// real drivers write (pg and ioredis, against fake servers on 127.0.0.1), on hand-built wire messages, on every split
// of them across chunks and many of them per chunk, and on random bytes, where it must neither throw nor dawdle.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { createRequire } from 'node:module'
import { createSniffer, foldSql } from '../../src/sampling/protocols.js'
import { cstr, pg } from '../helpers/wire.js'

const require = createRequire(import.meta.url)
/**
 * A driver without types of its own, loaded by a name the type checker does not resolve.
 * @param {string} name
 * @returns {any}
 */
const driver = (name) => require(name)

/**
 * The operations a sniffer names for the chunks, in order, nulls left out.
 * @param {import('../../src/sampling/protocols.js').Sniffer} sniffer
 * @param {(Uint8Array | string)[]} chunks
 */
function ops (sniffer, chunks) {
  /** @type {(string | null)[]} */
  const out = []
  for (const chunk of chunks) {
    const started = sniffer.write(chunk)
    if (started !== null) out.push(started.op)
  }
  return out
}

/**
 * Total operations the reads complete.
 * @param {import('../../src/sampling/protocols.js').Sniffer} sniffer
 * @param {(Buffer | string)[]} chunks
 */
function answered (sniffer, chunks) {
  let n = 0
  for (const chunk of chunks) {
    const k = sniffer.reads(chunk)
    assert.ok(k >= 0, `reads returned ${k}`)
    n += k
  }
  return n
}

/**
 * Every way to cut the bytes in two, and one byte per chunk.
 * @param {Buffer} bytes
 * @returns {Buffer[][]}
 */
function splits (bytes) {
  /** @type {Buffer[][]} */
  const out = [[...bytes].map(b => Buffer.from([b]))]
  for (let i = 1; i < bytes.length; i++) out.push([bytes.subarray(0, i), bytes.subarray(i)])
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL wire messages

/** @param {number} n */
function int16 (n) {
  const b = Buffer.alloc(2)
  b.writeInt16BE(n)
  return b
}

/** @param {number} n */
function int32 (n) {
  const b = Buffer.alloc(4)
  b.writeInt32BE(n)
  return b
}

/** @param {Record<string, string>} params */
function pgStartup (params) {
  const body = Buffer.concat([int32(196608), ...Object.entries(params).flatMap(([k, v]) => [cstr(k), cstr(v)]), Buffer.from([0])])
  return Buffer.concat([int32(body.length + 4), body])
}

const pgSsl = Buffer.concat([int32(8), int32(80877103)])
/**
 * @param {string} sql
 * @param {string} [name]
 */
const pgParse = (sql, name = '') => pg('P', cstr(name), cstr(sql), int16(0))
/** @param {string} [name] */
const pgBind = (name = '') => pg('B', cstr(''), cstr(name), int16(0), int16(1), int32(2), Buffer.from('42'), int16(0))
const pgDescribe = pg('D', Buffer.from('P'), cstr(''))
const pgExecute = pg('E', cstr(''), int32(0))
const pgSync = pg('S')
/** @param {string} sql */
const pgQuery = (sql) => pg('Q', cstr(sql))
/** @param {number} code */
const pgAuth = (code) => pg('R', int32(code))
const pgReady = pg('Z', Buffer.from('I'))
const pgComplete = pg('C', cstr('SELECT 1'))

/**
 * One extended-protocol query as pg writes it, one message per write.
 * @param {string} sql
 * @param {string} [name]
 */
const pgExtended = (sql, name) => [pgParse(sql, name), pgBind(name), pgDescribe, pgExecute, pgSync]
const pgExtendedReply = Buffer.concat([pg('1'), pg('2'), pg('n'), pgComplete, pgReady])

test('postgres: startup, a parameterised query in five writes, a simple query', () => {
  const s = createSniffer()
  assert.deepEqual(s.write(pgStartup({ user: 'app', database: 'shop' })), { protocol: 'postgres', op: 'startup' })
  assert.equal(s.reads(Buffer.concat([pgAuth(0), pg('S', cstr('server_version'), cstr('16')), pg('K', int32(1), int32(2)), pgReady])), 1)
  assert.deepEqual(ops(s, pgExtended('SELECT id, user_id, expires FROM sessions WHERE id = $1')),
    ['SELECT … FROM sessions WHERE id = $1'])
  assert.equal(s.reads(pgExtendedReply), 1)
  assert.deepEqual(s.write(pgQuery("UPDATE sessions SET seen = now() WHERE id = 'a1'")),
    { protocol: 'postgres', op: 'UPDATE sessions SET seen = now() WHERE id = ?' })
  assert.equal(s.reads(Buffer.concat([pgComplete, pgReady])), 1)
  assert.equal(s.write(pg('X')), null, 'Terminate gets no reply')
  assert.equal(s.protocol(), 'postgres')
})

test('postgres: a named statement keeps its SQL for later Binds, until it is closed', () => {
  const s = createSniffer()
  s.write(pgStartup({ user: 'u' }))
  assert.deepEqual(ops(s, pgExtended('SELECT * FROM users WHERE email = $1', 'by-email')), ['SELECT * FROM users WHERE email = $1'])
  // prepared: pg sends Bind/Describe/Execute/Sync only
  assert.deepEqual(ops(s, pgExtended('x', 'by-email').slice(1)), ['SELECT * FROM users WHERE email = $1'])
  ops(s, [pg('C', Buffer.from('S'), cstr('by-email')), pgSync])
  assert.deepEqual(ops(s, [pgBind('by-email'), pgExecute, pgSync]), ['EXECUTE'])
  // the unnamed statement is remembered too
  ops(s, pgExtended('SELECT 1'))
  assert.deepEqual(ops(s, [pgBind(''), pgExecute, pgSync]), ['SELECT ?'])
})

test('postgres: SSLRequest, then md5 and SCRAM authentication, each answer ending a round trip', () => {
  const s = createSniffer()
  assert.equal(s.write(pgSsl)?.op, 'SSLRequest')
  assert.equal(s.reads(Buffer.from('N')), 1)
  assert.equal(s.write(pgStartup({ user: 'u' }))?.op, 'startup')
  assert.equal(s.reads(pg('R', int32(5), Buffer.from('salt'))), 1)
  assert.equal(s.write(pg('p', cstr('md5abc')))?.op, 'auth')
  assert.equal(s.reads(Buffer.concat([pgAuth(0), pgReady])), 1)

  const scram = createSniffer()
  assert.equal(scram.write(pgStartup({ user: 'u' }))?.op, 'startup')
  assert.equal(scram.reads(pg('R', int32(10), cstr('SCRAM-SHA-256'), Buffer.from([0]))), 1)
  assert.equal(scram.write(pg('p', cstr('SCRAM-SHA-256'), int32(3), Buffer.from('n,,')))?.op, 'auth')
  assert.equal(scram.reads(pg('R', int32(11), Buffer.from('r=abc'))), 1)
  assert.equal(scram.write(pg('p', Buffer.from('c=biws')))?.op, 'auth')
  // SASLFinal and AuthenticationOk end nothing: ReadyForQuery does
  assert.equal(scram.reads(Buffer.concat([pg('R', int32(12), Buffer.from('v=x')), pgAuth(0)])), 0)
  assert.equal(scram.reads(pgReady), 1)
})

test('postgres: after SSLRequest is accepted, the bytes are TLS: unnamed, not counted', () => {
  const s = createSniffer()
  s.write(pgSsl)
  assert.equal(s.reads(Buffer.from('S')), 1)
  assert.deepEqual(s.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0, 0])), { protocol: 'postgres', op: null })
  assert.equal(s.reads(Buffer.from([0x16, 0x03, 0x03, 0, 10])), -1)
})

test('postgres: batches pipelined in one write are one operation answered by the last ReadyForQuery', () => {
  const s = createSniffer()
  s.write(pgStartup({ user: 'u' }))
  s.reads(Buffer.concat([pgAuth(0), pgReady]))
  const batch = Buffer.concat([...pgExtended('SELECT a FROM t WHERE id = $1'), ...pgExtended('SELECT b FROM u WHERE id = $1')])
  assert.deepEqual(s.write(batch), { protocol: 'postgres', op: 'SELECT a FROM t WHERE id = $1' })
  assert.equal(s.reads(pgExtendedReply), 0)
  assert.equal(s.reads(pgExtendedReply), 1)
  // a Sync alone (pg sends one after an error) still gets its ReadyForQuery
  assert.equal(s.write(pgSync)?.op, 'Sync')
  assert.equal(s.reads(pgReady), 1)
})

test('postgres: a session split anywhere in its writes and reads names and answers the same operations', () => {
  // the messages after the startup, each with the operation it starts
  /** @type {[Buffer, string | null][]} */
  const messages = [
    [pgParse('SELECT * FROM t WHERE id = $1'), 'SELECT * FROM t WHERE id = $1'], [pgBind(), null], [pgDescribe, null],
    [pgExecute, null], [pgSync, null], [pgQuery('SELECT 2'), 'SELECT ?'], [pgQuery('COMMIT'), 'COMMIT']
  ]
  const writes = Buffer.concat(messages.map(m => m[0]))
  const starts = []
  let offset = 0
  for (const [bytes, op] of messages) {
    offset += bytes.length
    if (op !== null) starts.push({ end: offset, op })
  }
  for (const chunks of splits(writes)) {
    const s = createSniffer()
    s.write(pgStartup({ user: 'u' }))
    // a write names the first operation whose message ends in it
    /** @type {string[]} */
    const expected = chunks.length === 2
      ? [starts.find(m => m.end <= chunks[0].length), starts.find(m => m.end > chunks[0].length)].filter(m => m !== undefined).map(m => m.op)
      : starts.map(m => m.op)
    assert.deepEqual(ops(s, chunks), expected)
  }
  const reads = Buffer.concat([pgAuth(0), pgReady, pgExtendedReply, pgComplete, pgReady, pgComplete, pgReady])
  for (const chunks of splits(reads)) {
    const s = createSniffer()
    for (const w of [pgStartup({ user: 'u' }), ...messages.map(m => m[0])]) s.write(w)
    assert.equal(answered(s, chunks), 4)
  }
})

test('postgres: recognised mid-connection from typed messages, then not counted', () => {
  const s = createSniffer()
  assert.deepEqual(s.write(pgQuery('SELECT now()')), { protocol: 'postgres', op: 'SELECT now()' })
  assert.equal(s.reads(Buffer.concat([pgComplete, pgReady])), -1)
  const cancel = createSniffer()
  assert.equal(cancel.write(Buffer.concat([int32(16), int32(80877102), int32(1), int32(2)])), null, 'no reply to a CancelRequest')
  assert.equal(cancel.protocol(), 'postgres')
})

// ---------------------------------------------------------------------------------------------------------------
// Redis

/** @param {(string | Buffer)[]} args */
function resp (...args) {
  const parts = [Buffer.from(`*${args.length}\r\n`)]
  for (const a of args) {
    const b = Buffer.from(a)
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'))
  }
  return Buffer.concat(parts)
}

test('redis: commands, container commands, pipelines, MULTI and inline commands', () => {
  const s = createSniffer()
  assert.deepEqual(s.write(resp('HELLO', '3')), { protocol: 'redis', op: 'HELLO' })
  assert.equal(s.write(resp('client', 'setname', 'app'))?.op, 'CLIENT SETNAME')
  assert.equal(s.write(resp('CONFIG'))?.op, 'CONFIG')
  assert.equal(s.write(Buffer.concat([resp('get', 'a'), resp('get', 'b'), resp('GET', 'c')]))?.op, 'GET ×3')
  assert.equal(s.write(Buffer.concat([resp('get', 'a'), resp('set', 'b', '1'), resp('hget', 'h', 'f'), resp('del', 'x'), resp('get', 'y')]))?.op,
    'pipeline (GET, SET, HGET, …)')
  assert.equal(s.write(Buffer.concat([resp('MULTI'), resp('SET', 'a', '1'), resp('INCR', 'n'), resp('EXEC')]))?.op, 'MULTI (SET, INCR)')
  assert.equal(s.write('PING\r\n')?.op, 'PING')
  assert.equal(s.write('*0\r\n'), null, 'an empty array is no command')
})

test('redis: a value that looks like commands is skipped by its length; a command over several writes is one', () => {
  const s = createSniffer()
  // the first write reveals the protocol: drivers write it whole
  assert.equal(s.write(resp('PING'))?.op, 'PING')
  const tricky = resp('SET', 'k', '*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n')
  for (const chunks of splits(tricky)) {
    const names = ops(s, chunks)
    assert.deepEqual(names, ['SET'])
  }
  // node-redis writes a command's Buffer arguments separately from its header
  assert.deepEqual(ops(s, ['*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\n', Buffer.from('hello'), '\r\n']), ['SET'])
  // strings with non-ASCII characters: lengths are in bytes
  assert.deepEqual(ops(s, ['*3\r\n$3\r\nset\r\n$1\r\nk\r\n$6\r\nhéllo\r\n', '*2\r\n$3\r\nget\r\n$1\r\nk\r\n']), ['SET', 'GET'])
  assert.deepEqual(ops(s, [new Uint8Array(resp('DEL', 'k'))]), ['DEL'])
})

test('redis: replies are paired with the writes that asked for them, RESP2 and RESP3', () => {
  const s = createSniffer()
  s.write(Buffer.concat([resp('GET', 'a'), resp('GET', 'b'), resp('GET', 'c')]))
  s.write(resp('HGETALL', 'h'))
  s.write(resp('CLIENT', 'TRACKING', 'on'))
  s.write(resp('GET', 'z'))
  // two of the three GETs: the pipeline is not answered yet
  assert.equal(s.reads('$1\r\nx\r\n$-1\r\n'), 0)
  // the third GET's bulk string, split; a RESP3 map of nested arrays
  assert.equal(s.reads('$5\r\nhel'), 0)
  assert.equal(s.reads('lo\r\n%1\r\n+f1\r\n*2\r\n:1\r\n'), 1)
  assert.equal(s.reads('_\r\n+OK\r\n'), 2)
  // a push is no reply; an attribute annotates the reply that follows it
  assert.equal(s.reads('>2\r\n+invalidate\r\n*1\r\n$1\r\na\r\n'), 0)
  assert.equal(s.reads('|1\r\n+ttl\r\n:3\r\n'), 0)
  assert.equal(s.reads('$1\r\nv\r\n'), 1)
})

test('redis: every split of a stream of replies completes the same operations', () => {
  // one of each type: simple, error, integer, bulk, nulls, empty and nested arrays, map, boolean, double, big
  // number, verbatim string, set, bulk error
  const replies = Buffer.from([
    '+OK\r\n', '-ERR no\r\n', ':42\r\n', '$3\r\nabc\r\n', '$-1\r\n', '*-1\r\n', '*0\r\n', '*2\r\n*1\r\n$1\r\nx\r\n%1\r\n+k\r\n#t\r\n',
    ',1.5\r\n', '(123\r\n', '=8\r\ntxt:abcd\r\n', '~1\r\n!3\r\nerr\r\n'
  ].join(''))
  const commands = 12
  for (const chunks of splits(replies)) {
    const s = createSniffer()
    for (let i = 0; i < commands; i++) s.write(resp('GET', String(i)))
    assert.equal(answered(s, chunks), commands)
  }
})

test('redis: a client out of step is caught by the CRLF after a value; replies are counted no more', () => {
  const s = createSniffer()
  s.write(resp('PING'))
  // a length one byte short
  assert.equal(s.write('*2\r\n$3\r\nGET\r\n$2\r\nabc\r\n')?.op, 'GET')
  assert.equal(s.reads('$-1\r\n'), -1)
  assert.equal(s.write(resp('DEL', 'k'))?.op, 'DEL', 'the next write is parsed afresh')
})

test('reads before the first write cannot be counted, but do not stop the counting', () => {
  const s = createSniffer()
  assert.equal(s.reads('+OK\r\n'), -1)
  assert.equal(s.protocol(), null)
  s.write(resp('GET', 'k'))
  assert.equal(s.reads('$-1\r\n'), 1)
})

test('redis: subscribe mode and garbage stop the counting for good', () => {
  const sub = createSniffer()
  assert.equal(sub.write(resp('SUBSCRIBE', 'news'))?.op, 'SUBSCRIBE')
  assert.equal(sub.reads('*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n'), -1)
  const bad = createSniffer()
  bad.write(resp('GET', 'a'))
  bad.write(resp('GET', 'b'))
  assert.equal(bad.reads('$1\r\na\r\n'), 1)
  assert.equal(bad.reads('?garbage\r\n'), -1)
  assert.equal(bad.reads('$1\r\nb\r\n'), -1)
})

// ---------------------------------------------------------------------------------------------------------------
// Drivers against fake servers

/**
 * Runs `client` against a fake server on 127.0.0.1 and records, in order, each write of the client's sockets and
 * each chunk they read: what the probe sees of them.
 * @param {(socket: net.Socket) => void} serve
 * @param {(port: number) => Promise<void>} client
 */
async function capture (serve, client) {
  const server = net.createServer(serve)
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const port = /** @type {net.AddressInfo} */ (server.address()).port
  /** @type {{ write: boolean, chunk: Buffer | string }[]} */
  const events = []
  const proto = /** @type {any} */ (net.Socket.prototype)
  const { write, push } = proto
  proto.write = function (/** @type {any} */ chunk, /** @type {any[]} */ ...rest) {
    if (this.remotePort === port) events.push({ write: true, chunk: typeof chunk === 'string' ? chunk : Buffer.from(chunk) })
    return write.call(this, chunk, ...rest)
  }
  proto.push = function (/** @type {any} */ chunk, /** @type {any[]} */ ...rest) {
    if (chunk && this.remotePort === port) events.push({ write: false, chunk: Buffer.from(chunk) })
    return push.call(this, chunk, ...rest)
  }
  try {
    await client(port)
  } finally {
    proto.write = write
    proto.push = push
    server.close()
  }
  return events
}

/**
 * Replays recorded traffic through a sniffer: the operations named, and how many were answered.
 * @param {{ write: boolean, chunk: Buffer | string }[]} events
 */
function replay (events) {
  const s = createSniffer()
  /** @type {(string | null)[]} */
  const names = []
  let done = 0
  for (const e of events) {
    if (e.write) {
      const started = s.write(e.chunk)
      if (started !== null) names.push(started.op)
    } else {
      const n = s.reads(e.chunk)
      assert.ok(n >= 0, 'replies counted')
      done += n
    }
  }
  return { names, done, protocol: s.protocol() }
}

/**
 * A PostgreSQL server that trusts everyone and answers every query with no rows.
 * @param {net.Socket} socket
 */
function fakePostgres (socket) {
  let buf = Buffer.alloc(0)
  let started = false
  socket.on('data', d => {
    buf = Buffer.concat([buf, d])
    for (;;) {
      if (!started) {
        if (buf.length < 4 || buf.length < buf.readInt32BE(0)) return
        buf = buf.subarray(buf.readInt32BE(0))
        started = true
        socket.write(Buffer.concat([pgAuth(0), pgReady]))
        continue
      }
      if (buf.length < 5 || buf.length < buf.readInt32BE(1) + 1) return
      const type = String.fromCharCode(buf[0])
      buf = buf.subarray(buf.readInt32BE(1) + 1)
      const reply = { Q: Buffer.concat([pgComplete, pgReady]), P: pg('1'), B: pg('2'), D: pg('n'), E: pgComplete, S: pgReady }[type]
      if (reply) socket.write(reply)
      if (type === 'X') socket.end()
    }
  })
}

test('postgres: the writes of the pg driver', async () => {
  const { Client } = driver('pg')
  const events = await capture(fakePostgres, async (port) => {
    const client = new Client({ host: '127.0.0.1', port, user: 'app', database: 'shop' })
    await client.connect()
    await client.query('SELECT id, name, email FROM users WHERE id = $1', [42])
    await client.query({ name: 'session', text: 'SELECT * FROM sessions WHERE id = $1', values: ['a'] })
    await client.query({ name: 'session', text: 'SELECT * FROM sessions WHERE id = $1', values: ['b'] })
    await client.query("SELECT 1 WHERE 'a' IN ('a', 'b')")
    await client.end()
  })
  const { names, done, protocol } = replay(events)
  assert.equal(protocol, 'postgres')
  assert.deepEqual(names, ['startup', 'SELECT … FROM users WHERE id = $1', 'SELECT * FROM sessions WHERE id = $1',
    'SELECT * FROM sessions WHERE id = $1', 'SELECT ? WHERE ? IN (…)'])
  assert.equal(done, names.length)
})

/**
 * A Redis server speaking RESP3 after HELLO, with MULTI.
 * @param {net.Socket} socket
 */
function fakeRedis (socket) {
  let buf = ''
  /** @type {string[] | null} */
  let queued = null
  socket.setEncoding('latin1')
  socket.on('data', (/** @type {string} */ d) => {
    buf += d
    for (;;) {
      const command = parseCommand(buf)
      if (command === null) return
      buf = buf.slice(command.length)
      const name = command.args[0].toUpperCase()
      /** @type {string} */
      let reply
      if (name === 'HELLO') reply = '%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n'
      else if (name === 'MULTI') { queued = []; reply = '+OK\r\n' } else if (name === 'EXEC') {
        reply = `*${queued?.length ?? 0}\r\n${(queued ?? []).join('')}`
        queued = null
      } else {
        const result = name === 'GET' ? '$-1\r\n' : name === 'INCR' ? ':1\r\n' : '+OK\r\n'
        if (queued !== null) { queued.push(result); reply = '+QUEUED\r\n' } else reply = result
      }
      socket.write(reply, 'latin1')
    }
  })
}

/**
 * The first complete RESP array in the text, or null.
 * @param {string} text
 */
function parseCommand (text) {
  const m = /^\*(\d+)\r\n/.exec(text)
  if (m === null) return null
  let i = m[0].length
  const args = []
  for (let k = 0; k < Number(m[1]); k++) {
    const h = /^\$(\d+)\r\n/.exec(text.slice(i))
    if (h === null) return null
    const start = i + h[0].length
    const end = start + Number(h[1])
    if (text.length < end + 2) return null
    args.push(text.slice(start, end))
    i = end + 2
  }
  return { args, length: i }
}

test('redis: the writes of the ioredis driver, pipelines and MULTI included', async () => {
  const Redis = driver('ioredis')
  const events = await capture(fakeRedis, async (port) => {
    const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, enableReadyCheck: false, connectionName: 'app', db: 2 })
    await redis.connect()
    await redis.get('k')
    await redis.set('k', 'héllo wörld')
    await redis.pipeline().get('a').set('b', Buffer.from([0, 1, 13, 10])).incr('c').exec()
    await redis.multi().set('a', '1').incr('c').exec()
    await Promise.all([redis.get('x'), redis.get('y'), redis.get('z')])
    redis.disconnect()
  })
  const { names, done, protocol } = replay(events)
  assert.equal(protocol, 'redis')
  assert.deepEqual(names.slice(0, 3), ['HELLO', 'SELECT', 'CLIENT SETNAME'])
  const rest = names.slice(3).filter(n => n !== 'CLIENT SETINFO')
  assert.deepEqual(rest.slice(0, 4), ['GET', 'SET', 'pipeline (GET, SET, INCR)', 'MULTI (SET, INCR)'])
  assert.ok(rest.slice(4).every(n => n === 'GET' || /^GET ×\d$/.test(String(n))), JSON.stringify(rest))
  assert.equal(done, names.length)
})

// ---------------------------------------------------------------------------------------------------------------
// MySQL

/**
 * @param {number} seq
 * @param {Buffer} payload
 */
function mysql (seq, payload) {
  const head = Buffer.alloc(4)
  head.writeUIntLE(payload.length, 0, 3)
  head[3] = seq
  return Buffer.concat([head, payload])
}

/** @param {number} n */
function le32 (n) {
  const b = Buffer.alloc(4)
  b.writeInt32LE(n | 0)
  return b
}

const mysqlGreeting = mysql(0, Buffer.concat([Buffer.from([10]), cstr('8.0.36'), le32(12), Buffer.alloc(30, 1)]))
// capabilities (4.1, secure connection, plugin auth…), max packet, charset, 23 zero bytes, user, auth data,
// database, auth plugin
const mysqlHandshake = mysql(1, Buffer.concat([le32(0x000fa685), le32(1 << 24), Buffer.from([45]), Buffer.alloc(23), cstr('app'),
  Buffer.from([20]), Buffer.alloc(20, 7), cstr('shop'), cstr('caching_sha2_password')]))
/**
 * @param {number} command
 * @param {Buffer | string} [body]
 */
const mysqlCommand = (command, body = '') => mysql(0, Buffer.concat([Buffer.from([command]), Buffer.from(body)]))

test('mysql: greeting, handshake, authentication, queries, prepared statements by the id the server gives', () => {
  const s = createSniffer()
  assert.equal(s.reads(mysqlGreeting), -1)
  assert.equal(s.protocol(), 'mysql')
  assert.deepEqual(s.write(mysqlHandshake), { protocol: 'mysql', op: 'handshake' })
  s.reads(mysql(2, Buffer.from([0xfe, ...cstr('mysql_native_password'), ...Buffer.alloc(20, 3)])))
  assert.equal(s.write(mysql(3, Buffer.alloc(20, 9)))?.op, 'auth')
  s.reads(mysql(4, Buffer.from([0, 0, 0, 2, 0, 0, 0])))
  assert.equal(s.write(mysqlCommand(0x03, "SELECT * FROM users WHERE id = 42 AND name = 'o\\'brien'"))?.op,
    'SELECT * FROM users WHERE id = ? AND name = ?')
  assert.equal(s.write(mysqlCommand(0x16, 'SELECT name, email FROM users WHERE id = ?'))?.op, 'PREPARE SELECT … FROM users WHERE id = ?')
  // STMT_PREPARE_OK for statement 7, split across reads
  const ok = mysql(1, Buffer.concat([Buffer.from([0]), le32(7), Buffer.from([2, 0, 1, 0, 0, 0, 0])]))
  s.reads(ok.subarray(0, 6))
  s.reads(ok.subarray(6))
  const execute = (/** @type {number} */ id) => mysqlCommand(0x17, Buffer.concat([le32(id), Buffer.from([0, 1, 0, 0, 0])]))
  assert.equal(s.write(execute(7))?.op, 'SELECT … FROM users WHERE id = ?')
  assert.equal(s.write(execute(8))?.op, 'EXECUTE')
  assert.equal(s.write(mysqlCommand(0x19, le32(7))), null, 'COM_STMT_CLOSE gets no reply')
  assert.equal(s.write(execute(7))?.op, 'EXECUTE')
  assert.equal(s.write(mysqlCommand(0x0e))?.op, 'PING')
  assert.equal(s.write(mysqlCommand(0x01)), null, 'COM_QUIT gets no reply')
})

test('mysql: with query attributes, the SQL follows their counts', () => {
  const s = createSniffer()
  const caps = 0x000fa685 | 0x08000000
  s.write(mysql(1, Buffer.concat([le32(caps), le32(1 << 24), Buffer.from([45]), Buffer.alloc(23), cstr('app'), Buffer.from([0])])))
  assert.equal(s.write(mysqlCommand(0x03, Buffer.concat([Buffer.from([0, 1]), Buffer.from('SELECT 1')])))?.op, 'SELECT ?')
  // with attributes, their values come before the SQL: not named
  const attributes = Buffer.from([1, 1, 0, 1, 0xfe, 0, 1, 0x61, 1, 0x31])
  assert.deepEqual(s.write(mysqlCommand(0x03, Buffer.concat([attributes, Buffer.from('SELECT 1')]))), { protocol: 'mysql', op: null })
})

test('mysql: recognised from the handshake alone, a query split across writes, and mid-connection', () => {
  const s = createSniffer()
  assert.equal(s.write(mysqlHandshake)?.op, 'handshake')
  const query = mysqlCommand(0x03, 'SELECT 1')
  for (const [a, b] of splits(query).slice(1)) {
    const names = ops(s, [a, b])
    assert.equal(names.length, 1)
    assert.equal(s.protocol(), 'mysql')
  }
  const mid = createSniffer()
  assert.deepEqual(mid.write(mysqlCommand(0x03, 'COMMIT')), { protocol: 'mysql', op: 'COMMIT' })
  assert.equal(mid.write(mysql(1, Buffer.from('file contents'))), null, 'a packet of a command under way')
})

// ---------------------------------------------------------------------------------------------------------------
// MongoDB

/**
 * A BSON document of strings and int32s, in order.
 * @param {[string, string | number][]} fields
 */
function bson (fields) {
  const parts = fields.map(([k, v]) => typeof v === 'string'
    ? Buffer.concat([Buffer.from([0x02]), cstr(k), le32(Buffer.byteLength(v) + 1), cstr(v)])
    : Buffer.concat([Buffer.from([0x10]), cstr(k), le32(v)]))
  const body = Buffer.concat([...parts, Buffer.from([0])])
  return Buffer.concat([le32(body.length + 4), body])
}

/**
 * @param {number} opCode
 * @param {Buffer} body
 * @param {number} [requestId]
 */
function mongo (opCode, body, requestId = 1) {
  return Buffer.concat([le32(body.length + 16), le32(requestId), le32(0), le32(opCode), body])
}

/**
 * @param {[string, string | number][]} fields
 * @param {number} [flags]
 */
const opMsg = (fields, flags = 0) => mongo(2013, Buffer.concat([le32(flags), Buffer.from([0]), bson(fields)]))

test('mongodb: OP_QUERY hello, OP_MSG commands with their collection, moreToCome, compression', () => {
  const s = createSniffer()
  const hello = mongo(2004, Buffer.concat([le32(0), cstr('admin.$cmd'), le32(0), le32(-1), bson([['isMaster', 1], ['client', 'x']])]))
  assert.deepEqual(s.write(hello), { protocol: 'mongodb', op: 'isMaster' })
  assert.equal(s.write(opMsg([['find', 'sessions'], ['filter', 'x'], ['$db', 'app']]))?.op, 'find sessions')
  assert.equal(s.write(opMsg([['getMore', 12], ['collection', 'sessions']]))?.op, 'getMore')
  // a document sequence before the body
  const sequence = Buffer.concat([Buffer.from([1]), le32(4 + 10 + bson([['a', 1]]).length), cstr('documents'), bson([['a', 1]])])
  assert.equal(s.write(mongo(2013, Buffer.concat([le32(0), sequence, Buffer.from([0]), bson([['insert', 'events']])])))?.op, 'insert events')
  assert.equal(s.write(opMsg([['insert', 'logs']], 2)), null, 'moreToCome: no reply')
  assert.equal(s.write(mongo(2012, Buffer.concat([le32(2013), le32(100), Buffer.from([1]), Buffer.alloc(20)])))?.op, 'compressed')
  // several requests in one write, one split over two
  const two = Buffer.concat([opMsg([['update', 'users']]), opMsg([['delete', 'users']]), opMsg([['count', 'users']])])
  const t = createSniffer()
  assert.deepEqual(ops(t, [two.subarray(0, 30), two.subarray(30, 100), two.subarray(100)]), ['update users', 'count users'])
  // the first write starts nothing; the second holds two requests, so it asks for two replies
  assert.equal(t.reads(opMsg([['ok', 1]])), 0)
  assert.equal(t.reads(opMsg([['ok', 1]])), 1)
  assert.equal(t.reads(opMsg([['ok', 1]])), 1)
})

test('mongodb: replies are length-prefixed messages, except the moreToCome ones of an exhaust stream', () => {
  const s = createSniffer()
  s.write(opMsg([['hello', 1]]))
  s.write(opMsg([['find', 'a']]))
  s.write(opMsg([['find', 'b']]))
  const reply = (/** @type {number} */ flags) => opMsg([['ok', 1]], flags)
  assert.equal(s.reads(Buffer.concat([reply(0), reply(2)])), 1)
  const rest = Buffer.concat([reply(0), reply(0)])
  for (const chunks of splits(rest)) {
    const t = createSniffer()
    t.write(opMsg([['find', 'a']]))
    t.write(opMsg([['find', 'b']]))
    assert.equal(answered(t, chunks), 2)
  }
  assert.equal(s.reads(Buffer.from([1, 0, 0, 0, 0, 0, 0, 0])), -1, 'a message shorter than its header')
})

// ---------------------------------------------------------------------------------------------------------------
// HTTP, memcached, TLS, unknown protocols

test('http: request lines without the query, ids in paths as :id; body writes start nothing', () => {
  const s = createSniffer()
  assert.deepEqual(s.write('GET /price/42?currency=eur HTTP/1.1\r\nHost: prices\r\n\r\n'), { protocol: 'http', op: 'GET /price/:id' })
  assert.equal(s.write('POST /orders/a1b2/items HTTP/1.1\r\nContent-Length: 13\r\n\r\n')?.op, 'POST /orders/:id/items')
  assert.equal(s.write('{"item":"GET"}'), null)
  assert.equal(s.write(Buffer.from('PROPFIND /dav/ HTTP/1.1\r\n\r\n'))?.op, 'PROPFIND /dav/')
  assert.equal(s.write('GET http://api:8080/v2/users/42 HTTP/1.1\r\n\r\n')?.op, 'GET http://api:8080/:id/users/:id')
  assert.equal(s.reads('HTTP/1.1 200 OK\r\n\r\n'), -1)
})

test('memcached: commands by name, data blocks skipped even across writes, noreply', () => {
  const s = createSniffer()
  assert.deepEqual(s.write('get session:42\r\n'), { protocol: 'memcached', op: 'get' })
  assert.equal(s.write('set k 0 60 14\r\nget x\r\nget y\r\n\r\n')?.op, 'set')
  assert.equal(s.write('set k 0 60 11\r\nhello')?.op, 'set')
  assert.equal(s.write(' world\r\n'), null, 'the rest of a data block')
  assert.deepEqual(ops(s, ['delete a noreply\r\nincr n 1\r\n']), ['incr'])
  assert.equal(createSniffer().write('set k 0 0 5\r\nhello\r\n')?.protocol, 'memcached')
  // not memcached: a word it does not know, or a storage command without its numbers
  assert.equal(createSniffer().write('set k\r\n')?.protocol, 'tcp')
})

test('unknown protocols: the first word of a text line, nothing for binary; a later RESP write is recognised', () => {
  const s = createSniffer()
  assert.deepEqual(s.write('ping\r\n'), { protocol: 'tcp', op: 'PING' })
  assert.deepEqual(s.write(resp('GET', 'k')), { protocol: 'redis', op: 'GET' })
  const line = createSniffer()
  assert.deepEqual(line.write('STATUS all\n'), { protocol: 'tcp', op: 'STATUS' })
  assert.deepEqual(line.write('averyveryverylongword x\n'), { protocol: 'tcp', op: null })
  assert.deepEqual(line.write('GET\u0000x'), { protocol: 'tcp', op: null })
  assert.equal(line.reads('OK\n'), -1)
  const binary = createSniffer()
  assert.deepEqual(binary.write(Buffer.from([0xde, 0xad, 0xbe, 0xef, 1, 2, 3])), { protocol: 'tcp', op: null })
  const tls = createSniffer()
  assert.deepEqual(tls.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0, 0, 0xc4, 3, 3])), { protocol: 'tls', op: 'handshake' })
  assert.deepEqual(tls.write(Buffer.from([0x17, 0x03, 0x03, 0, 5, 1, 2, 3, 4, 5])), { protocol: 'tls', op: null })
  assert.equal(createSniffer().write(''), null)
  assert.equal(createSniffer().write(/** @type {any} */ ({ not: 'bytes' })), null)
})

// ---------------------------------------------------------------------------------------------------------------
// Untrusted bytes

/** A small deterministic generator, so that a failure can be replayed. */
function random (seed = 42) {
  let x = seed
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 0x100000000
  }
}

/**
 * Random bytes, some drawn from the protocols' alphabets so that the parsers go deep.
 * @param {() => number} rnd
 */
function junk (rnd) {
  const length = Math.floor(rnd() ** 3 * 4096)
  const alphabet = ['*', '$', '\r', '\n', '1', '3', '-', '%', '>', '|', 'Q', 'P', 'S', 'Z', '\0']
  const b = Buffer.alloc(length)
  for (let i = 0; i < length; i++) {
    b[i] = rnd() < 0.5 ? Math.floor(rnd() * 256) : alphabet[Math.floor(rnd() * alphabet.length)].charCodeAt(0)
  }
  return b
}

test('random bytes after every kind of first write never throw, return well-formed results, and are quick', () => {
  const rnd = random()
  const firsts = [pgStartup({ user: 'u' }), pgQuery('SELECT 1'), resp('GET', 'k'), mysqlHandshake, mysqlCommand(0x03, 'SELECT 1'),
    opMsg([['find', 'x']]), Buffer.from('GET / HTTP/1.1\r\n\r\n'), Buffer.from('get k\r\n'), Buffer.from('HELLO\n'), Buffer.alloc(0)]
  const started = performance.now()
  for (let round = 0; round < 300; round++) {
    for (const first of firsts) {
      const s = createSniffer()
      if (first.length > 0) s.write(first)
      for (let k = 0; k < 5; k++) {
        const w = s.write(rnd() < 0.2 ? junk(rnd).toString('latin1') : junk(rnd))
        assert.ok(w === null || (typeof w.protocol === 'string' && (w.op === null || typeof w.op === 'string')))
        const r = s.reads(junk(rnd))
        assert.ok(Number.isInteger(r) && r >= -1)
      }
    }
  }
  const ms = performance.now() - started
  assert.ok(ms < 5000, `${ms} ms for 15000 random writes and reads`)
})

test('payloads are skipped by their length, not scanned: 64 MB values and 64 MB of garbage take little time', () => {
  const big = Buffer.alloc(64 * 1024 * 1024, 0x61)
  const s = createSniffer()
  s.write(resp('PING'))
  let t = performance.now()
  assert.deepEqual(ops(s, [`*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$${big.length}\r\n`, big, '\r\n', resp('GET', 'k')]), ['SET', 'GET'])
  assert.ok(performance.now() - t < 50, `${performance.now() - t} ms`)
  const p = createSniffer()
  p.write(pgStartup({ user: 'u' }))
  const copy = Buffer.concat([pg('d', Buffer.alloc(0)).subarray(0, 1), int32(big.length + 4)])
  t = performance.now()
  assert.deepEqual(ops(p, [pgQuery('COPY t FROM STDIN'), copy, big, pg('c'), pgQuery('SELECT 1')]), ['COPY t FROM STDIN', 'SELECT ?'])
  assert.ok(performance.now() - t < 50, `${performance.now() - t} ms`)
  for (const first of [resp('SET', 'k', 'v'), pgQuery('SELECT 1'), opMsg([['find', 'x']]), Buffer.from('x y\n'), Buffer.from('get k\r\n')]) {
    const g = createSniffer()
    g.write(first)
    t = performance.now()
    g.write(big)
    g.reads(big)
    assert.ok(performance.now() - t < 50, `${performance.now() - t} ms`)
  }
})

// ---------------------------------------------------------------------------------------------------------------
// foldSql

test('foldSql: literals, lists, comments, whitespace, placeholders', () => {
  const cases = [
    ["SELECT * FROM users WHERE id = 42 AND name = 'bob''s'", 'SELECT * FROM users WHERE id = ? AND name = ?'],
    ['select *\n  from   t -- comment\n where a = 1.5e-3 /* a /* nested */ comment */ and b = .5',
      'select * from t where a = ? and b = ?'],
    ["SELECT * FROM t WHERE a = E'it\\'s' AND b = $$x$$ AND c = $tag$ $$ $tag$ AND d = X'ff'",
      'SELECT * FROM t WHERE a = ? AND b = ? AND c = ? AND d = ?'],
    ['SELECT * FROM t WHERE id IN (1, 2, 3) AND x NOT IN ($1,$2) AND y in (?, ?) AND z IN (:a, :b)',
      'SELECT * FROM t WHERE id IN (…) AND x NOT IN (…) AND y in (…) AND z IN (…)'],
    ['SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE v = 2)',
      'SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE v = ?)'],
    ["INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (DEFAULT, NULL) RETURNING id",
      'INSERT INTO t (a, b) VALUES (…) RETURNING id'],
    ['INSERT INTO t VALUES ($1, $2) ON CONFLICT (id) DO NOTHING',
      'INSERT INTO t VALUES (…) ON CONFLICT (id) DO NOTHING'],
    ['INSERT INTO t VALUES (now(), 1)', 'INSERT INTO t VALUES (now(), ?)'],
    ['SELECT a, b FROM t WHERE id = $1', 'SELECT … FROM t WHERE id = $1'],
    ['SELECT count(*) FROM t', 'SELECT count(*) FROM t'],
    ['SELECT "User"."id" FROM "User"', 'SELECT "User"."id" FROM "User"'],
    ['SELECT very_long_column_name_here FROM t', 'SELECT … FROM t'],
    ['SELECT max(a, b) FROM t', 'SELECT max(a, b) FROM t'],
    ['SELECT (SELECT max(x) FROM t2), a FROM t', 'SELECT … FROM t'],
    ['SELECT extract(year FROM ts) AS y FROM t', 'SELECT … FROM t'],
    ['SELECT x FROM t WHERE a::int = $1 AND b = -1;', 'SELECT x FROM t WHERE a::int = $1 AND b = -?'],
    ['DELETE FROM `order` WHERE id = 0x1F', 'DELETE FROM `order` WHERE id = ?'],
    ['', '']
  ]
  for (const [input, expected] of cases) assert.equal(foldSql(input), expected, input)
})

test('foldSql: cut at 120 characters; unterminated strings and comments; hostile inputs stay linear', () => {
  const long = foldSql(`UPDATE t SET ${Array.from({ length: 60 }, (_, i) => `c${i} = ${i}`).join(', ')} WHERE id = 1`)
  assert.equal(long.length, 120)
  assert.ok(long.endsWith('…') && long.startsWith('UPDATE t SET c0 = ?, c1 = ?'))
  assert.equal(foldSql("SELECT 'unterminated"), 'SELECT ?')
  assert.equal(foldSql('SELECT 1 /* open'), 'SELECT ?')
  const hostile = ['('.repeat(1e6), "'".repeat(1e6), '/*'.repeat(5e5), 'IN ('.repeat(2e5), 'VALUES (1),'.repeat(1e5),
    '$a'.repeat(5e5), 'SELECT a,'.repeat(1e5)]
  for (const input of hostile) {
    const t = performance.now()
    const out = foldSql(input)
    assert.ok(out.length <= 120)
    assert.ok(performance.now() - t < 200, `${input.slice(0, 10)}…: ${performance.now() - t} ms`)
  }
})
