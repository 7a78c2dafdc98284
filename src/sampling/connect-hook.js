// Hooks the two doors every client socket of the process comes through, so that the socket watchers (sockets.js)
// see each new connection: net.Socket.prototype.connect and tls.connect.

import net from 'node:net'
import tls from 'node:tls'

/** @typedef {import('./sockets.js').SocketWatcher} SocketWatcher */

/** @type {Set<SocketWatcher>} the watchers active now: the hooks stay for the process's life, idle while it is empty */
export const watchers = new Set()
let hooked = false
/** @type {{ connect: Function, wrapped: Function, tlsConnect: Function, tlsWrapped: Function } | null} */
let originals = null

/**
 * Client sockets all pass through net.Socket.prototype.connect (net.connect, new net.Socket().connect, http's and
 * undici's agents, every database driver) — except a TLS socket over an existing one, made by tls.connect. Both are
 * wrapped once per process and stay wrapped: with no watcher active, the wrappers only check a set.
 */
export function hookConnect () {
  if (hooked) return
  hooked = true
  const proto = /** @type {any} */ (net.Socket.prototype)
  const connect = proto.connect
  proto.connect = function connectWatched (/** @type {any[]} */ ...args) {
    // connect() resets an own `write` (net.js undoes an old end() trick): watch after it.
    const result = connect.apply(this, args)
    if (watchers.size > 0 && !watched.has(this)) {
      try {
        watched.add(this)
        const target = targetOf(args)
        for (const w of watchers) w.watch(this, target, connectWatched)
      } catch {}
    }
    return result
  }
  const tlsModule = /** @type {any} */ (tls)
  const tlsConnect = tlsModule.connect
  tlsModule.connect = function tlsConnectWatched (/** @type {any[]} */ ...args) {
    const socket = Reflect.apply(tlsConnect, this, args)
    if (watchers.size > 0 && !watched.has(socket)) {
      try {
        watched.add(socket)
        const options = args.find(a => a !== null && typeof a === 'object') ?? {}
        for (const w of watchers) w.watch(socket, { host: options.host ?? options.servername, port: options.port }, tlsConnectWatched)
      } catch {}
    }
    return socket
  }
  originals = { connect, wrapped: proto.connect, tlsConnect, tlsWrapped: tlsModule.connect }
}

/**
 * Puts both doors back, for a probe that leaves a process it was attached to (attach-entry.js). A wrapper that was
 * wrapped again since stays, idle: removing it would drop the other wrapper too.
 */
export function unhookConnect () {
  if (originals === null) return
  const proto = /** @type {any} */ (net.Socket.prototype)
  const tlsModule = /** @type {any} */ (tls)
  if (proto.connect === originals.wrapped) proto.connect = originals.connect
  if (tlsModule.connect === originals.tlsWrapped) tlsModule.connect = originals.tlsConnect
  originals = null
  hooked = false
}

/** @type {WeakSet<object>} */
const watched = new WeakSet()

/**
 * Client sockets opened before the hook was set — a pool's connections in a process hotpath attached to — are watched
 * from now on: what they speak is told from their next write (protocols/detect.js reads a stream joined midway).
 * Node lists its open handles only through process._getActiveHandles(); without it, they stay unwatched.
 * @param {{ watch: (socket: any, target: { host?: string, port?: number }, above: Function) => void }} w
 */
export function watchOpenSockets (w) {
  const list = /** @type {any} */ (process)._getActiveHandles
  if (typeof list !== 'function') return
  for (const s of list.call(process)) {
    // (a server's own connections carry their server: never touched)
    if (!(s instanceof net.Socket) || watched.has(s) || s.destroyed || s.connecting || /** @type {any} */ (s).server || s.remotePort === undefined) continue
    try {
      watched.add(s)
      w.watch(s, { host: s.remoteAddress, port: s.remotePort }, watchOpenSockets)
    } catch {}
  }
}

/**
 * connect(port, host), connect(path), connect({ port, host } | { path }), or the array net.connect normalises to.
 * @param {any[]} args
 * @returns {{ host?: string, port?: number, path?: string }}
 */
function targetOf (args) {
  const a = Array.isArray(args[0]) ? args[0] : args
  const first = a[0]
  if (first !== null && typeof first === 'object') return { host: first.host, port: Number(first.port) || undefined, path: first.path }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { path: first }
  return { port: Number(first) || undefined, host: typeof a[1] === 'string' ? a[1] : undefined }
}
