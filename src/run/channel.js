import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EventEmitter } from 'node:events'

/**
 * hotpath's end of the probe channel: a unix socket in a private temporary directory; each probe connects and sends
 * newline-delimited JSON. Emits 'message' for every well-formed line; ignores the rest.
 */
export class ProbeChannel extends EventEmitter {
  constructor () {
    super()
    this.dir = mkdtempSync(join(tmpdir(), 'hotpath-'))
    this.path = join(this.dir, 'probe.sock')
    /** @type {Set<net.Socket>} */
    this.sockets = new Set()
    this.server = net.createServer((socket) => {
      this.sockets.add(socket)
      let pending = ''
      socket.setEncoding('utf8')
      socket.on('data', (/** @type {string} */ chunk) => {
        pending += chunk
        let nl
        while ((nl = pending.indexOf('\n')) !== -1) {
          const line = pending.slice(0, nl)
          pending = pending.slice(nl + 1)
          try {
            this.emit('message', JSON.parse(line))
          } catch {}
        }
      })
      socket.on('error', () => {})
      socket.on('close', () => this.sockets.delete(socket))
    })
  }

  /** @returns {Promise<void>} */
  listen () {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(this.path, () => resolve())
    })
  }

  close () {
    for (const s of this.sockets) s.destroy()
    this.server.close()
    rmSync(this.dir, { recursive: true, force: true })
  }
}
