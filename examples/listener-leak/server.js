// The listener-per-request bug from a published Node.js post-mortem (~23 req/s until fixed, ~5,000 after), without
// restify: an ETag plugin adds an 'after' listener on every request, and raising defaultMaxListeners silenced the
// warning that would have told. Throughput starts in the thousands and sinks as every response runs every listener ever
// added, each hashing the URL and the body. hotpath doctor: event-loop, with the listener growth as evidence and the
// line that adds it (etag.js) and the hashing call as culprits.
import events from 'node:events'
import http from 'node:http'
import { App } from './app.js'
import { etagPlugin, etagStatus } from './etag.js'

events.defaultMaxListeners = Infinity // "fixes" MaxListenersExceededWarning

const products = Array.from({ length: 20 }, (_, i) => ({ id: i, name: `product ${i}`, price: i * 3.5, tags: ['new', 'sale'] }))
const app = new App()
app.use(etagPlugin(app))
app.get('/', () => ({ items: products }))
app.get('/status', () => etagStatus())

const server = http.createServer((req, res) => app.handle(req, res))
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`catalogue API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
