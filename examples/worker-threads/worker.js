// The pool's worker: does the CPU-heavy part off the main thread.
import { createHash } from 'node:crypto'
import { parentPort } from 'node:worker_threads'

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
port.on('message', ({ id, size }) => {
  const data = Buffer.alloc(size, id % 251)
  let digest = ''
  for (let round = 0; round < 8; round++) digest = createHash('sha256').update(data).update(digest).digest('hex')
  port.postMessage({ id, digest })
})
