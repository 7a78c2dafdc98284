import { afterHandler } from './pressure-handler.js'

/** @typedef {import('./protection.js').OverloadProtection} OverloadProtection */

/**
 * The part of Koa's context this middleware uses (typed here so that Koa's types are not needed to use hotpath).
 * @typedef {object} KoaContext
 * @property {string} path
 * @property {string} method
 * @property {number} status
 * @property {unknown} body
 * @property {string} type
 * @property {(name: string, value: string) => void} set
 * @property {{ headersSent: boolean }} res
 */

/**
 * @param {OverloadProtection} guard
 * @returns {(ctx: any, next: () => Promise<unknown>) => Promise<unknown>}
 */
export function koaMiddleware (guard) {
  const statusPath = guard.statusPath
  const bodyText = guard.body.toString()
  /**
   * @param {KoaContext} ctx
   * @param {() => Promise<unknown>} next
   */
  return async function overloadProtection (ctx, next) {
    if (statusPath !== null && ctx.path === statusPath && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      const [code, text] = guard.statusResponse()
      ctx.status = code
      ctx.type = 'application/json'
      ctx.set('cache-control', 'no-store')
      ctx.body = text
      return
    }
    if (!guard.isUnderPressure()) return next()
    const refuse = () => {
      ctx.status = 503
      ctx.set('retry-after', guard.retryAfter)
      ctx.type = 'application/json'
      ctx.body = bodyText
    }
    const p = guard.pressure()
    if (guard.pressureHandler !== undefined && p !== null) {
      const answered = await afterHandler(guard.pressureHandler, [ctx, p.type, p.value], () => ctx.body != null || ctx.status !== 404 || ctx.res.headersSent, refuse)
      if (!answered) return next()
      return
    }
    refuse()
  }
}
