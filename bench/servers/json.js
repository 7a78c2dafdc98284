// A realistic JSON API for the benchmarks: parses the query, filters and pages a catalogue, computes totals and sends
// about 2 kB of JSON. Sends its port over IPC when started by a benchmark, and prints it otherwise.
import http from 'node:http'

const catalogue = Array.from({ length: 500 }, (_, i) => ({
  id: i,
  name: `product ${i}`,
  category: ['books', 'games', 'tools', 'garden'][i % 4],
  price: Math.round((5 + (i * 37) % 200) * 100) / 100,
  stock: (i * 13) % 50,
  tags: ['new', 'sale', 'gift'].slice(0, 1 + (i % 3))
}))

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost')
  const category = url.searchParams.get('category') ?? 'books'
  const page = Number(url.searchParams.get('page') ?? 1)
  const items = catalogue.filter(p => p.category === category && p.stock > 0)
  const slice = items.slice((page - 1) * 10, page * 10)
  const total = slice.reduce((sum, p) => sum + p.price, 0)
  const body = JSON.stringify({ category, page, count: items.length, total: Math.round(total * 100) / 100, items: slice })
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
})

server.listen(0, '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  if (process.send) process.send({ port })
  else console.log(`json API on http://127.0.0.1:${port}/`)
})
process.on('disconnect', () => process.exit(0))
