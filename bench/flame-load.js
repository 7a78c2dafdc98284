// The load of the flame benchmark, as a command 0x can run with --on-port: loads the port for N seconds with hotpath's
// generator, then writes the time the load ended (ms since the epoch) to a file.
import { readFileSync, writeFileSync } from 'node:fs'
import { load } from '../src/index.js'

const [port, seconds, stampFile] = process.argv.slice(2)
const requests = JSON.parse(readFileSync(new URL('./flame-requests.json', import.meta.url), 'utf8'))
const result = await load({ url: `http://127.0.0.1:${port}/`, duration: Number(seconds), connections: 10, requests })
writeFileSync(stampFile, String(Date.now()))
console.error(`load: ${Math.round(result.requests.mean)} req/s`)
