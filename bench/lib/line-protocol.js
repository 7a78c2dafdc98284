// A home-made line protocol (`GET key\n` → `value\n`, answered in order per connection): the store that
// bench/servers/waits.js and the doctor's wait tests wait on, and the client they use.
import net from 'node:net'

/** One connection to a line store: requests written in turn, their callbacks called in order as replies arrive. */
export class LineClient {
  /** @param {number} port */
  constructor (port) {
    this.socket = net.connect(port, '127.0.0.1')
    this.socket.setNoDelay(true)
    this.socket.setEncoding('utf8')
    this.buffer = ''
    /** @type {((value: string) => void)[]} */
    this.waiting = []
    this.socket.on('data', (/** @type {string} */ chunk) => {
      this.buffer += chunk
      let i
      while ((i = this.buffer.indexOf('\n')) !== -1) {
        const line = this.buffer.slice(0, i)
        this.buffer = this.buffer.slice(i + 1)
        this.waiting.shift()?.(line)
      }
    })
  }

  /**
   * @param {string} key
   * @param {(value: string) => void} cb
   */
  get (key, cb) {
    this.waiting.push(cb)
    this.socket.write(`GET ${key}\n`)
  }
}

/**
 * @param {number} delay ms before each answer
 * @returns {Promise<{ port: number, close: () => Promise<void> }>}
 */
export async function startLineStore (delay) {
  /** @type {Set<net.Socket>} */
  const sockets = new Set()
  const server = net.createServer((s) => {
    sockets.add(s)
    s.setNoDelay(true)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => {})
    let buf = ''
    s.setEncoding('utf8')
    s.on('data', (c) => {
      buf += c
      let out = ''
      let i
      while ((i = buf.indexOf('\n')) !== -1) {
        out += `v${buf.length % 10}\n`
        buf = buf.slice(i + 1)
      }
      if (out === '') return
      if (delay > 0) setTimeout(() => { if (!s.destroyed) s.write(out) }, delay)
      else s.write(out)
    })
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  return {
    port: /** @type {net.AddressInfo} */ (server.address()).port,
    close: () => new Promise(resolve => {
      for (const s of sockets) s.destroy()
      server.close(() => resolve())
    })
  }
}
