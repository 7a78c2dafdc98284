// memcached's text protocol.

import { CR, LF, find, firstWord, isPrintable, latin1, u8 } from './bytes.js'
import { Tally } from './handler.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */
/** @typedef {import('./handler.js').Handler} Handler */
/** @typedef {import('./handler.js').Protocol} Protocol */

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
export function isMemcachedCommand (c) {
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
export class MemcachedHandler {
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
