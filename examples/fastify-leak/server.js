// A Fastify API that remembers every visit "for analytics" in a module-level Map keyed by a per-request id, and never
// forgets one: the heap grows with every request until the process runs out of memory. Fastify calls the handler
// from its own code (lib/handle-request.js), and V8 inlines the handler there, so the stacks that allocate what is
// kept show Fastify's frames and none of the app's. hotpath doctor: memory-leak, blamed on the route handler at the
// line that keeps the visit, not on Fastify. The fix: bound what is kept (an LRU), or count visits instead.
import Fastify from 'fastify'

const visits = new Map()

const app = Fastify()

app.get('/', async (request) => {
  const id = `${request.id}-${Date.now()}-${Math.random().toString(36).slice(2)}`
  visits.set(id, { at: new Date().toISOString(), url: request.url, headers: { ...request.headers }, trail: id.repeat(32) })
  return { ok: true, visits: visits.size }
})

app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' }).then((address) => {
  console.log(`analytics API on ${address}/`)
})
