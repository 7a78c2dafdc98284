// Preloaded into the target (NODE_OPTIONS=--import) by `hotpath load -- <command>` and `hotpath doctor`.
// It runs in every Node process of the target's tree (npm, the server, cluster workers) and in its worker threads, and
// does nothing unless HOTPATH_CHANNEL names hotpath's socket. With HOTPATH_RUN_DIR (doctor) it also starts the full
// probe. Whatever happens here must never throw into the target, change its behaviour, or keep it alive.
import net from 'node:net'
import tls from 'node:tls'
import { isMainThread, threadId } from 'node:worker_threads'
import { openChannel } from './hotpath-channel.js'
import { isHttpServer } from './request-tracker.js'
import { COMMAND, MESSAGE } from '../probe-protocol.js'

/** Set in the main thread's environment while the load runs, to the loaded port: worker threads made then copy it. */
const LOADING = 'HOTPATH_LOADING'

const path = process.env.HOTPATH_CHANNEL
const runDir = process.env.HOTPATH_RUN_DIR
if (path) {
  try {
    /** @type {import('./probe.js').Probe | null} */
    let probe = null
    // hotpath's first word to a probe that connects ('state': is the load on?) can come while probe.js still loads —
    // in a worker thread started as the load begins, that word is the only load-start it gets: kept, not dropped.
    /** @type {any[] | null} */
    let early = runDir ? [] : null
    const channel = openChannel(path, (command) => {
      if (isMainThread && runDir) markLoading(command)
      if (early !== null) early.push(command)
      else probe?.onCommand(command)
    }, leave)
    if (runDir) {
      try {
        probe = await startProbe(channel, runDir)
      } catch (err) {
        // One that cannot start (a bug of hotpath's, a runtime it does not know) says why and leaves the target running
        // without it: hotpath stops the run with that reason, rather than waiting for a probe that never comes.
        const error = String(/** @type {any} */ (err)?.message ?? err).split('\n', 1)[0]
        try { channel.send({ type: MESSAGE.PROBE_FAILED, pid: process.pid, threadId: isMainThread ? 0 : threadId, error }) } catch {}
      }
      const commands = early ?? []
      early = null
      if (probe !== null) {
        // A worker thread made during the load (a lazy pool's) learns so from the environment it was given: one that
        // is busy from its first message may not read its channel before the load ends (Node handles a port's queued
        // messages in a batch, and the load keeps queueing more).
        const loading = process.env[LOADING]
        if (!isMainThread && loading !== undefined && !commands.some(c => c?.type === COMMAND.LOAD_STOP)) {
          probe.onCommand({ type: COMMAND.STATE, loading: true, port: Number(loading) })
        }
        for (const command of commands) probe.onCommand(command)
      }
    }
    reportListening(channel, probe)
  } catch {}
}

/**
 * Starts the full probe, watching the target's exit to flush it.
 * @param {ReturnType<typeof openChannel>} channel
 * @param {string} runDir
 */
async function startProbe (channel, runDir) {
  const { Probe } = await import('./probe.js')
  const p = new Probe({
    runDir,
    channel,
    interval: Number(process.env.HOTPATH_INTERVAL ?? 10),
    runtime: process.env.HOTPATH_RUNTIME !== '0',
    profileInterval: Number(process.env.HOTPATH_PROFILE_INTERVAL ?? 1000)
  })
  p.start()
  watchExit(p)
  return p
}

/**
 * Keeps LOADING in step with hotpath's commands.
 * @param {any} command
 */
function markLoading (command) {
  try {
    if (command?.type === COMMAND.LOAD_START || (command?.type === COMMAND.STATE && command.loading)) process.env[LOADING] = String(command.port ?? '')
    else if (command?.type === COMMAND.LOAD_STOP) delete process.env[LOADING]
  } catch {}
}

/**
 * hotpath is gone (killed by a CI timeout or the OOM killer, crashed) and cannot stop the target: the target stops
 * itself, as if hotpath had (SIGTERM, so its own shutdown runs; SIGKILL if it is still there 5 s later). Once per
 * process, from whichever of its threads notices first.
 */
function leave () {
  if (!isMainThread) {
    process.kill(process.pid, 'SIGTERM')
    return
  }
  setTimeout(() => { try { process.kill(process.pid, 'SIGKILL') } catch {} }, 5000).unref()
  process.kill(process.pid, 'SIGTERM')
}

/**
 * Every server — http, https, express, fastify, cluster workers — ends up in net.Server.prototype.listen.
 * @param {ReturnType<typeof openChannel>} channel
 * @param {import('./probe.js').Probe | null} probe
 */
function reportListening (channel, probe) {
  const listen = net.Server.prototype.listen
  net.Server.prototype.listen = function (/** @type {any[]} */ ...args) {
    this.once('listening', () => {
      try {
        const address = this.address()
        if (address !== null && typeof address === 'object') {
          probe?.onListening(address.port, address.address, this)
          channel.send({
            type: MESSAGE.LISTENING,
            pid: process.pid,
            threadId: isMainThread ? 0 : threadId,
            port: address.port,
            address: address.address,
            family: address.family,
            tls: this instanceof tls.Server,
            // An app may open other listeners first (an internal TCP service, a metrics port of its own protocol).
            http: isHttpServer(this)
          })
        }
      } catch {}
    })
    return listen.apply(this, /** @type {any} */ (args))
  }
}

/**
 * Flushes the probe's record when the target exits or is told to stop, keeping the target's own behaviour: on a signal
 * the target has no handler for, it still dies of that signal, as it would have without hotpath.
 * @param {import('./probe.js').Probe} probe
 */
function watchExit (probe) {
  let done = false
  const final = () => {
    if (done) return
    done = true
    probe.final()
  }
  process.on('exit', final)
  if (!isMainThread) return
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    const handler = () => {
      final()
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, handler)
        process.kill(process.pid, signal)
      }
    }
    process.on(signal, handler)
  }
}
