import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'

/**
 * One request as a user describes it (flags, API, or a line of a --requests file).
 * @typedef {object} RequestSpec
 * @property {string} [method]
 * @property {string} [path] defaults to the URL's path
 * @property {Record<string, string> | string[]} [headers] an object, or 'Name: value' strings
 * @property {string | Buffer | object} [body] objects are sent as JSON
 */

/**
 * A request ready for the wire.
 * @typedef {object} WireRequest
 * @property {Buffer} bytes
 * @property {boolean} head the response has no body whatever its headers say
 */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * Serialises a request once, up front, so sending it costs one write of ready bytes.
 * @param {RequestSpec} spec
 * @param {import('./target.js').Target} target
 * @returns {WireRequest}
 */
export function buildRequest (spec, target) {
  const method = (spec.method ?? 'GET').toUpperCase()
  if (!TOKEN.test(method)) throw new UsageError(`invalid method '${spec.method}'`)
  const path = spec.path ?? target.path
  if (!path.startsWith('/') && path !== '*') throw new UsageError(`request path must start with '/', got '${path}'`)
  if (/[\s]/.test(path)) throw new UsageError(`request path must not contain spaces, got '${path}'`)

  const headers = normaliseHeaders(spec.headers)
  let body = spec.body
  if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
    body = JSON.stringify(body)
    if (!headers.some(([name]) => name.toLowerCase() === 'content-type')) headers.push(['Content-Type', 'application/json'])
  }
  const bodyBytes = body === undefined ? null : Buffer.isBuffer(body) ? body : Buffer.from(body)

  let head = `${method} ${path} HTTP/1.1\r\n`
  const names = new Set(headers.map(([name]) => name.toLowerCase()))
  if (!names.has('host')) head += `Host: ${target.hostHeader}\r\n`
  for (const [name, value] of headers) head += `${name}: ${value}\r\n`
  if (bodyBytes && !names.has('content-length') && !names.has('transfer-encoding')) {
    head += `Content-Length: ${bodyBytes.length}\r\n`
  }
  head += '\r\n'
  const bytes = bodyBytes ? Buffer.concat([Buffer.from(head, 'latin1'), bodyBytes]) : Buffer.from(head, 'latin1')
  return { bytes, head: method === 'HEAD' }
}

/**
 * @param {RequestSpec['headers']} headers
 * @returns {[string, string][]}
 */
function normaliseHeaders (headers) {
  if (headers === undefined) return []
  /** @type {[string, string][]} */
  const out = []
  const entries = Array.isArray(headers) ? headers.map(parseHeaderLine) : Object.entries(headers)
  for (const [name, value] of entries) {
    if (!TOKEN.test(name)) throw new UsageError(`invalid header name '${name}'`)
    const v = String(value)
    if (/[\r\n]/.test(v)) throw new UsageError(`header '${name}' must not contain a line break`)
    out.push([name, v])
  }
  return out
}

/**
 * @param {string} line
 * @returns {[string, string]}
 */
export function parseHeaderLine (line) {
  const colon = line.indexOf(':')
  if (colon <= 0) throw new UsageError(`header must look like 'Name: value', got '${line}'`)
  return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()]
}

/**
 * Reads a --requests file: a JSON array of RequestSpec, or one JSON object per line (NDJSON).
 * @param {string} file
 * @returns {Promise<RequestSpec[]>}
 */
export async function readRequestsFile (file) {
  let text
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read requests file '${file}': ${/** @type {NodeJS.ErrnoException} */ (err).code ?? err}`)
  }
  /** @type {unknown} */
  let parsed
  const trimmed = text.trim()
  try {
    parsed = trimmed.startsWith('[')
      ? JSON.parse(trimmed)
      : trimmed.split('\n').filter(l => l.trim() !== '').map(l => JSON.parse(l))
  } catch (err) {
    throw new UsageError(`requests file '${file}' is not JSON or NDJSON: ${/** @type {Error} */ (err).message}`)
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    throw new UsageError(`requests file '${file}' must hold a non-empty list of {method, path, headers, body}`)
  }
  for (const [i, r] of parsed.entries()) {
    if (r === null || typeof r !== 'object' || Array.isArray(r)) {
      throw new UsageError(`requests file '${file}': entry ${i + 1} is not an object`)
    }
    if (r.path !== undefined && typeof r.path !== 'string') {
      throw new UsageError(`requests file '${file}': entry ${i + 1} has a non-string path`)
    }
  }
  return /** @type {RequestSpec[]} */ (parsed)
}

/**
 * The requests a connection sends, in round-robin order, laid out so that any run of up to `maxBatch` consecutive
 * requests is one contiguous slice: a pipelined refill of k requests is a single write with no copying.
 */
export class RequestCycle {
  /**
   * @param {WireRequest[]} requests
   * @param {number} maxBatch
   */
  constructor (requests, maxBatch) {
    this.size = requests.length
    const count = requests.length + maxBatch
    /** @type {Buffer[]} */
    const parts = []
    this.offsets = new Float64Array(count + 1)
    this.head = new Uint8Array(requests.length)
    let offset = 0
    for (let i = 0; i < count; i++) {
      const r = requests[i % requests.length]
      parts.push(r.bytes)
      this.offsets[i] = offset
      offset += r.bytes.length
    }
    this.offsets[count] = offset
    for (let i = 0; i < requests.length; i++) this.head[i] = requests[i].head ? 1 : 0
    this.bytes = Buffer.concat(parts)
    this.stride = maxBatch + 1
    /** @type {(Buffer | undefined)[]} slices made once and reused: a write then allocates nothing */
    this.slices = []
  }

  /**
   * @param {number} index position in the cycle, 0 <= index < size
   * @param {number} k how many consecutive requests, 1 <= k <= maxBatch
   */
  slice (index, k) {
    const key = index * this.stride + k
    let s = this.slices[key]
    if (s === undefined) {
      s = this.bytes.subarray(this.offsets[index], this.offsets[index + k])
      if (key < 1 << 16) this.slices[key] = s
    }
    return s
  }
}

/**
 * Digest of the requests a load sends, but for their Host line (servers started for a run listen on a new port each
 * time): two runs with equal digests sent the same methods, paths, headers and bodies.
 * @param {WireRequest[]} requests
 * @returns {string}
 */
export function requestsHash (requests) {
  const hash = createHash('sha256')
  for (const r of requests) hash.update(r.bytes.toString('latin1').replace(/\r\nhost:[^\r]*/i, ''))
  return hash.digest('hex').slice(0, 16)
}
