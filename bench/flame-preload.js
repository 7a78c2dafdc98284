// Preloaded into the benchmark's server: starts and stops a CPU profile when the benchmark says so (over IPC), the way
// hotpath's probe does over its channel.
import { startCpuProfile } from '../src/profile/capture.js'

/** @type {Awaited<ReturnType<typeof startCpuProfile>> | null} */
let capture = null
process.on('message', async (message) => {
  if (message === 'start') {
    capture = await startCpuProfile()
    process.send?.('started')
  } else if (message === 'stop' && capture) {
    process.send?.({ profile: await capture.stop() })
  }
})
// The IPC channel must not keep the server alive past its own life.
process.channel?.unref()
