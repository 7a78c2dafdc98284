// An incremental HTTP/1.1 response framer for the load generator.
//
// Why not a general parser (llhttp, http-parser-js)? A load generator needs only the frame of each response: status
// code, where the body ends (Content-Length, chunked, or close) and whether the server will close the connection. It
// never needs header values as strings. autocannon spends a large part of its CPU in http-parser-js building header
// arrays it throws away; this framer works on the bytes in place, allocates nothing per response in the common case
// (whole head in one read) and is the main reason `hotpath load` costs less CPU per request (see bench/load.js and the
// README). It is strict: anything that is not a well-formed HTTP/1.x response is reported through onError, never thrown,
// and test/response-parser.test.js feeds it split, corrupted and random input.

const CR = 13
const LF = 10
const STATUS_PREFIX = Buffer.from('HTTP/1.x ')
const CONTENT_LENGTH = Buffer.from('content-length')
const CONNECTION = Buffer.from('connection')
const TRANSFER_ENCODING = Buffer.from('transfer-encoding')
const CHUNKED = Buffer.from('chunked')
const CLOSE_TOKEN = Buffer.from('close')
const KEEP_ALIVE_TOKEN = Buffer.from('keep-alive')
const CLOSE = 1
const KEEP_ALIVE = 2
const INCOMPLETE = -2
const MAX_HEAD = 64 * 1024
// Called as indexOf.call(b, …): optimised code then calls it directly, where `b.indexOf` was a property lookup on
// every line (an out-of-line load IC; ~25 ns a response, 15% of the framing).
const indexOf = Buffer.prototype.indexOf

/**
 * Why a stream is not HTTP, as the framer reports it through onError (and the load counts it, by these words, in
 * `errorKinds`). A run whose only errors are these got no HTTP from the server at all.
 */
export const NOT_HTTP_REASONS = Object.freeze({
  headTooLarge: 'response head larger than 64 KiB',
  statusLine: 'malformed status line',
  headerLine: 'malformed header line',
  contentLength: 'invalid content-length',
  switchedProtocols: 'server switched protocols (101)',
  chunkSizeTooLarge: 'chunk size too large',
  chunkSize: 'invalid chunk size',
  chunkExtension: 'invalid chunk extension',
  chunkSizeLine: 'invalid chunk size line',
  chunkData: 'chunk data longer than its size',
  trailer: 'invalid chunked trailer',
  unsolicited: 'response without a request'
})

/**
 * Every reason in NOT_HTTP_REASONS, to classify counted errors by their kind.
 * @type {ReadonlySet<string>}
 */
export const NOT_HTTP = new Set(Object.values(NOT_HTTP_REASONS))

const HEAD = 0
const BODY = 1
const CHUNK_SIZE = 2
const CHUNK_EXT = 3
const CHUNK_SIZE_LF = 4
const CHUNK_DATA = 5
const CHUNK_DATA_CR = 6
const CHUNK_DATA_LF = 7
const TRAILER_START = 8
const TRAILER_LINE = 9
const TRAILER_LF = 10
const UNTIL_CLOSE = 11
const FAILED = 12

/**
 * @typedef {object} ResponseSink
 * @property {(status: number, willClose: boolean) => void} onResponse called once per complete final response
 * @property {(reason: string) => void} onError the stream is not valid HTTP; the parser stops until reset()
 * @property {() => boolean} expectsNoBody true when the request being answered was HEAD
 */

export class ResponseParser {
  /** @param {ResponseSink} sink */
  constructor (sink) {
    this.sink = sink
    this.state = HEAD
    /** @type {Buffer | null} head bytes carried over from an earlier read */
    this.carry = null
    this.remaining = 0
    this.sizeDigits = 0
    this.status = 0
    this.willClose = false
  }

  reset () {
    this.state = HEAD
    this.carry = null
    this.remaining = 0
    this.sizeDigits = 0
  }

  /** True while a response has started but not finished (used to tell a clean close from a truncated one). */
  get midResponse () {
    return this.state !== HEAD || this.carry !== null
  }

