/**
 * Calls `onMessage` with every newline-delimited JSON value a stream carries, across chunk boundaries. Lines that
 * are not JSON are skipped: both ends of the probe channel must survive a peer that dies mid-line.
 * @param {import('node:stream').Readable} stream
 * @param {(message: any) => void} onMessage
 */
export function onJsonLines (stream, onMessage) {
  let pending = ''
  stream.setEncoding('utf8')
  stream.on('data', (/** @type {string} */ chunk) => {
    pending += chunk
    let nl
    while ((nl = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, nl)
      pending = pending.slice(nl + 1)
      let message
      try {
        message = JSON.parse(line)
      } catch {
        continue
      }
      onMessage(message)
    }
  })
}

/**
 * @typedef {object} JsonLines
 * @property {{ line: number, value: any }[]} values every line that holds a JSON object, with its 1-based number
 * @property {{ line: number, byte: number }[]} bad lines that are not a JSON object, where they start (bytes): damage
 * @property {boolean} cut the last line was cut short — the file ends without its newline and that line does not
 *   parse: what a writer killed mid-line leaves, not damage
 */

/**
 * Parses a file of newline-delimited JSON objects, keeping count of what does not parse. Every writer ends each line
 * with its newline in the same write, so only a last line without one can be cut short by a writer that was killed;
 * any other line that is not an object was damaged after it was written.
 * @param {string} text
 * @returns {JsonLines}
 */
export function parseJsonLines (text) {
  /** @type {JsonLines} */
  const out = { values: [], bad: [], cut: false }
  const lines = text.split('\n')
  let byte = 0
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const at = byte
    byte += Buffer.byteLength(line) + 1
    if (line.trim() === '') continue
    let value
    try {
      value = JSON.parse(line)
    } catch {}
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      out.values.push({ line: i + 1, value })
    } else if (i === lines.length - 1 && value === undefined) {
      out.cut = true
    } else {
      out.bad.push({ line: i + 1, byte: at })
    }
  }
  return out
}
