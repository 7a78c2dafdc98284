// Reading a chunk a client or server sent, a Buffer or an ASCII string alike: integers, words, text and searches that
// never run far past where they are told to stop.

/**
 * A connection's chunk: a Buffer, or a string whose chars are all ASCII, so that char offsets are byte offsets.
 * @typedef {Buffer | string} Bytes
 */

/** Longest command name, Redis key word or line-protocol word kept. */
export const WORD_LENGTH = 32

export const CR = 0x0d
export const LF = 0x0a

/**
 * @param {Bytes} c
 * @param {number} i
 * @returns {number} NaN past the end of a string, undefined past the end of a Buffer: both fail every comparison
 */
export function u8 (c, i) {
  return typeof c === 'string' ? c.charCodeAt(i) : c[i]
}

/**
 * @param {Bytes} c
 * @param {number} i
 */
export function i32be (c, i) {
  return (u8(c, i) << 24) | (u8(c, i + 1) << 16) | (u8(c, i + 2) << 8) | u8(c, i + 3)
}

/**
 * @param {Bytes} c
 * @param {number} i
 */
export function i32le (c, i) {
  return u8(c, i) | (u8(c, i + 1) << 8) | (u8(c, i + 2) << 16) | (u8(c, i + 3) << 24)
}

/**
 * @param {Bytes} c
 * @param {number} i
 */
export function u24le (c, i) {
  return u8(c, i) | (u8(c, i + 1) << 8) | (u8(c, i + 2) << 16)
}

/**
 * @param {Bytes} c
 * @param {number} start
 * @param {number} end
 */
export function latin1 (c, start, end) {
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
export function utf8 (c, start, end) {
  return typeof c === 'string' ? c.slice(start, end) : c.toString('utf8', start, end)
}

/**
 * @param {Bytes} c
 * @param {number} start
 * @returns {Bytes}
 */
export function rest (c, start) {
  return typeof c === 'string' ? c.slice(start) : c.subarray(start)
}

/**
 * @param {Bytes} c
 * @param {number} start
 * @param {number} end
 * @param {Buffer} target
 * @param {number} at
 */
export function copy (c, start, end, target, at) {
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
export function find (c, byte, start, end) {
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
export function wordEnd (c, start, end) {
  let i = start
  while (i < end) {
    const b = u8(c, i)
    if (!(isLetter(b) || isDigit(b) || b === 0x5f || b === 0x2d)) break
    i++
  }
  return i
}

/** @param {number} b */
export const isDigit = (b) => b >= 0x30 && b <= 0x39
/** @param {number} b */
const isLetter = (b) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
/** @param {number} b */
export const isAlnum = (b) => isLetter(b) || isDigit(b)
/** @param {number} ch */
export const isNameStart = (ch) => isLetter(ch) || ch === 0x5f || ch >= 0x80
/** @param {number} ch */
export const isNamePart = (ch) => isNameStart(ch) || isDigit(ch) || ch === 0x24

/**
 * A command's name: visible ASCII, at most 32 characters.
 * @param {string} s
 */
export function isWord (s) {
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
export function isPrintable (s) {
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i)
    if (ch < 0x20 || ch === 0x7f) return false
  }
  return true
}

/**
 * The first word of a line of text, upper-cased: 1 to 16 letters, digits or underscores, starting with a letter and
 * ending the chunk or followed by a space, a tab or a line end. Null for binary bytes.
 * @param {Bytes} c
 * @param {number} i
 * @returns {string | null}
 */
export function firstWord (c, i) {
  if (!isLetter(u8(c, i))) return null
  const end = wordEnd(c, i, Math.min(c.length, i + 17))
  if (end - i > 16) return null
  if (end < c.length) {
    const b = u8(c, end)
    if (b !== 0x20 && b !== 0x09 && b !== CR && b !== LF) return null
  }
  return latin1(c, i, end).toUpperCase()
}
