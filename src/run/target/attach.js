// `--attach <pid>`: the probe put into a Node process hotpath did not start. Its inspector is opened as SIGUSR1 opens it
// (process._debugProcess), the probe is installed through it, and it is closed again at once: the probe talks over its
// channel like a preloaded one. On stop the probe takes every hook out and the process serves on as before.
import { chownSync, readFileSync, readlinkSync } from 'node:fs'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import { TargetError, UsageError } from '../../errors.js'
import { connectInspector, inspectorTargets } from './inspector-client.js'
import { alive, inspectorFlags, listeningOn, socketInodes } from './proc-info.js'
import { TargetProcess } from './target-process.js'
import { COMMAND, MESSAGE } from '../../probe-protocol.js'

const LOADER = fileURLToPath(new URL('../../probe/attach-loader.cjs', import.meta.url))
const ENTRY = new URL('../../probe/attach-entry.js', import.meta.url).href
/** ms the target is given to open its inspector after the signal, and to close it after the install */
const INSPECTOR_WAIT = 5000

/**
 * A running Node process with hotpath's probe attached: the same shape as a started TargetProcess (channel,
 * listening, waitForListening, exited, stop), so that a run drives either. Stopping it detaches; it never kills.
 */
export class AttachedTarget extends TargetProcess {
  /**
   * @param {number} pid
   * @param {{ env: Record<string, string> }} opts the probe's settings, as a spawned target gets them in its environment
   */
  constructor (pid, opts) {
    const info = inspectProcess(pid)
    super(info.argv.length > 0 ? info.argv : [info.exe], opts)
    this.targetPid = pid
    this.uid = info.uid
    this.gid = info.gid
    /** @type {NodeJS.Timeout | null} */
    this.watchTimer = null
    /** @type {number | null} the code the process exited with, as its probe told */
    this.exitCode = null
  }

  get pid () {
    return this.targetPid
  }

  /** Opens the target's inspector, installs the probe through it and closes it again; refuses with one line when it cannot. */
  async start () {
    const pid = this.targetPid
    try {
      checkInspector(pid)
    } catch (err) {
      this.channel.close()
      throw err
    }
    await this.channel.listen()
    this.collectListening()
    this.channel.on('message', (msg) => { if (msg?.type === MESSAGE.EXIT && typeof msg.code === 'number') this.exitCode = msg.code })
    this.shareWithTarget()
    const before = new Set(listeningSockets(pid).map(s => s.inode))
    try {
      /** @type {any} */ (process)._debugProcess(pid)
    } catch (err) {
      this.channel.close()
      throw new UsageError(`cannot open the inspector of pid ${pid}: ${/** @type {NodeJS.ErrnoException} */ (err).code ?? /** @type {Error} */ (err).message}`)
    }
    try {
      const inspector = await waitFor(() => listeningSockets(pid).find(s => !before.has(s.inode)), INSPECTOR_WAIT)
      if (inspector === undefined) throw new UsageError(`pid ${pid} did not open its inspector within ${INSPECTOR_WAIT / 1000} s (was it started with --disable-sigusr1 or without inspector support?)`)
      await this.install(inspector)
      const closed = await waitFor(() => listeningSockets(pid).some(s => s.inode === inspector.inode) ? undefined : true, INSPECTOR_WAIT)
      if (closed === undefined) throw new TargetError(`pid ${pid} did not close its inspector after the probe was installed`, { exitCode: 70 })
    } catch (err) {
      this.channel.close()
      throw err
    }
    this.watchExit()
    return this
  }

