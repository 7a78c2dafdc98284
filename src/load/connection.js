import net from 'node:net'
import tls from 'node:tls'
import { performance } from 'node:perf_hooks'
import { NOT_HTTP_REASONS } from './not-http.js'
import { ResponseParser } from './response-parser.js'

/** @typedef {import('./runner.js').Runner} Runner */

/**
 * One keep-alive connection to the target. It writes ready-made request bytes, frames the responses, and keeps the send
 * (and intended send) time of each request in flight in a ring sized to the pipelining depth. The runner decides
 * when and how much to send; the connection tells it when capacity frees up.
 */
export class Connection {
  /**
   * @param {Runner} runner
   * @param {number} id
   */
  constructor (runner, id) {
    this.runner = runner
    this.id = id
    const depth = runner.pipelining
    this.depth = depth
    this.sentAt = new Float64Array(depth)
    this.intendedAt = new Float64Array(depth)
    this.requestOf = new Int32Array(depth)
    this.head = 0
    this.inflight = 0
    this.cursor = id % runner.cycle.size
    this.completedInRead = 0
    this.readAt = 0
    /** @type {net.Socket | null} */
    this.socket = null
    this.connected = false
    this.openedAt = 0
    /** consecutive opens that never connected; drives the reconnect back-off */
    this.failedOpens = 0
    /** the server said it will close after a response: send nothing more on this socket */
    this.closing = false
    /** set when this connection is already waiting in the runner's idle queue */
    this.queued = false
    /** an error or timeout on this socket was already counted: its close is not a second failure */
    this.failed = false
    this.parser = new ResponseParser(this)
  }

  get capacity () {
    return this.connected && !this.closing ? this.depth - this.inflight : 0
  }

  open () {
    const { target, readBuffer } = this.runner
    this.openedAt = performance.now()
    /** @type {net.Socket} */
    let socket
    if (target.tls) {
      socket = tls.connect({
        host: target.host,
        port: target.port,
        servername: net.isIP(target.host) ? undefined : target.host,
        rejectUnauthorized: false, // load tests mostly hit staging servers with self-signed certificates
        ALPNProtocols: ['http/1.1']
      })
      socket.on('data', (/** @type {Buffer} */ data) => this.onData(data, data.length))
      socket.once('secureConnect', () => this.onConnect())
    } else {
      // onread with one buffer shared by every connection of the thread: the callback runs synchronously and the
      // parser copies what it must keep, so reads allocate nothing.
      const onread = { buffer: readBuffer, callback: (/** @type {number} */ n, /** @type {Buffer} */ buf) => { this.onData(buf, n); return true } }
      socket = target.socketPath
        ? net.connect({ path: target.socketPath, onread })
        : net.connect({ host: target.host, port: target.port, onread })
      socket.once('connect', () => this.onConnect())
    }
    // Pipelined requests are left to Nagle to coalesce: the server then reads many per syscall (about 25% more
    // requests/s from a Node server at -p 10). One request in flight is never delayed by it, but a multi-segment
    // body could be, so -p 1 turns it off.
    socket.setNoDelay(this.depth === 1)
    socket.on('error', (err) => this.onSocketError(err))
    socket.once('close', () => this.onClose(socket))
    this.socket = socket
  }

  onConnect () {
    this.connected = true
    this.runner.refill(this)
  }

  /**
   * Sends the next `k` requests of the cycle in one write.
   * @param {number} k
   * @param {number} now perf-clock ms to stamp them with
   */
  send (k, now) {
    const runner = this.runner
    const cycle = runner.cycle
    let index = this.cursor
    let slot = this.head + this.inflight
    if (slot >= this.depth) slot -= this.depth
    const late = runner.rateMode && runner.recording
    for (let j = 0; j < k; j++) {
      this.sentAt[slot] = now
      const intended = runner.rateMode ? runner.nextIntended() : now
      this.intendedAt[slot] = intended
      if (late) runner.recorder.late(now - intended)
      this.requestOf[slot] = index
      if (++slot === this.depth) slot = 0
      if (++index === cycle.size) index = 0
    }
    const socket = /** @type {net.Socket} */ (this.socket)
    socket.write(cycle.slice(this.cursor, k))
    this.cursor = index
    this.inflight += k
    runner.recorder.sent += k
  }

