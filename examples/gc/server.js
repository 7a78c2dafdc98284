// A reporting endpoint that loads every row as an object, waits on the database for prices, copies every row to add
// them, then totals. Each request keeps thousands of objects alive across its waits, so with ten requests in flight
// the young generation is full of live objects and every scavenge copies them: the collector works harder than the
// code. hotpath doctor: gc, allocation culprits loadRows and priceRows.
// The fix: stream the rows and total them in one pass, keeping no per-row objects across the waits.
import http from 'node:http'

const ROWS = 5000

/** Stands in for a database round trip. */
const query = () => new Promise((resolve) => setTimeout(resolve, 2))

function loadRows () {
  const rows = []
  for (let i = 0; i < ROWS; i++) {
    rows.push({ id: i, sku: `SKU-${i}`, price: (i % 100) * 1.25, quantity: i % 7, tags: ['catalog', i % 2 ? 'odd' : 'even'] })
  }
  return rows
}

/** @param {ReturnType<typeof loadRows>} rows */
function priceRows (rows) {
  return rows.map((row) => ({ ...row, total: row.price * row.quantity }))
}

async function buildReport () {
  const rows = loadRows()
  await query()
  const priced = priceRows(rows)
  await query()
  /** @type {Record<string, number>} */
  const byTag = {}
  for (const row of priced) {
    if (row.quantity === 0) continue
    for (const tag of row.tags) byTag[tag] = (byTag[tag] ?? 0) + row.total
  }
  return { rows: priced.length, byTag }
}

const server = http.createServer(async (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(await buildReport()))
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`report API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
