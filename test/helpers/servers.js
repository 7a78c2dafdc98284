// Real servers on 127.0.0.1 for the tests: each counts what it saw, so tests can check the generator's figures
// against the server's.
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import { readFileSync } from 'node:fs'
import { once } from 'node:events'

const tlsOptions = {
  key: readFileSync(new URL('../fixtures/tls/key.pem', import.meta.url)),
  cert: readFileSync(new URL('../fixtures/tls/cert.pem', import.meta.url))
}

/**
 * @typedef {object} TestServer
 * @property {string} url
 * @property {number} port
 * @property {{ requests: number, connections: number, methods: Record<string, number>, paths: Record<string, number>, bodies: string[], headers: import('node:http').IncomingHttpHeaders[] }} seen
 * @property {() => Promise<void>} close
 */

/**
 * An HTTP (or HTTPS) server with a request handler.
 * @param {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, n: number) => void} handler
 * @param {{ tls?: boolean, socketPath?: string, keepBodies?: boolean }} [opts]
 * @returns {Promise<TestServer>}
 */
export async function httpServer (handler, opts = {}) {
  const seen = { requests: 0, connections: 0, methods: /** @type {Record<string, number>} */ ({}), paths: /** @type {Record<string, number>} */ ({}), bodies: /** @type {string[]} */ ([]), headers: /** @type {import('node:http').IncomingHttpHeaders[]} */ ([]) }
  const onRequest = (/** @type {import('node:http').IncomingMessage} */ req, /** @type {import('node:http').ServerResponse} */ res) => {
    const n = ++seen.requests
    seen.methods[req.method ?? ''] = (seen.methods[req.method ?? ''] ?? 0) + 1
    seen.paths[req.url ?? ''] = (seen.paths[req.url ?? ''] ?? 0) + 1
    if (opts.keepBodies && seen.headers.length < 100) {
      seen.headers.push(req.headers)
      let body = ''
      req.setEncoding('utf8')
      req.on('data', (c) => { body += c })
      req.on('end', () => { seen.bodies.push(body); handler(req, res, n) })
      return
    }
    req.resume()
    handler(req, res, n)
  }
  const server = opts.tls ? https.createServer(tlsOptions, onRequest) : http.createServer(onRequest)
  server.on('connection', () => { seen.connections++ })
  if (opts.socketPath) server.listen(opts.socketPath)
  else server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = opts.socketPath ? 0 : /** @type {net.AddressInfo} */ (server.address()).port
  return {
    url: opts.socketPath ? 'http://localhost/' : `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}/`,
    port,
    seen,
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}

/**
 * A raw TCP server for misbehaviour node:http would not produce: garbage, resets, partial responses.
 * @param {(socket: net.Socket, data: Buffer, state: { requests: number }) => void} onData
 */
export async function rawServer (onData) {
  const sockets = new Set()
  const seen = { requests: 0, connections: 0 }
  const server = net.createServer((socket) => {
    seen.connections++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    socket.on('data', (data) => onData(socket, data, seen))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = /** @type {net.AddressInfo} */ (server.address()).port
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    seen,
    close: () => new Promise(resolve => {
      for (const s of sockets) /** @type {net.Socket} */ (s).destroy()
      server.close(() => resolve(undefined))
    })
  }
}

/** How many complete request heads a chunk holds (requests without bodies). @param {Buffer} data */
export function countRequests (data) {
  let n = 0
  let i = -1
  while ((i = data.indexOf('\r\n\r\n', i + 1)) !== -1) n++
  return n
}
