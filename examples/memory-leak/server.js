// An API that keeps an "audit trail" of every request in memory and never trims it: the heap grows by about a
// kilobyte per request until the process runs out of memory. hotpath doctor: memory-leak, with the growth per request
// and the allocation site (recordAudit). The fix: bound the trail, or ship it to a log and drop it.
import http from 'node:http'

const auditTrail = []

/** @param {http.IncomingMessage} req */
function recordAudit (req) {
  auditTrail.push({
    at: new Date().toISOString(),
    method: req.method,
    url: req.url,
    headers: { ...req.headers },
    remote: req.socket.remoteAddress,
    session: `session-${Math.random().toString(36).slice(2)}-${Date.now()}`.repeat(8)
  })
}

const server = http.createServer((req, res) => {
  recordAudit(req)
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ ok: true, audited: auditTrail.length }))
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`audited API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
