// The probe of a process hotpath did not start (`--attach <pid>`): installed late through the inspector, on the main
// thread only, and taken out again completely when hotpath says `detach` — or when hotpath's end of the channel goes
// away. Unlike preload.js it never stops the target: hotpath gone means the probe leaves, and the process serves on.
import { existsSync } from 'node:fs'
import net from 'node:net'
import tls from 'node:tls'
import { openChannel } from './hotpath-channel.js'
import { Probe } from './probe.js'
import { isHttpServer } from './request-tracker.js'
import { unhookConnect } from '../sampling/connect-hook.js'
import { COMMAND, MESSAGE } from '../probe-protocol.js'

/** Marks a process that has a probe attached now: a second hotpath must not attach over it. */
const ATTACHED = Symbol.for('hotpath.attached')

/**
 * @typedef {object} AttachSettings the spawned probe's environment (preload.js), as arguments: the process is running
 * @property {string} HOTPATH_CHANNEL
 * @property {string} HOTPATH_RUN_DIR
 * @property {string} [HOTPATH_INTERVAL]
 * @property {string} [HOTPATH_RUNTIME]
 * @property {string} [HOTPATH_PROFILE_INTERVAL]
 */

/**
 * @typedef {{ send: (message: import('../probe-protocol.js').ProbeMessage) => void, close: () => void }} ProbeLink the
 *   probe's end of its channel
 */

/**
 * Starts the probe in this process and reports the servers already listening. Called once, from the inspector — or by
 * hotpath/runtime's diagnoser (src/runtime/diagnoser.js), which drives the probe from within the process and gives
 * its own `link` instead of a channel's socket.
 * @param {AttachSettings} settings
 * @param {(onCommand: (command: import('../probe-protocol.js').ProbeCommand) => void) => ProbeLink} [link]
 * @returns {{ ok: true, pid: number, servers: number } | { ok: false, reason: string }}
 */
export function attach (settings, link) {
  const g = /** @type {any} */ (globalThis)
  if (g[ATTACHED]) return { ok: false, reason: 'another hotpath is attached to it' }
  // A process too busy to load the probe in time gets here after hotpath gave up and removed its channel: nothing to
  // attach to, and no one to tell the probe to leave.
  if (link === undefined && !existsSync(settings.HOTPATH_CHANNEL)) return { ok: false, reason: 'hotpath is gone' }
  /** @type {Probe | null} */
  let probe = null
  /** @type {(() => Promise<void>) | null} */
  let leave = null
  /** @param {import('../probe-protocol.js').ProbeCommand} command */
  const onCommand = (command) => {
    if (command?.type === COMMAND.DETACH) leave?.().then(() => channel.send({ type: MESSAGE.DETACHED, pid: process.pid, threadId: 0 }))
    else probe?.onCommand(command)
  }
  const channel = link ? link(onCommand) : openChannel(settings.HOTPATH_CHANNEL, onCommand, () => { leave?.() })
  probe = new Probe({
    runDir: settings.HOTPATH_RUN_DIR,
    channel,
    interval: Number(settings.HOTPATH_INTERVAL ?? 10),
    runtime: settings.HOTPATH_RUNTIME !== '0',
    profileInterval: Number(settings.HOTPATH_PROFILE_INTERVAL ?? 1000)
  })
  const p = probe
  // hotpath did not start this process and cannot wait for it: the probe says how it ends.
  const final = (/** @type {number} */ code) => {
    p.final()
    channel.send({ type: MESSAGE.EXIT, pid: process.pid, code })
  }
  process.on('exit', final)
  p.start()
  /** @type {Added[]} */
  const watched = []
  const handles = typeof (/** @type {any} */ (process))._getActiveHandles === 'function' ? /** @type {any} */ (process)._getActiveHandles() : []
  const servers = watchServers(p, channel, handles, watched)
  current = { probe: p, channel, watched }
  g[ATTACHED] = true
  let left = false
  leave = async () => {
    if (left) return
    left = true
    try {
      if (p.loading) await p.loadStop()
      p.flush()
      remove(p)
      for (const { server, event, listener } of watched) server.removeListener(event, listener)
      process.removeListener('exit', final)
    } catch {}
    // hotpath heap keeps one inspector session for its snapshots (heap-snapshot.js): it goes too, where it can.
    try {
      const heap = /** @type {any} */ (await import('./heap-snapshot.js'))
      if (typeof heap.closeSession === 'function') heap.closeSession()
    } catch {}
    delete g[ATTACHED]
    current = null
    channel.close()
  }
  return { ok: true, pid: process.pid, servers }
}

