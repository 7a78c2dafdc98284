// The pacer's thread (see pacer.js): sleeps until the deadline it is given, then wakes the load thread. It sleeps in a
// futex wait with a sub-millisecond timeout, which the load thread cannot do without blocking its reads.
import { parentPort, workerData } from 'node:worker_threads'
import { ARM, DEADLINE_OFFSET, FIRED, monotonicMs, STOP } from './pacer-clock.js'

const cells = new Int32Array(workerData.buffer, 0, 4)
const deadline = new Float64Array(workerData.buffer, DEADLINE_OFFSET, 1)

let armed = 0
parentPort?.postMessage('ready')
for (;;) {
  Atomics.wait(cells, ARM, armed)
  if (Atomics.load(cells, STOP) !== 0) break
  armed = Atomics.load(cells, ARM)
  // Re-armed meanwhile (a new deadline), stopped, or the time has come: whichever is first.
  for (;;) {
    const left = deadline[0] - monotonicMs()
    if (left <= 0) break
    if (Atomics.wait(cells, ARM, armed, left) !== 'timed-out') {
      if (Atomics.load(cells, STOP) !== 0) break
      armed = Atomics.load(cells, ARM)
    }
  }
  if (Atomics.load(cells, STOP) !== 0) break
  Atomics.store(cells, FIRED, armed)
  Atomics.notify(cells, FIRED)
}
