// A login API that hashes passwords synchronously: pbkdf2Sync holds the event loop ~10 ms per request, so concurrent
// requests queue behind each other. hotpath doctor: event-loop, culprit verifyPassword (the pbkdf2Sync call).
// The fix: crypto.pbkdf2 (async, runs on the libuv thread pool) or a worker thread.
import http from 'node:http'
import { pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto'

const ITERATIONS = 10_000

/**
 * @param {string} password
 * @param {Buffer} salt
 */
function hashPassword (password, salt) {
  return pbkdf2Sync(password, salt, ITERATIONS, 64, 'sha512')
}

const salt = randomBytes(16)
const users = new Map([['alice', { salt, hash: hashPassword('correct horse battery staple', salt) }]])

/**
 * @param {string} name
 * @param {string} password
 */
function verifyPassword (name, password) {
  const user = users.get(name)
  if (!user) return false
  return timingSafeEqual(hashPassword(password, user.salt), user.hash)
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost')
  const ok = verifyPassword(url.searchParams.get('user') ?? 'alice', url.searchParams.get('password') ?? 'correct horse battery staple')
  res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ ok }))
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`login API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
