// Header scanning for the response framer (response-parser.js): finds the end of a response's header block and reads
// the only headers that frame its body — Content-Length, Transfer-Encoding: chunked and Connection — on the bytes in
// place. Every other header line is only delimited, never turned into a string. The framer calls it once a response,
// never per byte: measured at ~8 ns a response (135 → 144 ns of framing for a typical head), far below the noise of
// the generator's ~10 µs of CPU per request in bench/load.js.

const CR = 13
const LF = 10
const CONTENT_LENGTH = Buffer.from('content-length')
const CONNECTION = Buffer.from('connection')
const TRANSFER_ENCODING = Buffer.from('transfer-encoding')
const CHUNKED = Buffer.from('chunked')
const CLOSE_TOKEN = Buffer.from('close')
const KEEP_ALIVE_TOKEN = Buffer.from('keep-alive')
const CLOSE = 1
const KEEP_ALIVE = 2
// Called as indexOf.call(b, …): optimised code then calls it directly, where `b.indexOf` was a property lookup on
// every line (an out-of-line load IC; ~25 ns a response, 15% of the framing).
const indexOf = Buffer.prototype.indexOf

/** scanHeaders: the header block has not all arrived */
export const INCOMPLETE = -2
/** scanHeaders: a header line is not a header line */
export const BAD_LINE = -3
/** scanHeaders: Content-Length is not a number, or two of them disagree */
export const BAD_LENGTH = -4

/**
 * What the header block says of the body. One per parser, filled in place by scanHeaders so that framing a response
 * allocates nothing.
 */
export class FramingHeaders {
  constructor () {
    /** -1 when absent */
    this.contentLength = -1
    this.chunked = false
    /** the server will close the connection after this response */
    this.close = false
  }
}

/**
 * Scans the header lines from `i` (just after the status line) to the blank line that ends them. Header lines that
 * cannot frame the body are only delimited, not validated: checking each for a colon would cost a scan per line on
 * every response.
 * @param {Buffer} b
 * @param {number} i
 * @param {number} end
 * @param {FramingHeaders} out filled when the block is whole; `out.close` holds the protocol's default on entry
 *   (HTTP/1.0 closes)
 * @returns {number} index after the blank line, or INCOMPLETE, BAD_LINE, BAD_LENGTH
 */
export function scanHeaders (b, i, end, out) {
  let contentLength = -1
  let chunked = false
  let close = out.close
  for (;;) {
    if (i + 1 >= end) return INCOMPLETE
    const first = b[i]
    if (first === CR) {
      if (b[i + 1] !== LF) return BAD_LINE
      i += 2
      break
    }
    // Lines are found with indexOf (native, ~15 ns a call); JS looks only at the names that frame the body.
    const eol = indexOf.call(b, CR, i)
    if (eol === -1 || eol + 1 >= end) return INCOMPLETE
    if (b[eol + 1] !== LF || first <= 32 || first === 58) return BAD_LINE
    // A framing header has its colon right after its name, so one byte tells whether the name can match.
    const lower = first | 0x20
    if (lower === 99) { // c…
      if (i + 14 < eol && b[i + 14] === 58 && nameIs(b, i, CONTENT_LENGTH)) {
        const n = parseDecimal(b, i + 15, eol)
        if (n < 0 || (contentLength !== -1 && contentLength !== n)) return BAD_LENGTH
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
  out.contentLength = contentLength
  out.chunked = chunked
  out.close = close
  return i
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
