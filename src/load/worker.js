// Entry point of a load worker thread: runs its share of the plan and posts back what it measured.
import { parentPort, workerData } from 'node:worker_threads'
import { Runner } from './runner.js'

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
/** @type {import('./runner.js').Plan} */
const plan = workerData.plan
// Buffers cross the thread boundary as plain Uint8Arrays.
plan.requests = plan.requests.map(r => ({ ...r, bytes: Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength) }))

const runner = new Runner(plan, { onBin: (bin) => port.postMessage({ type: 'bin', bin }) })
port.on('message', (msg) => {
  if (msg === 'stop') runner.finish()
})
runner.run().then((shard) => port.postMessage({ type: 'done', shard }))
