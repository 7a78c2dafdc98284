// The smallest useful target: a node:http server answering a short JSON body. hotpath's README starts here.
import http from 'node:http'

const body = JSON.stringify({ hello: 'world' })
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
})

server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  console.log(`hello server listening on http://127.0.0.1:${port}/`)
})
