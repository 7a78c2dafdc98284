// The HTTP trigger of on-demand profiling (and of on-demand diagnosis, diagnosis.js): a request handler the app mounts
// where it chooses, guarded by a bearer token compared in constant time. It answers when the capture's files are
// written; nothing it does throws into the app.
import { createHash, timingSafeEqual } from 'node:crypto'
import { checkOptions, rule } from './options.js'

/**
 * What the trigger starts: the profiler, or the diagnoser (through an adapter of the same shape).
 * @typedef {object} Capturer
 * @property {number} duration seconds, unless the request asks for others
 * @property {(opts: { duration: number, heap?: boolean }) => Promise<{ ok: true, files: string[], duration: number, dir?: string } | { ok: false, reason: string }>} capture
 */

/**
 * @typedef {object} HttpTriggerOptions
 * @property {string} token the secret a request must carry as `Authorization: Bearer <token>` (at least 16 characters)
 * @property {number} [maxDuration] the longest capture a request may ask for with `?seconds=N` (default 60)
 */

const MIN_TOKEN = 16

/** @type {Record<string, import('./options.js').OptionRule>} */
const TRIGGER_OPTIONS = {
  // Its length is checked apart: a message must not repeat a secret.
  token: { types: ['string'], expect: 'a string' },
  maxDuration: rule.positive('seconds')
}

/**
 * @param {Capturer} profiler
 * @param {HttpTriggerOptions} opts
 * @param {string} [call] what the app called, for its mistakes' messages
 * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void}
 */
export function httpTrigger (profiler, opts, call = 'profiler.httpHandler()') {
  // A configuration mistake is reported when the app sets it up, not at a request.
  checkOptions(call, opts, TRIGGER_OPTIONS)
  if (typeof opts?.token !== 'string' || opts.token.length < MIN_TOKEN) {
    throw new TypeError(`${call}: token must be a secret of at least ${MIN_TOKEN} characters`)
  }
  const expected = digest(opts.token)
  const maxDuration = opts.maxDuration ?? 60
  return (req, res) => {
    try {
      handle(profiler, req, res, expected, maxDuration)
    } catch {
      answer(res, 500, { error: 'internal error' })
    }
  }
}

/**
 * @param {Capturer} profiler
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {Buffer} expected
 * @param {number} maxDuration
 */
function handle (profiler, req, res, expected, maxDuration) {
  // Drain any body: the request carries nothing we need, and an unread body would stall the socket.
  req.resume()
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST')
    return answer(res, 405, { error: 'use POST' })
  }
  const auth = req.headers.authorization ?? ''
  const given = auth.startsWith('Bearer ') ? auth.slice(7).trim() : ''
  // Digests of equal length, compared in constant time: neither the token nor its length leaks through timing.
  if (!timingSafeEqual(digest(given), expected)) return answer(res, 401, { error: 'a valid token is required' })
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams
  const seconds = query.has('seconds') ? Number(query.get('seconds')) : profiler.duration
  if (!(seconds > 0 && seconds <= maxDuration)) return answer(res, 400, { error: `seconds must be between 0 and ${maxDuration}` })
  const heap = query.has('heap') ? !['0', 'false', 'no'].includes(String(query.get('heap'))) : undefined
  profiler.capture({ duration: seconds, heap }).then((result) => {
    if (result.ok) answer(res, 200, { ...(result.dir ? { dir: result.dir } : {}), files: result.files, duration: result.duration })
    else if (result.reason === 'busy') answer(res, 409, { error: 'a capture is already running' })
    else if (result.reason === 'closed') answer(res, 503, { error: 'profiling is closed' })
    else answer(res, 500, { error: 'the capture failed' })
  })
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {object} body
 */
function answer (res, status, body) {
  try {
    if (res.headersSent || res.writableEnded || res.destroyed) return
    const text = JSON.stringify(body) + '\n'
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' })
    res.end(text)
  } catch {}
}

/** @param {string} text */
function digest (text) {
  return createHash('sha256').update(text).digest()
}
