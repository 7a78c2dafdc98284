// PostgreSQL wire messages built by hand, for the protocol sniffer's tests and benchmark.

/** @param {string} s a C string: the text and a NUL */
export const cstr = (s) => Buffer.from(`${s}\0`)

/**
 * A typed PostgreSQL message: its type byte, its length (itself included) and its body.
 * @param {string} type
 * @param {Buffer[]} parts
 */
export function pg (type, ...parts) {
  const body = Buffer.concat(parts)
  const head = Buffer.alloc(5)
  head.write(type, 0, 'latin1')
  head.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([head, body])
}
