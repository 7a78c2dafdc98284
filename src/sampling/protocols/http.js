// HTTP/1.x requests, named by their request line.

import { find, isPrintable, latin1, u8, wordEnd } from './bytes.js'

/** @typedef {import('./bytes.js').Bytes} Bytes */
/** @typedef {import('./handler.js').Handler} Handler */
/** @typedef {import('./handler.js').Protocol} Protocol */

const HTTP_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'CONNECT', 'TRACE'])
const HTTP_TARGET_BYTES = 512

/**
 * `GET /price/:id` from a request line at the chunk's start, or null.
 * @param {Bytes} c
 * @param {boolean} strict only the standard methods (to recognise a connection); else any upper-case word
 * @returns {string | null}
 */
export function httpRequest (c, strict) {
  const space = wordEnd(c, 0, Math.min(c.length, 17))
  if (space < 3 || u8(c, space) !== 0x20) return null
  const method = latin1(c, 0, space)
  if (strict ? !HTTP_METHODS.has(method) : !/^[A-Z][A-Z-]+$/.test(method)) return null
  const t = space + 1
  const first = u8(c, t)
  if (first !== 0x2f && first !== 0x2a && first !== 0x68 && method !== 'CONNECT') return null
  let end = find(c, 0x20, t, Math.min(c.length, t + HTTP_TARGET_BYTES))
  if (end < 0) end = Math.min(c.length, t + HTTP_TARGET_BYTES)
  const target = latin1(c, t, end)
  return isPrintable(target) ? `${method} ${pathPattern(target)}` : null
}

/**
 * `/users/42/orders?x=1` → `/users/:id/orders`: ids in paths would make every request its own operation. A proxy's
 * `http://host:8080/users/42` keeps its origin.
 * @param {string} target
 */
function pathPattern (target) {
  const q = target.search(/[?#]/)
  const bare = q === -1 ? target : target.slice(0, q)
  const scheme = bare.indexOf('://')
  const slash = scheme < 0 ? 0 : bare.indexOf('/', scheme + 3)
  if (slash < 0) return bare
  return bare.slice(0, slash) + bare.slice(slash).split('/').map(s => /\d/.test(s) ? ':id' : s).join('/')
}

/**
 * Names HTTP/1.x requests by their request line; writes that do not start with one carry headers or a body.
 * @implements {Handler}
 */
export class HttpHandler {
  /** @type {Protocol} */
  protocol = 'http'

  /** @param {Bytes} c */
  write (c) {
    const op = httpRequest(c, false)
    return op === null ? null : { protocol: this.protocol, op, replies: 1 }
  }

  reads () {
    return -1
  }
}
