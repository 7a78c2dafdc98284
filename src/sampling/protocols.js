// Recognises what an app's outgoing client sockets ask their servers — a query, a command, a request — from the
// bytes the client writes, with no knowledge of any driver: only the wire protocols of PostgreSQL, MySQL, Redis,
// MongoDB, HTTP/1.x and memcached, and a fallback for any other line protocol. The probe calls it on every write of
// every client socket of the user's server, so each write costs a few byte reads: payloads are skipped by their
// length, never scanned, and only the few hundred bytes that name an operation are decoded.
//
// The work is in protocols/: sniffer.js follows one connection, detect.js finds its protocol, one module per
// protocol reads it (postgres.js, mysql.js, redis.js with resp.js, mongodb.js, http.js, memcached.js, tls.js,
// line.js), over shared framing.js, bytes.js, sql.js and fold-sql.js.

export { createSniffer, Sniffer } from './protocols/sniffer.js'
export { foldSql } from './protocols/fold-sql.js'

/** @typedef {import('./protocols/handler.js').Protocol} Protocol */
/** @typedef {import('./protocols/sniffer.js').Operation} Operation */
