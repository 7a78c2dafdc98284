// A catalogue API whose product list reads each product from a Redis cache one key at a time: one round trip per
// product, one after the other (the N+1 pattern; a cache one network hop away makes each trip cost a millisecond).
// hotpath doctor: io, blamed on the line that awaits each GET, with the round trips per request and what one MGET
// would save. Needs REDIS_URL (node examples/backends/start.js starts a throwaway Redis behind a 1 ms hop).
import http from 'node:http'
import { Redis } from 'ioredis'

if (!process.env.REDIS_URL) {
  console.error('examples/cache-n-plus-one needs a Redis: run node examples/backends/start.js and export the REDIS_URL it prints')
  process.exit(1)
}
// No retries: a Redis that is not there is said at once, not waited for.
const redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 0, retryStrategy: () => null })
const PRODUCTS = 200
const PAGE = 20

async function setUp () {
  const pipeline = redis.pipeline()
  for (let id = 1; id <= PRODUCTS; id++) pipeline.set(`product:${id}`, JSON.stringify({ id, name: `product ${id}`, price: id * 1.5 }))
  await pipeline.exec()
}

/** @param {number} id */
async function getProduct (id) {
  const cached = await redis.get(`product:${id}`) // the wait
  return cached === null ? null : JSON.parse(cached)
}

const server = http.createServer(async (req, res) => {
  try {
    const first = 1 + Math.floor(Math.random() * (PRODUCTS - PAGE))
    const page = []
    for (let id = first; id < first + PAGE; id++) {
      page.push(await getProduct(id)) // the loop
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(page))
  } catch (err) {
    res.writeHead(500).end(String(err))
  }
})

await setUp()
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`catalogue API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
process.on('SIGTERM', () => { server.close(); redis.disconnect() })
