// An API that keeps its sessions in PostgreSQL and reads the caller's session on every request, by a token column
// with no index: each lookup scans the table (a post-mortem's session store: ~50 req/s until moved). hotpath doctor:
// io, blamed on the line that awaits the session query, with the query and its time per round trip.
// Needs DATABASE_URL (node examples/backends/start.js starts a throwaway PostgreSQL).
import http from 'node:http'
import { createHash as cryptoHash } from 'node:crypto'
import pg from 'pg'

if (!process.env.DATABASE_URL) {
  console.error('examples/sql-sessions needs a PostgreSQL: run node examples/backends/start.js and export the DATABASE_URL it prints')
  process.exit(1)
}
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 })
const SESSIONS = 100_000

async function setUp () {
  await pool.query('CREATE TABLE IF NOT EXISTS sessions (id serial PRIMARY KEY, token text NOT NULL, user_id int NOT NULL, data jsonb NOT NULL)')
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM sessions')
  if (rows[0].n < SESSIONS) {
    await pool.query(`INSERT INTO sessions (token, user_id, data)
      SELECT md5(i::text), i % 5000, jsonb_build_object('cart', i % 7, 'theme', 'dark')
      FROM generate_series($1::int, $2::int) AS i`, [rows[0].n + 1, SESSIONS])
    await pool.query('ANALYZE sessions')
  }
}

/** @param {string} token */
async function loadSession (token) {
  const { rows } = await pool.query('SELECT user_id, data FROM sessions WHERE token = $1', [token]) // the wait
  return rows[0] ?? null
}

const server = http.createServer(async (req, res) => {
  try {
    const token = createHash(String(1 + Math.floor(Math.random() * SESSIONS)))
    const session = await loadSession(token)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ user: session?.user_id ?? null, cart: session?.data.cart ?? 0 }))
  } catch (err) {
    res.writeHead(500).end(String(err))
  }
})

/** md5 as PostgreSQL's md5() writes it: the tokens the table holds. @param {string} s */
function createHash (s) {
  return cryptoHash('md5').update(s).digest('hex')
}

await setUp()
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`session API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
process.on('SIGTERM', () => { server.close(); pool.end() })