  /**
   * @param {{ address: string, port: number }} inspector
   */
  async install (inspector) {
    const pid = this.targetPid
    const loopback = inspector.address === '127.0.0.1' || inspector.address === '::1'
    const targets = await inspectorTargets(inspector.port)
    const url = targets[0]?.webSocketDebuggerUrl
    if (url === undefined) throw new UsageError(`the inspector of pid ${pid} lists no target to connect to`)
    const session = await connectInspector(url.replace(/^ws:\/\/[^/]+/, `ws://127.0.0.1:${inspector.port}`))
    /** @param {string} expression */
    const evaluate = async (expression) => {
      const r = await session.call('Runtime.evaluate', { expression, includeCommandLineAPI: true, awaitPromise: true, returnByValue: true })
      if (r.exceptionDetails) throw new Error(r.exceptionDetails.exception?.description?.split('\n')[0] ?? r.exceptionDetails.text)
      return r.result?.value
    }
    // Whatever happens next, the inspector is closed again: a moment after this answer, so that the answer gets out.
    // The command line's `require` exists only while the expression runs: taken along into the timer. Never throws.
    const close = () => evaluate('(r => { setTimeout(() => { try { r("node:inspector").close() } catch {} }, 50); return true })(require)').catch(() => {})
    try {
      if (!loopback) throw new UsageError(`pid ${pid} opened its inspector on ${inspector.address}, not on 127.0.0.1 (its --inspect-port names a host): hotpath closed it again and did not attach`)
      const version = String(await evaluate('process.versions.node'))
      if (Number(version.split('.')[0]) < 20 || await evaluate('typeof process._getActiveHandles') !== 'function') {
        throw new UsageError(`pid ${pid} runs Node ${version}: attaching needs Node 20 or later`)
      }
      const settings = JSON.stringify({ ...this.opts.env, HOTPATH_CHANNEL: this.channel.path })
      /** @type {{ ok: boolean, reason?: string, servers?: number }} */
      const result = await evaluate(`require(${JSON.stringify(LOADER)})(${JSON.stringify(ENTRY)}).then(m => m.attach(${settings}))`)
      if (!result?.ok) throw new UsageError(`cannot attach to pid ${pid}: ${result?.reason ?? 'the probe did not start'}`)
      if (result.servers === 0) await findServersOnHeap(session)
    } catch (err) {
      if (err instanceof UsageError) throw err
      throw new TargetError(`cannot install the probe in pid ${pid}: ${/** @type {Error} */ (err).message}`, { exitCode: 4 })
    } finally {
      await close()
      session.close()
    }
  }

  /**
   * The probe reported the servers listening as it started: with none on the main thread there is nothing to load,
   * unless --port names one (a worker thread's server is loaded without the probe seeing its requests).
   * @param {{ timeout: number, port?: number }} opts
   */
  async waitForListening (opts) {
    if (opts.port === undefined) {
      await waitFor(() => this.listening.length > 0 || this.exitInfo !== null ? true : undefined, 1000)
      if (this.listening.length === 0 && this.exitInfo === null) {
        throw new UsageError(`pid ${this.targetPid} has no server listening on its main thread (a cluster primary: attach to a worker's pid; a worker thread's server: give --port)`)
      }
    }
    return super.waitForListening(opts)
  }

  /** A root hotpath attaching to another user's process: that process must reach the channel and write the run. */
  shareWithTarget () {
    if (process.getuid?.() !== 0 || this.uid === 0) return
    const runDir = this.opts.env?.HOTPATH_RUN_DIR
    for (const path of [this.channel.dir, this.channel.path, ...(runDir ? [runDir] : [])]) {
      try { chownSync(path, this.uid, this.gid) } catch {}
    }
  }

  /**
   * A process that is not our child cannot be waited for: it is looked at four times a second. Its probe's last
   * message, the exit code, may still be unread when the pid is gone (timers run before sockets are read): the run
   * waits for the channel to close, which comes after its data, up to a second.
   */
  watchExit () {
    this.watchTimer = setInterval(async () => {
      if (alive(this.targetPid)) return
      if (this.watchTimer) clearInterval(this.watchTimer)
      await waitFor(() => this.channel.peers.size === 0 ? true : undefined, 1000)
      this.exitInfo ??= { code: this.exitCode, signal: null, stoppedByUs: false }
      this.resolveExit(this.exitInfo)
    }, 250)
    this.watchTimer.unref()
  }

  /**
   * Detaches: the probe writes what it holds, takes its hooks out and closes its channel. The process keeps running.
   * @returns {Promise<import('./target-process.js').ExitInfo>}
   */
  async stop () {
    this.stopping = true
    if (!this.exitInfo) {
      const detached = new Promise(resolve => {
        const timer = setTimeout(resolve, 5000)
        this.channel.on('message', (msg) => { if (msg?.type === MESSAGE.DETACHED) { clearTimeout(timer); resolve(undefined) } })
        this.channel.on('gone', () => { if (this.channel.peers.size === 0) { clearTimeout(timer); resolve(undefined) } })
      })
      this.channel.broadcast({ type: COMMAND.DETACH })
      await detached
    }
    if (this.watchTimer) clearInterval(this.watchTimer)
    // Closing the channel is also what makes a probe that did not answer leave on its own.
    this.channel.close()
    this.exitInfo ??= { code: null, signal: null, stoppedByUs: true }
    this.resolveExit(this.exitInfo)
    return this.exitInfo
  }

  /** Its output goes where its owner sent it, not to hotpath. */
  tail () {
    return []
  }
}

/**
 * A cluster worker's servers have no handle of their own (its primary listens): V8 finds every net.Server on the heap
 * (a walk of the heap, once, and only when the probe found no server by its handles), and they are handed to the probe.
 * @param {import('./inspector-client.js').InspectorSession} session
 */
