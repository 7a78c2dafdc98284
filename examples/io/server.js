// A product API that asks a slow pricing service for every request, through an HTTP agent capped at 5 sockets (the
// hidden maxSockets story: requests queue for a socket while the CPU idles). hotpath doctor: io, with the agent's queue
// as evidence. The fix: a bigger pool, caching prices, or batching calls to the upstream.
import http from 'node:http'

const pricingAgent = new http.Agent({ keepAlive: true, maxSockets: 5 })
let pricingPort = 0

/** @param {string} id */
function fetchPrice (id) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: pricingPort, path: `/price/${id}`, agent: pricingAgent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => resolve(JSON.parse(body)))
    }).on('error', reject)
  })
}

const server = http.createServer(async (req, res) => {
  try {
    const id = String(Math.floor(Math.random() * 1000))
    const { price } = await fetchPrice(id)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ id, name: `product ${id}`, price }))
  } catch (err) {
    res.writeHead(502).end(String(err))
  }
})

// The pricing service: answers in about 30 ms. It stands in for a database or another team's API.
const pricing = http.createServer((req, res) => {
  setTimeout(() => res.end(JSON.stringify({ price: 42.5 })), 30)
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  pricing.listen(0, '127.0.0.1', () => {
    pricingPort = /** @type {import('node:net').AddressInfo} */ (pricing.address()).port
    console.log(`product API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
  })
})
