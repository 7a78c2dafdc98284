/** @typedef {import('./protection.js').OverloadProtection} OverloadProtection */
/** @typedef {import('node:http').IncomingMessage} IncomingMessage */
/** @typedef {import('node:http').ServerResponse} ServerResponse */

/**
 * Whether the request is for the status route (GET or HEAD on its path, with or without a query string).
 * @param {string | null} path
 * @param {IncomingMessage} req
 */
export function isStatusRequest (path, req) {
  if (path === null) return false
  const url = req.url ?? ''
  return url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === 63 /* ? */) &&
    (req.method === 'GET' || req.method === 'HEAD')
}

/**
 * @param {OverloadProtection} guard
 * @param {ServerResponse} res
 */
function answerStatus (guard, res) {
  const [code, text] = guard.statusResponse()
  res.writeHead(code, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/**
 * @template {IncomingMessage} Req
 * @template {ServerResponse} Res
 * @param {OverloadProtection} guard
 * @param {(req: Req, res: Res) => void} handler
 * @returns {(req: Req, res: Res) => void}
 */
export function httpHandler (guard, handler) {
  const statusPath = guard.statusPath
  if (typeof handler !== 'function') {
    throw new TypeError(`guard.http(): the argument must be your request handler, a function; got ${handler === null ? 'null' : typeof handler}`)
  }
  /**
   * @this {unknown}
   * @param {Req} req
   * @param {Res} res
   */
  return function protectedHandler (req, res) {
    if (statusPath !== null && isStatusRequest(statusPath, req)) return answerStatus(guard, res)
    if (!guard.isUnderPressure()) return handler.call(this, req, res)
    const answered = guard.refuse(req, res)
    if (answered === true) return
    if (answered === false) return handler.call(this, req, res)
    answered.then((done) => { if (!done) handler.call(this, req, res) }, () => {})
  }
}

/**
 * @param {OverloadProtection} guard
 * @returns {(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void}
 */
export function expressMiddleware (guard) {
  const statusPath = guard.statusPath
  return function overloadProtection (req, res, next) {
    if (statusPath !== null && isStatusRequest(statusPath, req)) return answerStatus(guard, res)
    if (!guard.isUnderPressure()) return next()
    const answered = guard.refuse(req, res)
    if (answered === true) return
    if (answered === false) return next()
    answered.then((done) => { if (!done) next() }, next)
  }
}
