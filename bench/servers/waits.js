// A server that waits: each request reads two keys, one after the other, from a line-protocol store (`GET key\n` →
// `value\n`) over a small pool of connections to LINE_PORT, then answers JSON. The benchmarks start the store. Sends
// its port over IPC when started by a benchmark, and prints it otherwise.
import http from 'node:http'
import { LineClient } from '../lib/line-protocol.js'

const port = Number(process.env.LINE_PORT)

/**
 * @param {LineClient} conn
 * @param {string} key
 * @returns {Promise<string>}
 */
const get = (conn, key) => new Promise((resolve) => conn.get(key, resolve))

const pool = Array.from({ length: 4 }, () => new LineClient(port))
let turn = 0

const server = http.createServer(async (req, res) => {
  const conn = pool[turn++ % pool.length]
  const user = await get(conn, `user:${turn % 100}`)
  const cart = await get(conn, `cart:${user}`)
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
