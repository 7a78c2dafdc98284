// A tiny middleware framework, as many in-house ones are: middleware run in order, then the route; when the response
// is sent the app emits 'after' so plugins can do their bookkeeping.
import { EventEmitter } from 'node:events'

/**
 * @typedef {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, next: () => void) => void} Middleware
 * @typedef {(req: import('node:http').IncomingMessage) => unknown} Route
 */

export class App extends EventEmitter {
  constructor () {
    super()
    /** @type {Middleware[]} */
    this.stack = []
    /** @type {Map<string, Route>} */
    this.routes = new Map()
  }

  /** @param {Middleware} middleware */
  use (middleware) {
    this.stack.push(middleware)
  }

  /**
   * @param {string} path
   * @param {Route} route
   */
  get (path, route) {
    this.routes.set(path, route)
  }

  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  handle (req, res) {
    let i = 0
    const next = () => {
      const middleware = this.stack[i++]
      if (middleware) return middleware(req, res, next)
      const route = this.routes.get(new URL(req.url ?? '/', 'http://localhost').pathname)
      if (!route) {
        res.writeHead(404).end()
        return
      }
      const body = route(req)
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
      res.once('finish', () => this.emit('after', req, res, body))
    }
    next()
  }
}