  /**
   * @param {Buffer} data
   * @param {number} length bytes of `data` that are this read's (the rest of a shared read buffer is stale)
   */
  onData (data, length) {
    const runner = this.runner
    if (runner.recording) runner.recorder.addBytes(length)
    this.readAt = performance.now()
    if (runner.busyPoll) runner.keepAwake(this.readAt)
    this.completedInRead = 0
    this.parser.execute(data, length)
    // The requests that replace this read's responses go out in the same callback, within a microsecond or two of
    // the read: its time stamps them too, which saves a clock read per request (~0.5% of the generator's CPU).
    if (this.completedInRead > 0) {
      runner.refill(this, this.readAt)
      runner.coalescer?.afterRead()
    }
  }

  // ResponseSink, called by the parser

  /**
   * @param {number} status
   * @param {boolean} willClose
   */
  onResponse (status, willClose) {
    if (this.inflight === 0) {
      this.onError(NOT_HTTP_REASONS.unsolicited)
      return
    }
    const slot = this.head
    this.head = slot + 1 === this.depth ? 0 : slot + 1
    this.inflight--
    this.completedInRead++
    const runner = this.runner
    const sentAt = this.sentAt[slot]
    const now = this.readAt
    runner.coalescer?.observe(now - sentAt)
    if (runner.recording && sentAt >= runner.measureStart) {
      runner.recorder.record(now - this.intendedAt[slot], now - sentAt, status)
    }
    if (willClose) {
      this.closing = true
      // A close-delimited body is framed by the close itself; otherwise end our side now.
      if (this.inflight === 0) this.socket?.end()
    }
    runner.onResponse()
  }

  /** @param {string} reason */
  onError (reason) {
    this.runner.fail(reason)
    // Counted here, under its first cause: the close that follows is not a second failure (nor a reset).
    this.failed = true
    this.socket?.destroy()
  }

  expectsNoBody () {
    return this.runner.cycle.head[this.requestOf[this.head]] === 1
  }

  /**
   * @param {Error & { code?: string }} err
   */
  onSocketError (err) {
    const code = err.code ?? 'socket error'
    const reset = code === 'ECONNRESET' || code === 'EPIPE'
    this.runner.fail(code, { reset: reset && this.inflight > 0 })
    this.failed = true
    this.socket?.destroy()
  }

  /** @param {net.Socket} socket */
  onClose (socket) {
    if (socket !== this.socket) return
    this.parser.finish()
    // A close with requests in flight that the server did not announce is a reset, counted once per connection;
    // errors and timeouts were counted when they happened.
    if (this.inflight > 0 && !this.closing && !this.failed) this.runner.fail('closed by server', { reset: true })
    const lost = this.inflight
    const wasConnected = this.connected
    this.socket = null
    this.connected = false
    this.closing = false
    this.failed = false
    this.inflight = 0
    this.head = 0
    this.parser.reset()
    this.runner.onConnectionClosed(this, lost, wasConnected)
  }

  /**
   * Called by the runner's watchdog: the oldest request (or the connect) has waited longer than the timeout.
   * @param {number} now
   * @param {number} timeoutMs
   * @returns {boolean} whether this connection timed out
   */
  checkTimeout (now, timeoutMs) {
    // A failed socket is closing and its failure counted already.
    if (this.socket === null || this.failed) return false
    const waitingSince = this.inflight > 0 ? this.sentAt[this.head] : this.connected ? Infinity : this.openedAt
    if (now - waitingSince <= timeoutMs) return false
    this.runner.fail('timeout', { timeout: true })
    this.failed = true
    this.socket.destroy()
    return true
  }
}
