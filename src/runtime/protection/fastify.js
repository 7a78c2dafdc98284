import { afterHandler } from './pressure-handler.js'

/** @typedef {import('./protection.js').OverloadProtection} OverloadProtection */

/** What Fastify itself reads from register()'s options: anything else given there is an option in the wrong place. */
const FASTIFY_KEYS = new Set(['prefix', 'logLevel', 'logSerializers'])

/**
 * A Fastify plugin (typed loosely so that Fastify's types are not needed to use hotpath). It is marked to skip
 * Fastify's encapsulation, as fastify-plugin would, so its hook covers every route of the instance it is registered on.
 * @param {OverloadProtection} guard
 * @returns {(instance: any, opts: unknown, done: (err?: Error) => void) => void}
 */
export function fastifyPlugin (guard) {
  const statusPath = guard.statusPath
  /**
   * @param {any} fastify
   * @param {unknown} opts
   * @param {(err?: Error) => void} done
   */
  function hotpathOverloadProtection (fastify, opts, done) {
    const misplaced = opts !== null && typeof opts === 'object' ? Object.keys(opts).filter(k => !FASTIFY_KEYS.has(k)) : []
    if (misplaced.length > 0) {
      return done(new TypeError(`guard.fastify(): register() was given ${misplaced.map(k => `'${k}'`).join(', ')}; give options to overloadProtection()`))
    }
    fastify.addHook('onRequest', (/** @type {any} */ request, /** @type {any} */ reply, /** @type {(err?: Error) => void} */ next) => {
      if (!guard.isUnderPressure()) return next()
      if (statusPath !== null && request.routeOptions?.url === statusPath) return next()
      // Answering from onRequest without calling next() is how Fastify ends a request early.
      const refuse = () => reply.code(503).header('retry-after', guard.retryAfter).type('application/json; charset=utf-8').send(guard.body)
      const p = guard.pressure()
      if (guard.pressureHandler !== undefined && p !== null) {
        const answered = afterHandler(guard.pressureHandler, [request, reply, p.type, p.value], () => reply.sent === true, refuse)
        if (answered === true) return
        if (answered === false) return next()
        answered.then((sent) => { if (!sent) next() }, next)
        return
      }
      refuse()
    })
    if (statusPath !== null) {
      fastify.route({
        method: ['GET', 'HEAD'],
        url: statusPath,
        handler: (/** @type {any} */ request, /** @type {any} */ reply) => {
          const [code, text] = guard.statusResponse()
          reply.code(code).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(text)
        }
      })
    }
    done()
  }
  Object.defineProperty(hotpathOverloadProtection, Symbol.for('skip-override'), { value: true })
  Object.defineProperty(hotpathOverloadProtection, Symbol.for('fastify.display-name'), { value: 'hotpath-overload-protection' })
  return hotpathOverloadProtection
}
