// Redis requests (RESP2 and RESP3): the commands a client writes, named; the replies are counted by resp.js.

import { CR, LF, WORD_LENGTH, find, isDigit, isWord, latin1, u8, wordEnd } from './bytes.js'
import { LineNumber, RESP_LINE, RespCounter, endsWell } from './resp.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */
/** @typedef {import('./handler.js').Handler} Handler */
/** @typedef {import('./handler.js').Protocol} Protocol */

const STAR = 0x2a
const DOLLAR = 0x24
/** Commands named with their first argument: `CLIENT SETNAME`, `CONFIG GET`. */
const REDIS_CONTAINERS = new Set(['ACL', 'CLIENT', 'CLUSTER', 'COMMAND', 'CONFIG', 'FUNCTION', 'LATENCY', 'MEMORY',
  'MODULE', 'OBJECT', 'PUBSUB', 'SCRIPT', 'SLOWLOG', 'XGROUP', 'XINFO'])

/** Command names kept per write to name a pipeline. */
const REDIS_NAMES_KEPT = 64
/** After these, the server sends messages no command asked for, or stops answering: replies cannot be paired. */
const REDIS_UNPAIRED = new Set(['SUBSCRIBE', 'PSUBSCRIBE', 'SSUBSCRIBE', 'MONITOR', 'CLIENT REPLY'])

/** @param {Bytes} c */
export function isRespArray (c) {
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
export class RedisHandler {
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
