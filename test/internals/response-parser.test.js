// The response framer reads untrusted bytes from any server: it is tested on every split of every shape, on stale
// bytes after the end of a read, and on random and corrupted input, where it must report errors and never throw.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ResponseParser } from '../../src/load/response-parser.js'

/**
 * @param {{ head?: boolean[] }} [opts] per response, whether its request was HEAD
 */
function collector (opts = {}) {
  /** @type {{ status: number, willClose: boolean }[]} */
  const responses = []
  /** @type {string[]} */
  const errors = []
  const parser = new ResponseParser({
    onResponse (status, willClose) { responses.push({ status, willClose }) },
    onError (reason) { errors.push(reason) },
    expectsNoBody () { return opts.head?.[responses.length] ?? false }
  })
  return { parser, responses, errors }
}

/**
 * Feeds chunks through a reused, oversized buffer whose tail holds stale bytes, as the connection does.
 * @param {ResponseParser} parser
 * @param {Buffer[]} chunks
 */
function feed (parser, chunks) {
  const shared = Buffer.alloc(70000, '\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n')
  for (const chunk of chunks) {
    chunk.copy(shared)
    parser.execute(shared, chunk.length)
  }
}

/** @param {Buffer} bytes */
function splits (bytes) {
  /** @type {Buffer[][]} */
  const out = [[bytes], [...bytes].map(b => Buffer.from([b]))]
  for (let i = 1; i < bytes.length; i++) out.push([bytes.subarray(0, i), bytes.subarray(i)])
  return out
}

const SHAPES = [
  {
    name: 'content-length',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello',
    expect: [{ status: 200, willClose: false }]
  },
  {
    name: 'lower-case headers, no reason phrase',
    bytes: 'HTTP/1.1 404\r\ncontent-length: 3\r\n\r\nnop',
    expect: [{ status: 404, willClose: false }]
  },
  {
    name: 'chunked with extension and trailer',
    bytes: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: yes\r\n\r\n',
    expect: [{ status: 200, willClose: false }]
  },
  {
    name: 'chunked, upper-case hex, no trailer',
    bytes: 'HTTP/1.1 201 Created\r\ntransfer-encoding: gzip, chunked\r\n\r\n1F\r\n' + 'x'.repeat(31) + '\r\n0\r\n\r\n',
    expect: [{ status: 201, willClose: false }]
  },
  {
    name: 'pipelined responses in one stream',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\nHTTP/1.1 302 Found\r\nLocation: /\r\nContent-Length: 1\r\n\r\nx',
    expect: [{ status: 200, willClose: false }, { status: 500, willClose: false }, { status: 302, willClose: false }]
  },
  {
    name: '204 and 304 have no body whatever their headers say',
    bytes: 'HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\nHTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n',
    expect: [{ status: 204, willClose: false }, { status: 304, willClose: false }]
  },
  {
    name: 'interim 100 Continue then the final response',
    bytes: 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    expect: [{ status: 200, willClose: false }]
  },
  {
    name: 'Connection: close is reported',
    bytes: 'HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 2\r\n\r\nok',
    expect: [{ status: 200, willClose: true }]
  },
  {
    name: 'HTTP/1.0 keep-alive',
    bytes: 'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok',
    expect: [{ status: 200, willClose: false }]
  },
  {
    name: 'HTTP/1.0 defaults to close',
    bytes: 'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok',
    expect: [{ status: 200, willClose: true }]
  }
]

for (const shape of SHAPES) {
  test(`frames ${shape.name}, whole, split at every byte and byte by byte`, () => {
    for (const chunks of splits(Buffer.from(shape.bytes, 'latin1'))) {
      const { parser, responses, errors } = collector()
      feed(parser, chunks)
      assert.deepEqual(errors, [])
      assert.deepEqual(responses, shape.expect)
      assert.equal(parser.midResponse, false)
    }
  })
}

