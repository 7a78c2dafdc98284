// MongoDB (wire protocol: OP_MSG, and OP_QUERY for the first hello of older drivers).

import { find, i32le, isPrintable, isWord, latin1, u8, utf8 } from './bytes.js'
import { Framer } from './framing.js'
import { Tally } from './handler.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */
/** @typedef {import('./framing.js').OnMessage} OnMessage */
/** @typedef {import('./framing.js').SizeOf} SizeOf */
/** @typedef {import('./handler.js').Handler} Handler */
/** @typedef {import('./handler.js').Protocol} Protocol */

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
export function isMongoRequest (c) {
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
export class MongoHandler {
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
