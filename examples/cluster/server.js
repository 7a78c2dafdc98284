// A JSON API run as a node:cluster of two workers sharing one port. Nothing is wrong with it: hotpath doctor says
// healthy and reports each worker (and the primary) on its own.
import cluster from 'node:cluster'
import http from 'node:http'

const WORKERS = Number(process.env.WORKERS ?? 2)

if (cluster.isPrimary) {
  for (let i = 0; i < WORKERS; i++) cluster.fork()
  cluster.on('exit', (worker, code, signal) => {
    if (signal !== 'SIGTERM' && code !== 0) console.error(`worker ${worker.process.pid} died (${signal ?? code})`)
  })
} else {
  const catalog = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `product ${i}`, price: i * 2.5 }))
  const server = http.createServer((req, res) => {
    const page = catalog.slice(0, 10)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ worker: process.pid, items: page }))
  })
  server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
    console.log(`worker ${process.pid} on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
  })
}
