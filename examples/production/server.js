// What to keep on in production, on an Express app: overload protection that answers 503 before the process drowns
// (and a /status route for the load balancer), Prometheus metrics of the event loop, GC, heap and outgoing pools on
// /metrics, and a CPU and heap profile of 30 s on `kill -USR2 <pid>`. The README's fifth task.
import express from 'express'
import client from 'prom-client'
import { monitor, overloadProtection, profiler, registerMetrics } from 'hotpath/runtime'

const m = monitor({ interval: 1000 })
const guard = overloadProtection({ monitor: m, maxEventLoopDelay: 200, maxEventLoopUtilization: 0.98, exposeStatusRoute: true })
registerMetrics(client.register, { monitor: m })
profiler({ dir: process.env.PROFILE_DIR ?? 'profiles', duration: 30 })

const app = express()
app.use(guard.express())
app.get('/metrics', async (req, res) => {
  res.type(client.register.contentType).send(await client.register.metrics())
})
app.get('/', (req, res) => {
  res.json({ hello: 'world' })
})

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', (err) => {
  if (err) throw err
  console.log(`production example on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