async function findServersOnHeap (session) {
  const proto = await session.call('Runtime.evaluate', { expression: 'require("node:net").Server.prototype', includeCommandLineAPI: true })
  const found = await session.call('Runtime.queryObjects', { prototypeObjectId: proto.result.objectId, objectGroup: 'hotpath' })
  const loader = await session.call('Runtime.evaluate', { expression: `require(${JSON.stringify(LOADER)})`, includeCommandLineAPI: true, objectGroup: 'hotpath' })
  await session.call('Runtime.callFunctionOn', {
    objectId: loader.result.objectId,
    functionDeclaration: 'function (entry, servers) { return this(entry).then(m => m.addServers(servers)) }',
    arguments: [{ value: ENTRY }, { objectId: found.objects.objectId }],
    awaitPromise: true,
    returnByValue: true
  })
  await session.call('Runtime.releaseObjectGroup', { objectGroup: 'hotpath' }).catch(() => {})
}

/**
 * The probe's settings for a process hotpath attaches to: what a spawned target's probe reads from its environment.
 * @param {number} pid
 * @param {{ env: Record<string, string> }} opts
 * @returns {AttachedTarget} not yet started: `await target.start()`, as for a TargetProcess
 */
export function attachedTarget (pid, opts) {
  return new AttachedTarget(pid, opts)
}

/**
 * The refusals that need nothing opened: no such process, another user's, not Node, hotpath itself, an inspector
 * open already or that would open elsewhere than 127.0.0.1.
 * @param {number} pid
 * @returns {{ uid: number, gid: number, exe: string, argv: string[] }}
 */
export function inspectProcess (pid) {
  if (!Number.isInteger(pid) || pid <= 0) throw new UsageError(`--attach needs a process id, got '${pid}'`)
  if (process.platform !== 'linux') throw new UsageError('--attach works on Linux only')
  if (pid === process.pid) throw new UsageError('--attach cannot attach hotpath to itself')
  let status
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    throw new UsageError(`no process with pid ${pid}`)
  }
  const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1)
  const gid = Number(/^Gid:\s+(\d+)/m.exec(status)?.[1] ?? -1)
  const me = process.getuid?.() ?? -1
  if (me !== 0 && me !== uid) throw new UsageError(`pid ${pid} belongs to another user (uid ${uid}): attach as that user or as root`)
  let exe = ''
  try { exe = readlinkSync(`/proc/${pid}/exe`) } catch {}
  if (!/node/i.test(basename(exe))) throw new UsageError(`pid ${pid} is not a Node.js process (it runs ${exe || /^Name:\s+(.*)$/m.exec(status)?.[1] || 'something unreadable'})`)
  /** @type {string[]} */
  let argv = []
  try { argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean) } catch {}
  checkInspector(pid)
  return { uid, gid, exe, argv }
}

/**
 * Refuses a process whose inspector is open already (a debugger may be using it), would open where another process
 * listens, or would open on another address than 127.0.0.1.
 * @param {number} pid
 */
function checkInspector (pid) {
  const { port, open, host } = inspectorFlags(pid)
  if (open) throw new UsageError(`pid ${pid} was started with --inspect: its inspector is open already, a debugger may be using it, and hotpath does not share it`)
  if (host !== null && !/^(127\.0\.0\.1|localhost|::1|\[::1\])$/.test(host)) {
    throw new UsageError(`pid ${pid} would open its inspector on ${host} (its --inspect-port names that host), not on 127.0.0.1: hotpath does not open it`)
  }
  const owner = listeningOwner(pid, port)
  if (owner === 'target') throw new UsageError(`pid ${pid} has its inspector open already (port ${port}): a debugger may be using it, and hotpath does not share it`)
  if (owner === 'other') throw new UsageError(`port ${port}, where pid ${pid} would open its inspector, is taken by another process`)
}

/**
 * Who listens on a TCP port in the target's network: the target, another process, or nobody.
 * @param {number} pid
 * @param {number} port
 * @returns {'target' | 'other' | null}
 */
function listeningOwner (pid, port) {
  const all = listeningOn(pid).filter(s => s.port === port)
  if (all.length === 0) return null
  const own = socketInodes(pid)
  return all.some(s => own.has(s.inode)) ? 'target' : 'other'
}

/**
 * The TCP sockets the process listens on.
 * @param {number} pid
 */
function listeningSockets (pid) {
  const own = socketInodes(pid)
  return listeningOn(pid).filter(s => own.has(s.inode))
}

/**
 * Polls `check` every 50 ms until it gives something, or `timeout` ms pass.
 * @template T
 * @param {() => T | undefined} check
 * @param {number} timeout
 * @returns {Promise<T | undefined>}
 */
async function waitFor (check, timeout) {
  const deadline = Date.now() + timeout
  for (;;) {
    const found = check()
    if (found !== undefined || Date.now() >= deadline) return found
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}
