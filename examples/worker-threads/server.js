// An image-thumbnail-style API that does its CPU work (here: hashing a generated buffer) in a pool of worker threads,
// so the main event loop stays free to accept requests. hotpath doctor: healthy, with each worker thread sampled.
import http from 'node:http'
import { Worker } from 'node:worker_threads'

const POOL = 2
const workers = Array.from({ length: POOL }, () => new Worker(new URL('./worker.js', import.meta.url)))
/** @type {Map<number, (digest: string) => void>} */
const pending = new Map()
let nextId = 0
let turn = 0
for (const worker of workers) {
  worker.on('message', ({ id, digest }) => {
    pending.get(id)?.(digest)
    pending.delete(id)
  })
}

/** @param {number} size */
function digestInPool (size) {
  return new Promise((resolve) => {
    const id = nextId++
    pending.set(id, resolve)
    workers[turn++ % POOL].postMessage({ id, size })
  })
}

const server = http.createServer(async (req, res) => {
  const digest = await digestInPool(256 * 1024)
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ digest }))
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`thumbnail API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
process.on('SIGTERM', () => {
  for (const w of workers) w.terminate()
  server.close()
})
