import { Worker } from 'node:worker_threads'
import { Runner } from './runner.js'

/** @typedef {import('./runner.js').Plan} Plan */
/** @typedef {import('./recorder.js').Shard} Shard */
/** @typedef {import('./recorder.js').Bin} Bin */

/**
 * Splits `total` into `parts` integers that differ by at most one.
 * @param {number} total
 * @param {number} parts
 */
export function split (total, parts) {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0))
}

/**
 * Runs a plan on `workers` threads (in this thread when 1) and returns each thread's shard.
 * Connections are split evenly; the rate and the amount follow each thread's share of connections.
 * @param {Plan} plan
 * @param {number} workers
 * @param {{ onBin?: (bin: Bin) => void, signal?: AbortSignal }} [hooks]
 * @returns {Promise<Shard[]>}
 */
export async function runThreads (plan, workers, hooks = {}) {
  if (workers === 1) {
    const runner = new Runner(plan, { onBin: hooks.onBin })
    const stop = () => runner.finish()
    const done = runner.run()
    // A signal that came before the run (while the target was checked) stops it as one during the run would.
    if (hooks.signal?.aborted) stop()
    else hooks.signal?.addEventListener('abort', stop, { once: true })
    try {
      return [await done]
    } finally {
      hooks.signal?.removeEventListener('abort', stop)
    }
  }
  const connections = split(plan.connections, workers)
  const amounts = plan.amount > 0 ? split(plan.amount, workers) : connections.map(() => 0)
  return Promise.all(connections.map((c, i) => runWorker({
    ...plan,
    connections: c,
    rate: (plan.rate * c) / plan.connections,
    amount: amounts[i]
  }, hooks)))
}

/**
 * @param {Plan} plan
 * @param {{ onBin?: (bin: Bin) => void, signal?: AbortSignal }} hooks
 * @returns {Promise<Shard>}
 */
function runWorker (plan, hooks) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: { plan } })
    const stop = () => worker.postMessage('stop')
    if (hooks.signal?.aborted) stop()
    else hooks.signal?.addEventListener('abort', stop, { once: true })
    let done = false
    worker.on('message', (msg) => {
      if (msg.type === 'bin') hooks.onBin?.(msg.bin)
      else if (msg.type === 'done') {
        done = true
        hooks.signal?.removeEventListener('abort', stop)
        resolve(msg.shard)
        worker.terminate()
      }
    })
    worker.once('error', reject)
    worker.once('exit', (code) => {
      if (!done) reject(new Error(`load worker exited with code ${code} before reporting`))
    })
  })
}