  /**
   * The connection ended. A body delimited by the close is complete now; anything else partial is an error.
   * @returns {boolean} whether a response completed
   */
  finish () {
    if (this.state === UNTIL_CLOSE) {
      this.state = HEAD
      this.sink.onResponse(this.status, true)
      return true
    }
    return false
  }

  /**
   * @param {Buffer} data
   * @param {number} end bytes of `data` received; what follows may be stale bytes of a reused read buffer, so every
   *   search past `end` is treated as not found
   */
  execute (data, end) {
    let i = 0
    while (i < end) {
      switch (this.state) {
        case HEAD: {
          i = this.carry === null ? this.headFrom(data, i, end) : this.headFromCarry(data, i, end)
          if (i < 0) return
          break
        }
        case BODY: {
          const take = Math.min(this.remaining, end - i)
          this.remaining -= take
          i += take
          if (this.remaining === 0) this.complete()
          break
        }
        case UNTIL_CLOSE:
          return
        case FAILED:
          return
        default:
          i = this.chunked(data, i, end)
      }
    }
  }

  /**
   * Fast path: the head starts in this buffer.
   * @param {Buffer} data
   * @param {number} start
   * @param {number} end
   * @returns {number} index after the head, or -1 when more bytes are needed or parsing failed
   */
  headFrom (data, start, end) {
    const next = this.parseHead(data, start, end)
    if (next === INCOMPLETE) {
      if (end - start > MAX_HEAD) return this.fail(NOT_HTTP_REASONS.headTooLarge)
      this.carry = Buffer.from(data.subarray(start, end))
      return -1
    }
    return next
  }

  /**
   * Slow path: part of the head came in an earlier read; parse the joined bytes again from the top.
   * @param {Buffer} data
   * @param {number} start
   * @param {number} end
   * @returns {number}
   */
  headFromCarry (data, start, end) {
    const carry = /** @type {Buffer} */ (this.carry)
    const joined = Buffer.concat([carry, data.subarray(start, end)])
    const next = this.parseHead(joined, 0, joined.length)
    if (next === INCOMPLETE) {
      if (joined.length > MAX_HEAD) return this.fail(NOT_HTTP_REASONS.headTooLarge)
      this.carry = joined
      return -1
    }
    this.carry = null
    return next < 0 ? next : start + next - carry.length
  }