test('HEAD responses end at the head even with a Content-Length', () => {
  const bytes = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
  for (const chunks of splits(bytes)) {
    const { parser, responses, errors } = collector({ head: [true, false] })
    feed(parser, chunks)
    assert.deepEqual(errors, [])
    assert.equal(responses.length, 2)
  }
})

test('a body without length ends with the connection', () => {
  const { parser, responses } = collector()
  feed(parser, [Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome body')])
  assert.equal(responses.length, 0)
  assert.equal(parser.midResponse, true)
  assert.equal(parser.finish(), true)
  assert.deepEqual(responses, [{ status: 200, willClose: true }])
})

test('a truncated response is not reported complete', () => {
  const { parser, responses } = collector()
  feed(parser, [Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc')])
  assert.equal(parser.finish(), false)
  assert.equal(parser.midResponse, true)
  assert.equal(responses.length, 0)
})

const GARBAGE = [
  ['not HTTP at all', 'SSH-2.0-OpenSSH_9.2\r\n'],
  ['HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
  ['bad status code', 'HTTP/1.1 2x0 OK\r\n\r\n'],
  ['status out of range', 'HTTP/1.1 999 Nope\r\n\r\n'],
  ['bare LF in head', 'HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n'],
  ['obsolete line folding', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\nContent-Length: 0\r\n\r\n'],
  ['non-numeric content-length', 'HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n'],
  ['conflicting content-lengths', 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab'],
  ['bad chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
  ['chunk longer than its size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n'],
  ['101 switching protocols', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n']
]

for (const [name, text] of GARBAGE) {
  test(`reports ${name} as an error, whole and byte by byte`, () => {
    for (const chunks of [[Buffer.from(text)], [...Buffer.from(text)].map(b => Buffer.from([b]))]) {
      const { parser, responses, errors } = collector()
      assert.doesNotThrow(() => feed(parser, chunks))
      assert.equal(errors.length, 1, `one error for ${name}`)
      assert.equal(responses.length, 0)
    }
  })
}

test('a head that never ends is cut off at 64 KiB', () => {
  const { parser, errors } = collector()
  const header = Buffer.from('X-Long: ' + 'a'.repeat(1000) + '\r\n')
  feed(parser, [Buffer.from('HTTP/1.1 200 OK\r\n'), ...Array.from({ length: 80 }, () => header)])
  assert.deepEqual(errors, ['response head larger than 64 KiB'])
})

/** A small seeded generator, so a failure names the seed that reproduces it. @param {number} seed */
function random (seed) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6D2B79F5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

test('random bytes never throw and never produce a response', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const rand = random(seed)
    const bytes = Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 400) }, () => Math.floor(rand() * 256)))
    const { parser, responses } = collector()
    assert.doesNotThrow(() => feed(parser, [bytes]), `seed ${seed}`)
    assert.equal(responses.length, 0, `seed ${seed}`)
  }
})

test('corrupted valid responses never throw, and split reads agree with whole ones', () => {
  const all = Buffer.from(SHAPES.map(s => s.bytes).join(''), 'latin1')
  for (let seed = 1; seed <= 400; seed++) {
    const rand = random(seed)
    const bytes = Buffer.from(all)
    for (let k = 0; k < 1 + Math.floor(rand() * 4); k++) bytes[Math.floor(rand() * bytes.length)] = Math.floor(rand() * 256)
    const whole = collector()
    assert.doesNotThrow(() => feed(whole.parser, [bytes]), `seed ${seed}`)
    const cut = Math.floor(rand() * bytes.length)
    const split = collector()
    assert.doesNotThrow(() => feed(split.parser, [bytes.subarray(0, cut), bytes.subarray(cut)]), `seed ${seed}`)
    assert.deepEqual(split.responses, whole.responses, `seed ${seed}: same responses however the bytes arrive`)
    assert.equal(split.errors.length, whole.errors.length, `seed ${seed}`)
  }
})
