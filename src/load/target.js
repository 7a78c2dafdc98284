import { UsageError } from '../errors.js'

/**
 * @typedef {object} Target
 * @property {string} href the URL as given, normalised
 * @property {boolean} tls
 * @property {string} host host name or address to connect to (brackets removed from IPv6 literals)
 * @property {number} port
 * @property {string} path request target: pathname plus query
 * @property {string} hostHeader value of the Host header
 * @property {string | undefined} socketPath unix socket to connect to instead of host:port
 */

/**
 * @param {string} url
 * @param {string} [socketPath]
 * @returns {Target}
 */
export function parseTarget (url, socketPath) {
  let u
  try {
    u = new URL(url)
  } catch {
    throw new UsageError(`invalid URL '${url}' (expected e.g. http://127.0.0.1:3000/path)`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new UsageError(`unsupported protocol '${u.protocol}' in '${url}' (use http:// or https://)`)
  }
  if (!u.hostname) throw new UsageError(`invalid URL '${url}': no host`)
  const tls = u.protocol === 'https:'
  const port = u.port ? Number(u.port) : tls ? 443 : 80
  return {
    href: u.href,
    tls,
    host: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
    port,
    path: (u.pathname || '/') + u.search,
    hostHeader: u.host,
    socketPath
  }
}

/**
 * Resolves a request path against the target, so `--path /x` and request files may give paths or full URLs.
 * @param {Target} target
 * @param {string} path
 */
export function withPath (target, path) {
  if (!path.startsWith('/')) throw new UsageError(`request path must start with '/', got '${path}'`)
  return { ...target, path }
}
