import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EventEmitter } from 'node:events'
import { onJsonLines } from '../../ndjson.js'
import { MESSAGE } from '../../probe-protocol.js'

/**
 * hotpath's end of the probe channel: a unix socket in a private temporary directory. Each probe (one per process and
 * thread of the target) connects and sends newline-delimited JSON; hotpath can broadcast commands back.
 * Emits 'message' (message, peer) for every well-formed line, and 'peer' (peer) when a probe connects.
 */
export class ProbeChannel extends EventEmitter {
  constructor () {
    super()
    this.dir = mkdtempSync(join(tmpdir(), 'hotpath-'))
    this.path = join(this.dir, 'probe.sock')
    /** @type {Set<Peer>} */
    this.peers = new Set()
    this.server = net.createServer((socket) => {
      const peer = new Peer(socket)
      this.peers.add(peer)
      onJsonLines(socket, (message) => {
        if (message?.type === MESSAGE.HELLO) peer.hello = message
        this.emit('message', message, peer)
      })
      socket.on('error', () => {})
      socket.on('close', () => {
        this.peers.delete(peer)
        this.emit('gone', peer)
      })
      this.emit('peer', peer)
    })
  }

  /** @returns {Promise<void>} */
  listen () {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(this.path, () => resolve())
    })
  }

  /** @param {import('../../probe-protocol.js').ProbeCommand} message */
  broadcast (message) {
    for (const peer of this.peers) peer.send(message)
  }

  close () {
    for (const peer of this.peers) peer.socket.destroy()
    this.server.close()
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** One connected probe. */
export class Peer {
  /** @param {net.Socket} socket */
  constructor (socket) {
    this.socket = socket
    /** @type {{ pid: number, threadId: number } & Record<string, unknown> | null} its hello message */
    this.hello = null
  }

  /** @param {import('../../probe-protocol.js').ProbeCommand} message */
  send (message) {
    if (!this.socket.destroyed) this.socket.write(JSON.stringify(message) + '\n')
  }
}