  /**
   * Parses the status line and the headers that frame the body. Header lines that cannot frame the body are only
   * delimited, not validated: checking each for a colon would cost a scan per line on every response.
   * @param {Buffer} b
   * @param {number} start
   * @param {number} end
   * @returns {number} index after the head, INCOMPLETE, or -1 when it is not HTTP
   */
  parseHead (b, start, end) {
    // "HTTP/1.x NNN" — checked byte by byte as far as it has arrived; anything else is garbage at once.
    const have = Math.min(end - start, STATUS_PREFIX.length)
    for (let k = 0; k < have; k++) {
      if (b[start + k] !== STATUS_PREFIX[k] && k !== 7) return this.fail(NOT_HTTP_REASONS.statusLine)
    }
    if (end - start < 13) return INCOMPLETE
    const minor = b[start + 7] - 48
    const d0 = b[start + 9] - 48
    const d1 = b[start + 10] - 48
    const d2 = b[start + 11] - 48
    const after = b[start + 12]
    if (minor < 0 || minor > 1 || d0 < 1 || d0 > 5 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9 ||
      (after !== 32 && after !== CR)) {
      return this.fail(NOT_HTTP_REASONS.statusLine)
    }
    let i = indexOf.call(b, LF, start + 12)
    if (i === -1 || i >= end) return end - start > MAX_HEAD ? this.fail(NOT_HTTP_REASONS.headTooLarge) : INCOMPLETE
    if (b[i - 1] !== CR) return this.fail(NOT_HTTP_REASONS.statusLine)
    i++

    let contentLength = -1
    let chunked = false
    let close = minor === 0
    for (;;) {
      if (i + 1 >= end) return INCOMPLETE
      const first = b[i]
      if (first === CR) {
        if (b[i + 1] !== LF) return this.fail(NOT_HTTP_REASONS.headerLine)
        i += 2
        break
      }
      // Lines are found with indexOf (native, ~15 ns a call); JS looks only at the names that frame the body.
      const eol = indexOf.call(b, CR, i)
      if (eol === -1 || eol + 1 >= end) return INCOMPLETE
      if (b[eol + 1] !== LF || first <= 32 || first === 58) return this.fail(NOT_HTTP_REASONS.headerLine)
      // A framing header has its colon right after its name, so one byte tells whether the name can match.
      const lower = first | 0x20
      if (lower === 99) { // c…
        if (i + 14 < eol && b[i + 14] === 58 && nameIs(b, i, CONTENT_LENGTH)) {
          const n = parseDecimal(b, i + 15, eol)
          if (n < 0 || (contentLength !== -1 && contentLength !== n)) return this.fail(NOT_HTTP_REASONS.contentLength)
          contentLength = n
        } else if (i + 10 < eol && b[i + 10] === 58 && nameIs(b, i, CONNECTION)) {
          const v = connectionValue(b, i + 11, eol)
          if (v === CLOSE) close = true
          else if (v === KEEP_ALIVE) close = false
        }
      } else if (lower === 116 && i + 17 < eol && b[i + 17] === 58 && nameIs(b, i, TRANSFER_ENCODING)) {
        chunked = valueHas(b, i + 18, eol, CHUNKED)
      }
      i = eol + 2
    }

    const status = d0 * 100 + d1 * 10 + d2
    this.status = status
    this.willClose = close
    if (status < 200) {
      // 101 would hand the socket to another protocol; a load generator cannot follow.
      if (status === 101) return this.fail(NOT_HTTP_REASONS.switchedProtocols)
      return i // interim response (100 Continue, 103 Early Hints): the final one follows
    }
    if (status === 204 || status === 304 || this.sink.expectsNoBody()) {
      this.complete()
    } else if (chunked) {
      this.state = CHUNK_SIZE
      this.remaining = 0
      this.sizeDigits = 0
    } else if (contentLength >= 0) {
      this.remaining = contentLength
      if (contentLength === 0) this.complete()
      else this.state = BODY
    } else {
      this.state = UNTIL_CLOSE
      this.willClose = true
    }
    return i
  }

  /**
   * Walks a chunked body, byte by byte on the small framing parts, skipping chunk data in bulk.
   * @param {Buffer} b
   * @param {number} i
   * @param {number} end
   * @returns {number}
   */
  chunked (b, i, end) {
    while (i < end) {
      const c = b[i]
      switch (this.state) {
        case CHUNK_SIZE: {
          const h = hexValue(c)
          if (h >= 0) {
            if (this.remaining > 0x7fffffff) return this.failAt(NOT_HTTP_REASONS.chunkSizeTooLarge, end)
            this.remaining = this.remaining * 16 + h
            this.sizeDigits++
            i++
          } else if (this.sizeDigits > 0 && (c === 59 || c === 32 || c === 9)) { // ';' extension or whitespace
            this.state = CHUNK_EXT
            i++
          } else if (this.sizeDigits > 0 && c === CR) {
            this.state = CHUNK_SIZE_LF
            i++
          } else {
            return this.failAt(NOT_HTTP_REASONS.chunkSize, end)
          }
          break
        }
        case CHUNK_EXT:
          if (c === CR) this.state = CHUNK_SIZE_LF
          else if (c === LF) return this.failAt(NOT_HTTP_REASONS.chunkExtension, end)
          i++
          break
        case CHUNK_SIZE_LF:
          if (c !== LF) return this.failAt(NOT_HTTP_REASONS.chunkSizeLine, end)
          i++
          this.sizeDigits = 0
          this.state = this.remaining === 0 ? TRAILER_START : CHUNK_DATA
          break
        case CHUNK_DATA: {
          const take = Math.min(this.remaining, end - i)
          this.remaining -= take
          i += take
          if (this.remaining === 0) this.state = CHUNK_DATA_CR
          break
        }
        case CHUNK_DATA_CR:
          if (c !== CR) return this.failAt(NOT_HTTP_REASONS.chunkData, end)
          this.state = CHUNK_DATA_LF
          i++
          break
        case CHUNK_DATA_LF:
          if (c !== LF) return this.failAt(NOT_HTTP_REASONS.chunkData, end)
          this.state = CHUNK_SIZE
          i++
          break
        case TRAILER_START:
          // Either the final CRLF, or a trailer field line.
          if (c === CR) this.state = TRAILER_LF
          else this.state = TRAILER_LINE
          i++
          break
        case TRAILER_LINE:
          if (c === LF) this.state = TRAILER_START
          i++
          break
        case TRAILER_LF:
          if (c !== LF) return this.failAt(NOT_HTTP_REASONS.trailer, end)
          i++
          this.complete()
          return i
        default:
          return i
      }
    }
    return i
  }

