#!/usr/bin/env node
// Starts a throwaway PostgreSQL and Redis for the examples that wait on a database (Debian packages postgresql and
// redis-server), prints the environment they read, and stops both on Ctrl-C:
//
//   node examples/backends/start.js
//   DATABASE_URL=… REDIS_URL=… npx hotpath doctor -- node examples/sql-sessions/server.js
//
// REDIS_URL points at a proxy that holds each reply for 1 ms, as a cache one network hop away would.
import { startDelayProxy, startPostgres, startRedis } from './backends.js'

const pg = await startPostgres()
const redis = await startRedis()
const proxy = await startDelayProxy(redis.port, 1)
console.log(`export DATABASE_URL=${pg.url}`)
console.log(`export REDIS_URL=redis://127.0.0.1:${proxy.port}`)
console.log('# PostgreSQL pid', pg.pid, '- Redis pid', redis.pid, '- Ctrl-C stops them')
let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  await proxy.close()
  await Promise.all([pg.stop(), redis.stop()])
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