/**
 * Servers hotpath found on the heap (Runtime.queryObjects) when none has a handle of its own: a cluster worker's
 * servers listen through its primary.
 * @param {unknown[]} servers
 * @returns {number} how many listen
 */
export function addServers (servers) {
  if (current === null || !Array.isArray(servers)) return 0
  return watchServers(current.probe, current.channel, servers, current.watched)
}

/** @typedef {{ server: net.Server, event: string, listener: (...args: any[]) => void }} Added */

/** @type {{ probe: Probe, channel: ProbeLink, watched: Added[] } | null} the attachment now */
let current = null

/**
 * The servers already listening — the probe came after their listen() — reported as preload.js reports new ones;
 * the listeners the probe adds to each are kept in `added`, to take off again.
 * @param {Probe} probe
 * @param {ProbeLink} channel
 * @param {unknown[]} candidates
 * @param {Added[]} added
 * @returns {number} the servers found listening
 */
function watchServers (probe, channel, candidates, added) {
  let found = 0
  for (const server of candidates) {
    if (!(server instanceof net.Server) || !server.listening || added.some(a => a.server === server)) continue
    const address = server.address()
    if (address === null || typeof address !== 'object') continue
    found++
    /** @type {Map<string, Function[]>} */
    const before = new Map(['request', 'connection', 'secureConnection'].map(e => [e, server.listeners(e)]))
    probe.onListening(address.port, address.address, server)
    for (const [event, old] of before) {
      for (const listener of server.listeners(event)) {
        if (!old.includes(listener)) added.push({ server, event, listener: /** @type {any} */ (listener) })
      }
    }
    channel.send({
      type: MESSAGE.LISTENING,
      pid: process.pid,
      threadId: 0,
      port: address.port,
      address: address.address,
      family: address.family,
      tls: server instanceof tls.Server,
      http: isHttpServer(server)
    })
  }
  return found
}

/**
 * Takes every hook of the probe out: its timers and delay monitor, async hooks, diagnostics-channel subscriptions,
 * prototype wrappers, and the write/push wrappers on client sockets still open.
 * @param {Probe} probe
 */
function remove (probe) {
  probe.disarmWaits()
  probe.sampler.stop()
  probe.requests.stop()
  probe.listeners.stop()
  probe.agents.stop()
  probe.outgoing.stop()
  probe.sockets.stop()
  probe.pools.stop()
  probe.stopEnv()
  if (probe.flushTimer !== null) clearInterval(probe.flushTimer)
  probe.flushTimer = null
  unhookConnect()
  const handles = typeof (/** @type {any} */ (process))._getActiveHandles === 'function' ? /** @type {any} */ (process)._getActiveHandles() : []
  for (const socket of handles) {
    if (!(socket instanceof net.Socket)) continue
    const s = /** @type {any} */ (socket)
    // The socket watcher's wrappers (sockets.js) are own properties over the prototype's methods: without them the
    // socket uses the prototype's again, which is what net.Socket's connect() leaves there.
    if (Object.hasOwn(s, 'write') && s.write.name === 'watchedWrite') delete s.write
    if (Object.hasOwn(s, 'push') && s.push.name === 'watchedPush') delete s.push
  }
}
