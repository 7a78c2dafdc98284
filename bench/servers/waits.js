// A server that waits: each request reads two keys, one after the other, from a line-protocol store (`GET key\n` →
// `value\n`) over a small pool of connections to LINE_PORT, then answers JSON. The benchmarks start the store. Sends
// its port over IPC when started by a benchmark, and prints it otherwise.
import http from 'node:http'
import net from 'node:net'

const port = Number(process.env.LINE_PORT)

/** One connection: requests written in turn, answered in order. */
class Connection {
  constructor () {
    this.socket = net.connect(port, '127.0.0.1')
    this.socket.setNoDelay(true)
    this.socket.setEncoding('utf8')
    this.buffer = ''
    /** @type {((value: string) => void)[]} */
    this.waiting = []
    this.socket.on('data', (chunk) => {
      this.buffer += chunk
      let i
      while ((i = this.buffer.indexOf('\n')) !== -1) {
        const line = this.buffer.slice(0, i)
        this.buffer = this.buffer.slice(i + 1)
        this.waiting.shift()?.(line)
      }
    })
  }

  /** @param {string} key @returns {Promise<string>} */
  get (key) {
    return new Promise((resolve) => {
      this.waiting.push(resolve)
      this.socket.write(`GET ${key}\n`)
    })
  }
}

const pool = Array.from({ length: 4 }, () => new Connection())
let turn = 0

const server = http.createServer(async (req, res) => {
  const conn = pool[turn++ % pool.length]
  const user = await conn.get(`user:${turn % 100}`)
  const cart = await conn.get(`cart:${user}`)
  const body = JSON.stringify({ user, cart, items: [1, 2, 3] })
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
})

server.listen(0, '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  if (process.send) process.send({ port })
  else console.log(`waiting API on http://127.0.0.1:${port}/`)
})
process.on('disconnect', () => process.exit(0))
