// A client of a Node inspector over its WebSocket: just enough of RFC 6455 (text frames, masked from the client, pings)
// to send Chrome DevTools Protocol calls. Node 20 has no WebSocket without a flag and the `ws` package would be
// hotpath's first runtime dependency for ~100 lines of framing, so the framing is here.
import { randomBytes } from 'node:crypto'
import http from 'node:http'
import net from 'node:net'

/**
 * The inspector's debugging targets (GET /json/list); the first is the main thread.
 * @param {number} port
 * @param {number} [timeout] ms
 * @returns {Promise<{ webSocketDebuggerUrl?: string }[]>}
 */
export function inspectorTargets (port, timeout = 2000) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/json/list', timeout }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => { body += c })
      res.on('end', () => {
        try {
          const list = JSON.parse(body)
          resolve(Array.isArray(list) ? list : [])
        } catch {
          reject(new Error(`port ${port} did not answer as a Node inspector`))
        }
      })
    })
    req.on('timeout', () => req.destroy(new Error(`the inspector on port ${port} did not answer within ${timeout} ms`)))
    req.on('error', reject)
  })
}

/**
 * @typedef {object} InspectorSession
 * @property {(method: string, params?: object, timeout?: number) => Promise<any>} call the result, or a rejection
 *   with the protocol's error message
 * @property {() => void} close
 */

/**
 * Connects to an inspector's WebSocket (ws://127.0.0.1:<port>/<id>).
 * @param {string} url
 * @param {number} [timeout] ms for the handshake
 * @returns {Promise<InspectorSession>}
 */
export function connectInspector (url, timeout = 3000) {
  const { hostname, port, pathname } = new URL(url)
  const key = randomBytes(16).toString('base64')
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) })
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('the inspector did not accept the connection')) }, timeout)
    let head = Buffer.alloc(0)
    const onHead = (/** @type {Buffer} */ chunk) => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n')
      if (end < 0) return
      socket.off('data', onHead)
      clearTimeout(timer)
      const status = head.subarray(0, head.indexOf('\r\n')).toString('latin1')
      if (!/^HTTP\/1\.1 101/.test(status)) {
        socket.destroy()
        reject(new Error(`the inspector refused the connection (${status})`))
        return
      }
      resolve(session(socket, head.subarray(end + 4)))
    }
    socket.on('data', onHead)
    socket.once('error', (err) => { clearTimeout(timer); reject(err) })
    socket.once('connect', () => socket.write(
      `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`))
  })
}

/**
 * @param {net.Socket} socket
 * @param {Buffer} rest bytes that came with the handshake's answer
 * @returns {InspectorSession}
 */
function session (socket, rest) {
  let id = 0
  /** @type {Map<number, { resolve: (v: any) => void, reject: (e: Error) => void, timer: NodeJS.Timeout }>} */
  const pending = new Map()
  let buffer = rest
  /** @type {Buffer[]} a fragmented message's parts */
  let parts = []
  const fail = (/** @type {Error} */ err) => {
    for (const p of pending.values()) { clearTimeout(p.timer); p.reject(err) }
    pending.clear()
  }
  const onMessage = (/** @type {string} */ text) => {
    let message
    try { message = JSON.parse(text) } catch { return }
    const p = pending.get(message?.id)
    if (p === undefined) return
    pending.delete(message.id)
    clearTimeout(p.timer)
    if (message.error) p.reject(new Error(message.error.message ?? 'inspector error'))
    else p.resolve(message.result)
  }
  const read = () => {
    for (;;) {
      const frame = parseFrame(buffer)
      if (frame === null) return
      buffer = buffer.subarray(frame.size)
      if (frame.opcode === 0x8) { socket.end(); return }
      if (frame.opcode === 0x9) { socket.write(encodeFrame(0xA, frame.payload)); continue }
      if (frame.opcode !== 0x0 && frame.opcode !== 0x1) continue
      parts.push(frame.payload)
      if (frame.fin) {
        const text = Buffer.concat(parts).toString('utf8')
        parts = []
        onMessage(text)
      }
    }
  }
  socket.on('data', (chunk) => { buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]); read() })
  socket.on('close', () => fail(new Error('the inspector closed the connection')))
  socket.on('error', () => {})
  read()
  return {
    call (method, params = {}, timeout = 10000) {
      return new Promise((resolve, reject) => {
        if (socket.destroyed) { reject(new Error('the inspector connection is closed')); return }
        const n = ++id
        const timer = setTimeout(() => { pending.delete(n); reject(new Error(`the inspector did not answer ${method} within ${timeout} ms`)) }, timeout)
        pending.set(n, { resolve, reject, timer })
        socket.write(encodeFrame(0x1, Buffer.from(JSON.stringify({ id: n, method, params }))))
      })
    },
    close () {
      if (socket.destroyed) return
      socket.end(encodeFrame(0x8, Buffer.alloc(0)))
      // The inspector answers a close frame by closing; a peer that does not is not waited for.
      setTimeout(() => socket.destroy(), 500).unref()
    }
  }
}

/**
 * One client frame: final, masked (RFC 6455 §5.3 requires it of clients).
 * @param {number} opcode
 * @param {Buffer} payload
 */
function encodeFrame (opcode, payload) {
  const length = payload.length
  const header = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10)
  header[0] = 0x80 | opcode
  if (length < 126) {
    header[1] = 0x80 | length
  } else if (length < 65536) {
    header[1] = 0x80 | 126
    header.writeUInt16BE(length, 2)
  } else {
    header[1] = 0x80 | 127
    header.writeBigUInt64BE(BigInt(length), 2)
  }
  const mask = randomBytes(4)
  const masked = Buffer.alloc(length)
  for (let i = 0; i < length; i++) masked[i] = payload[i] ^ mask[i & 3]
  return Buffer.concat([header, mask, masked])
}

/**
 * The first whole frame in `buf`, or null when it has not all arrived.
 * @param {Buffer} buf
 * @returns {{ fin: boolean, opcode: number, payload: Buffer, size: number } | null}
 */
function parseFrame (buf) {
  if (buf.length < 2) return null
  const fin = (buf[0] & 0x80) !== 0
  const opcode = buf[0] & 0x0F
  const masked = (buf[1] & 0x80) !== 0
  let length = buf[1] & 0x7F
  let offset = 2
  if (length === 126) {
    if (buf.length < 4) return null
    length = buf.readUInt16BE(2)
    offset = 4
  } else if (length === 127) {
    if (buf.length < 10) return null
    length = Number(buf.readBigUInt64BE(2))
    offset = 10
  }
  const maskAt = offset
  if (masked) offset += 4
  if (buf.length < offset + length) return null
  let payload = buf.subarray(offset, offset + length)
  if (masked) {
    payload = Buffer.from(payload)
    for (let i = 0; i < length; i++) payload[i] ^= buf[maskAt + (i & 3)]
  }
  return { fin, opcode, payload, size: offset + length }
}
