// A reporting endpoint that materialises every row as an object, then copies them twice (map, filter, spread) to
// compute a few totals: every request allocates megabytes that die young, and the scavenger works harder than the
// code. hotpath doctor: gc, culprit buildReport. The fix: compute the totals in one pass without intermediate objects.
import http from 'node:http'

const ROWS = 20_000

function loadRows () {
  const rows = []
  for (let i = 0; i < ROWS; i++) {
    rows.push({ id: i, sku: `SKU-${i}`, price: (i % 100) * 1.25, quantity: i % 7, tags: ['catalog', i % 2 ? 'odd' : 'even'] })
  }
  return rows
}

function buildReport () {
  const rows = loadRows()
  const priced = rows.map((row) => ({ ...row, total: row.price * row.quantity }))
  const sold = priced.filter((row) => row.quantity > 0)
  /** @type {Record<string, number>} */
  const byTag = {}
  for (const row of sold) {
    for (const tag of row.tags) byTag[tag] = (byTag[tag] ?? 0) + row.total
  }
  return { rows: sold.length, byTag }
}

const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(buildReport()))
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`report API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
