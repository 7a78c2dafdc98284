// The benchmark target: a plain node:http hello server that counts what it serves, so every tool is judged by what
// the server saw rather than by its own report. The parent asks for the count over IPC.
import http from 'node:http'

let served = 0
const body = JSON.stringify({ hello: 'world' })
const server = http.createServer((req, res) => {
  served++
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
  res.end(body)
})

// Optional stall: the event loop blocks STALL_MS out of every STALL_EVERY_MS, to check coordinated-omission correction.
const stall = Number(process.env.STALL_MS ?? 0)
if (stall > 0) {
  setInterval(() => {
    const end = Date.now() + stall
    while (Date.now() < end);
  }, Number(process.env.STALL_EVERY_MS ?? 1000))
}

server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port })
})
process.on('message', (msg) => {
  if (msg === 'count') {
    process.send?.({ served })
    served = 0
  }
})
process.on('disconnect', () => process.exit(0))
