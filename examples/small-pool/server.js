// A reporting API whose query takes ~10 ms in PostgreSQL, behind a connection pool of 2: under more than two
// concurrent requests, each waits for a free connection far longer than its query runs (a hidden pool cap, like the
// S3 client's maxSockets: 50). hotpath doctor: io, blamed on the line that creates the pool with its limit, then on the query.
// Needs DATABASE_URL (node examples/backends/start.js starts a throwaway PostgreSQL).
import http from 'node:http'
import pg from 'pg'

if (!process.env.DATABASE_URL) {
  console.error('examples/small-pool needs a PostgreSQL: run node examples/backends/start.js and export the DATABASE_URL it prints')
  process.exit(1)
}
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 }) // the pool
const ORDERS = 200_000

async function setUp () {
  await pool.query('CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, customer int NOT NULL, total numeric NOT NULL)')
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM orders')
  if (rows[0].n < ORDERS) {
    await pool.query('INSERT INTO orders (customer, total) SELECT i % 1000, (i % 97) * 1.25 FROM generate_series($1::int, $2::int) AS i', [rows[0].n + 1, ORDERS])
    await pool.query('ANALYZE orders')
  }
}

const server = http.createServer(async (req, res) => {
  try {
    const customer = Math.floor(Math.random() * 1000)
    const { rows } = await pool.query('SELECT count(*)::int AS orders, sum(total) AS spent FROM orders WHERE customer = $1', [customer]) // the query
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ customer, ...rows[0] }))
  } catch (err) {
    res.writeHead(500).end(String(err))
  }
})

await setUp()
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`report API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
process.on('SIGTERM', () => { server.close(); pool.end() })
