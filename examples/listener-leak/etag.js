// ETag plugin: after each response, hash the URL and the body and remember the tag for conditional requests.
import { createHash } from 'node:crypto'

/** @type {Map<string, string>} */
const etags = new Map()
let listenerAdded = false

/**
 * @param {unknown} body
 * @param {string} url
 */
function computeEtag (url, body) {
  const urlHash = createHash('sha512').update(url).digest('hex')
  const bodyHash = createHash('sha512').update(JSON.stringify(body)).digest('hex')
  return `"${urlHash.slice(0, 16)}${bodyHash.slice(0, 16)}"`
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {unknown} body
 */
function rememberEtag (req, res, body) {
  etags.set(req.url ?? '/', computeEtag(req.url ?? '/', body))
}

/**
 * Meant to attach the 'after' listener once. The bug: it checks a property of the middleware function instead of
 * the `listenerAdded` flag it sets, so every request adds one more listener — and every response runs all of them.
 * @param {import('./app.js').App} app
 * @returns {import('./app.js').Middleware}
 */
export function etagPlugin (app) {
  return function attachEtag (req, res, next) {
    // @ts-expect-error the bug: attachEtag.listenerAdded is always undefined
    if (!attachEtag.listenerAdded) {
      app.on('after', rememberEtag)
      listenerAdded = true
    }
    next()
  }
}

/** For a status page. */
export function etagStatus () {
  return { listenerAdded, remembered: etags.size }
}
