// Preloaded into the target (NODE_OPTIONS=--import) by `hotpath load -- <command>` and `hotpath doctor`.
// It runs in every Node process of the target's tree (npm, the server, cluster workers) and does nothing unless
// HOTPATH_CHANNEL names hotpath's socket. Whatever happens here must never throw into the target.
import net from 'node:net'
import tls from 'node:tls'
import { isMainThread, threadId } from 'node:worker_threads'
import { openChannel } from './channel.js'

const path = process.env.HOTPATH_CHANNEL
if (path) {
  try {
    const channel = openChannel(path)
    const listen = net.Server.prototype.listen
    // Every server — http, https, express, fastify, cluster workers — ends up in net.Server.prototype.listen.
    net.Server.prototype.listen = function (/** @type {any[]} */ ...args) {
      this.once('listening', () => {
        try {
          const address = this.address()
          if (address !== null && typeof address === 'object') {
            channel.send({
              type: 'listening',
              pid: process.pid,
              threadId: isMainThread ? 0 : threadId,
              port: address.port,
              address: address.address,
              family: address.family,
              tls: this instanceof tls.Server
            })
          }
        } catch {}
      })
      return listen.apply(this, /** @type {any} */ (args))
    }
  } catch {}
}
