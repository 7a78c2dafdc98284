// The SQL of a connection's statements, decoded from its bytes and folded (fold-sql.js), with caches so that a
// statement sent again costs a comparison of bytes rather than a fold.

import { utf8 } from './bytes.js'
import { foldSql } from './fold-sql.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */

/** Bytes of SQL decoded per statement: enough to reach the FROM of a long ORM select list. */
export const SQL_BYTES = 1024
/** Folded statements cached per process, keyed by their raw text; cleared when full. */
const FOLD_CACHE_SIZE = 500
/** Prepared statements remembered per connection; forgotten all at once when full. */
export const STATEMENTS_PER_CONNECTION = 200

/** Statements remembered by their bytes per connection. */
const RECENT_SQL = 8

/** @type {Map<string, string>} raw SQL → folded */
const folded = new Map()

/**
 * The statements a connection sent last, by their bytes: a connection repeats a few statements, and comparing bytes
 * costs a quarter of decoding them to look them up in the process's cache.
 */
export class RecentSql {
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
