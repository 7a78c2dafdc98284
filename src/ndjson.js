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
