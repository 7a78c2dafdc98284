// An incremental HTTP/1.1 response framer for the load generator.
//
// Why not a general parser (llhttp, http-parser-js)? A load generator needs only the frame of each response: status
// code, where the body ends (Content-Length, chunked, or close) and whether the server will close the connection. It
// never needs header values as strings. autocannon spends a large part of its CPU in http-parser-js building header
// arrays it throws away; this framer works on the bytes in place, allocates nothing per response in the common case
// (whole head in one read) and is the main reason `hotpath load` costs less CPU per request (see bench/load.js and
// docs/load.md, Cost). It is strict: anything that is not a well-formed HTTP/1.x response is reported through onError, never thrown,
// and test/internals/response-parser.test.js feeds it split, corrupted and random input.
//
// One piece on purpose, at ~330 lines. Its one seam is cut: finding the headers that frame the body is
// response-headers.js, called once a response. What is left is a single state machine — the status line, then the
// body by Content-Length, chunked, or until close — whose states hand over to each other inside one execute() loop
// over one read and share the parser's fields (state, remaining, status, willClose). A chunked decoder of its own
// would reach those fields through a second object, or pass them back and forth, at every step of the loop that
// frames every byte the generator reads: calls and shapes the hottest loop of `hotpath load` does not have now.

import { NOT_HTTP_REASONS } from './not-http.js'
import { BAD_LENGTH, FramingHeaders, INCOMPLETE, scanHeaders } from './response-headers.js'

const CR = 13
const LF = 10
const STATUS_PREFIX = Buffer.from('HTTP/1.x ')
const MAX_HEAD = 64 * 1024
// Called as indexOf.call(b, …): optimised code then calls it directly, where `b.indexOf` was a property lookup (see
// response-headers.js).
const indexOf = Buffer.prototype.indexOf

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
    this.headers = new FramingHeaders()
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
   * Parses the status line, then has the headers that frame the body scanned (response-headers.js).
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

    const headers = this.headers
    headers.close = minor === 0
    i = scanHeaders(b, i, end, headers)
    if (i < 0) {
      if (i === INCOMPLETE) return INCOMPLETE
      return this.fail(i === BAD_LENGTH ? NOT_HTTP_REASONS.contentLength : NOT_HTTP_REASONS.headerLine)
    }

    const status = d0 * 100 + d1 * 10 + d2
    this.status = status
    this.willClose = headers.close
    if (status < 200) {
      // 101 would hand the socket to another protocol; a load generator cannot follow.
      if (status === 101) return this.fail(NOT_HTTP_REASONS.switchedProtocols)
      return i // interim response (100 Continue, 103 Early Hints): the final one follows
    }
    if (status === 204 || status === 304 || this.sink.expectsNoBody()) {
      this.complete()
    } else if (headers.chunked) {
      this.state = CHUNK_SIZE
      this.remaining = 0
      this.sizeDigits = 0
    } else if (headers.contentLength >= 0) {
      this.remaining = headers.contentLength
      if (headers.contentLength === 0) this.complete()
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

/** @param {number} c */
function hexValue (c) {
  if (c >= 48 && c <= 57) return c - 48
  const l = c | 0x20
  if (l >= 97 && l <= 102) return l - 87
  return -1
}