  complete () {
    this.state = HEAD
    this.sink.onResponse(this.status, this.willClose)
  }

  /**
   * @param {string} reason
   * @returns {-1}
   */
  fail (reason) {
    this.state = FAILED
    this.carry = null
    this.sink.onError(reason)
    return -1
  }

  /**
   * @param {string} reason
   * @param {number} end
   * @returns {number} `end`, so the caller's loop stops
   */
  failAt (reason, end) {
    this.fail(reason)
    return end
  }
}

/**
 * Case-insensitive compare of bytes at `at` against a lower-case ASCII constant.
 * @param {Buffer} b
 * @param {number} at
 * @param {Buffer} lower
 */
function nameIs (b, at, lower) {
  for (let k = 0; k < lower.length; k++) {
    if ((b[at + k] | 0x20) !== lower[k]) return false
  }
  return true
}

/**
 * Whether a comma-separated header value contains `token` (case-insensitive, whole token).
 * @param {Buffer} b
 * @param {number} from
 * @param {number} to
 * @param {Buffer} token
 */
function valueHas (b, from, to, token) {
  const n = token.length
  for (let s = from; s + n <= to; s++) {
    if ((b[s] | 0x20) === token[0] && nameIs(b, s, token)) {
      const before = s === from ? 32 : b[s - 1]
      const after = s + n === to ? 32 : b[s + n]
      if ((before === 32 || before === 44 || before === 9) && (after === 32 || after === 44 || after === 9)) return true
    }
  }
  return false
}

/**
 * The Connection header's verdict: CLOSE, KEEP_ALIVE, or 0. The usual single-token values are recognised without
 * scanning; lists ("keep-alive, Upgrade") fall back to a token search.
 * @param {Buffer} b
 * @param {number} from
 * @param {number} to
 */
function connectionValue (b, from, to) {
  while (from < to && (b[from] === 32 || b[from] === 9)) from++
  while (to > from && (b[to - 1] === 32 || b[to - 1] === 9)) to--
  const n = to - from
  if (n === 10 && nameIs(b, from, KEEP_ALIVE_TOKEN)) return KEEP_ALIVE
  if (n === 5 && nameIs(b, from, CLOSE_TOKEN)) return CLOSE
  if (valueHas(b, from, to, CLOSE_TOKEN)) return CLOSE
  if (valueHas(b, from, to, KEEP_ALIVE_TOKEN)) return KEEP_ALIVE
  return 0
}

/**
 * @param {Buffer} b
 * @param {number} from
 * @param {number} to
 * @returns {number} the value, or -1 when it is not a plain decimal
 */
function parseDecimal (b, from, to) {
  while (from < to && (b[from] === 32 || b[from] === 9)) from++
  while (to > from && (b[to - 1] === 32 || b[to - 1] === 9)) to--
  if (from === to || to - from > 15) return -1
  let n = 0
  for (let k = from; k < to; k++) {
    const d = b[k] - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}

/** @param {number} c */
function hexValue (c) {
  if (c >= 48 && c <= 57) return c - 48
  const l = c | 0x20
  if (l >= 97 && l <= 102) return l - 87
  return -1
}
