import net from 'node:net'
import { onJsonLines } from '../ndjson.js'

/**
 * The probe's line to hotpath: newline-delimited JSON both ways over the unix socket named in HOTPATH_CHANNEL.
 * It never throws into the target and never keeps it alive (the socket is unref'd); messages sent before the socket
 * connects are queued; commands from hotpath arrive through `onMessage`.
 * @param {string} path
 * @param {(command: import('../probe-protocol.js').ProbeCommand) => void} [onMessage] each command, as parsed: its fields
 *   are checked where they are used
 * @param {() => void} [onGone] called when hotpath's end of a connected channel closes while this end did not ask it
 *   to: hotpath is gone (killed, crashed), and the target must not outlive it
 */
export function openChannel (path, onMessage, onGone) {
  /** @type {string[]} */
  let queue = []
  let connected = false
  let broken = false
  let closing = false
  const socket = net.connect(path)
  socket.unref()
  socket.on('close', () => {
    if (connected && !closing) {
      try { onGone?.() } catch {}
    }
  })
  socket.on('connect', () => {
    connected = true
    for (const line of queue) socket.write(line)
    queue = []
  })
  socket.on('error', () => { broken = true })
  onJsonLines(socket, (message) => {
    try {
      onMessage?.(message)
    } catch {}
  })
  return {
    /** @param {import('../probe-protocol.js').ProbeMessage} message */
    send (message) {
      if (broken) return
      try {
        const line = JSON.stringify(message) + '\n'
        if (connected) socket.write(line)
        else queue.push(line)
      } catch {}
    },
    close () {
      closing = true
      socket.end()
    }
  }
}
