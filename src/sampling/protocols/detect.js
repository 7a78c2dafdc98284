// Which protocol a connection speaks, from the first bytes its client writes.

import { tiles } from './framing.js'
import { HttpHandler, httpRequest } from './http.js'
import { LineHandler } from './line.js'
import { MemcachedHandler, isMemcachedCommand } from './memcached.js'
import { MongoHandler, isMongoRequest } from './mongodb.js'
import { MysqlHandler, isMysqlHandshake, mysqlCommandSize } from './mysql.js'
import { PostgresHandler, isPostgresStartup, postgresMessageSize } from './postgres.js'
import { RedisHandler, isRespArray } from './redis.js'
import { TlsHandler, isTlsHello } from './tls.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */
/** @typedef {import('./handler.js').Handler} Handler */

/**
 * The protocol of a connection, from the first bytes its client writes. The strictest signatures come first.
 * @param {Bytes} c
 * @returns {Handler}
 */
export function detect (c) {
  if (isTlsHello(c)) return new TlsHandler()
  if (isMongoRequest(c)) return new MongoHandler()
  if (isPostgresStartup(c)) return new PostgresHandler(true)
  if (isMysqlHandshake(c)) return new MysqlHandler(true)
  if (isRespArray(c)) return new RedisHandler()
  if (httpRequest(c, true) !== null) return new HttpHandler()
  if (isMemcachedCommand(c)) return new MemcachedHandler()
  // A connection seen after its start: messages that exactly fill the write
  if (tiles(c, postgresMessageSize)) return new PostgresHandler(false)
  if (tiles(c, mysqlCommandSize)) return new MysqlHandler(false)
  return new LineHandler()
}
