#!/usr/bin/env node
import { main } from '../src/cli/main.js'

/** @type {((signal: NodeJS.Signals) => unknown)[]} */
const stops = []
let signalled = false
const onSignal = (/** @type {NodeJS.Signals} */ signal) => {
  // First Ctrl-C: stop the run and report what was collected. Second: leave now.
  if (signalled || stops.length === 0) process.exit(signal === 'SIGINT' ? 130 : 143)
  signalled = true
  for (const stop of stops) stop(signal)
}
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)

// The reader went away (`hotpath doctor ... | head`): stop quietly, as Unix tools do, rather than with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'EPIPE') process.exit(process.exitCode ?? 0)
    throw err
  })
}

const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stopOnSignal: (stop) => { stops.push(stop) }
})
process.exitCode = code
