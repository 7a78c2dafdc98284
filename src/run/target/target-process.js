import { spawn } from 'node:child_process'
import net from 'node:net'
import { ProbeChannel } from './probe-channel.js'
import { TargetError, UsageError } from '../../errors.js'
import { MESSAGE } from '../../probe-protocol.js'

const PRELOAD = new URL('../../probe/preload.js', import.meta.url).href
const TAIL_LINES = 30
/** ms a target that listens on ports of other kinds is given to open an HTTP server, before those ports are tried. */
const HTTP_GRACE = 1000
/**
 * ms a target whose every port was tried and spoke no HTTP is given to open another, before the run fails: an app may
 * open an internal service first and its HTTP server a moment later, but not waiting for one that never comes costs
 * the whole --listen-timeout (30 s) for a port that said at once it is not HTTP.
 */
const NO_HTTP_WAIT = 1000
/** The exit code of a load that failed (cli/exit-codes.js: LOAD_FAILED): a port that speaks no HTTP is one. */
const LOAD_FAILED = 3
/** The exit code of hotpath's own failure (docs/exit-codes.md): its probe could not start. */
const INTERNAL_ERROR = 70

/**
 * @typedef {object} Listening
 * @property {number} pid
 * @property {number} port
 * @property {string} host the address to connect to
 * @property {boolean} tls
 * @property {boolean} [http] a node:http or node:https server listens there (false: a server of another kind, which
 *   may still speak HTTP; undefined: the probe did not say)
 */

/**
 * @typedef {object} ExitInfo
 * @property {number | null} code
 * @property {NodeJS.Signals | null} signal
 * @property {boolean} stoppedByUs
 */

/**
 * A server command started by hotpath with the probe preloaded. It runs in its own process group, so stopping it stops
 * everything it started (npm → sh → node, cluster workers), and it is stopped by PID, never by name.
 */
export class TargetProcess {
  /**
   * @param {string[]} command
   * @param {{ env?: Record<string, string>, preload?: string, echo?: NodeJS.WritableStream, nodeOptions?: string }} [opts]
   *   nodeOptions: node flags added to NODE_OPTIONS after the user's own (doctor's experiments try settings this way)
   */
  constructor (command, opts = {}) {
    if (command.length === 0) throw new UsageError('no command given after --')
    this.command = command
    this.channel = new ProbeChannel()
    /** @type {Listening[]} */
    this.listening = []
    /** @type {Map<number, string>} the processes whose probe could not start (their main thread's), with why */
    this.probeFailed = new Map()
    /** @type {string[]} */
    this.stderrLines = []
    /** @type {string[]} */
    this.stdoutLines = []
    this.stopping = false
    /** @type {Set<number>} ports spoken HTTP to, without an answer */
    this.spoken = new Set()
    /** @type {Map<number, string>} what each port that speaks no HTTP answered instead, in words */
    this.answers = new Map()
    /** @type {number | null} when the last port spoken to answered no HTTP */
    this.triedAt = null
    /** @type {ExitInfo | null} */
    this.exitInfo = null
    this.opts = opts
    /** @type {import('node:child_process').ChildProcess | null} */
    this.child = null
    /** @type {(info: ExitInfo) => void} */
    this.resolveExit = () => {}
    /** @type {Promise<ExitInfo>} */
    this.exited = new Promise((resolve) => { this.resolveExit = resolve })
  }

  /** Starts the command; rejects with a UsageError when it cannot be run at all. */
  async start () {
    await this.channel.listen()
    this.collectListening()
    const preload = this.opts.preload ?? PRELOAD
    const nodeOptions = [process.env.NODE_OPTIONS, this.opts.nodeOptions, `--import=${preload}`].filter(Boolean).join(' ')
    const child = spawn(this.command[0], this.command.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, ...this.opts.env, NODE_OPTIONS: nodeOptions, HOTPATH_CHANNEL: this.channel.path }
    })
    this.child = child
    collectLines(/** @type {import('node:stream').Readable} */ (child.stdout), this.stdoutLines, this.opts.echo)
    collectLines(/** @type {import('node:stream').Readable} */ (child.stderr), this.stderrLines, this.opts.echo)
    child.once('exit', (code, signal) => {
      this.exitInfo = { code, signal, stoppedByUs: this.stopping }
      this.resolveExit(this.exitInfo)
    })
    /** @type {NodeJS.ErrnoException | null} */
    const failure = await new Promise((resolve) => {
      child.once('spawn', () => resolve(null))
      child.once('error', resolve)
    })
    child.on('error', () => {})
    if (failure) {
      this.channel.close()
      throw new UsageError(failure.code === 'ENOENT'
        ? `command not found: ${this.command[0]}`
        : `cannot start ${this.command[0]}: ${failure.code ?? failure.message}`)
    }
    return this
  }

  /** Keeps what the probes report listening (an attached target's probe reports the same: attach.js). */
  collectListening () {
    this.channel.on('message', (msg) => {
      if (msg.type === MESSAGE.PROBE_FAILED && msg.threadId === 0) this.probeFailed.set(msg.pid, msg.error)
      if (msg.type === MESSAGE.LISTENING) {
        const local = msg.address === '::' || msg.address === '0.0.0.0' || msg.address === ''
        this.listening.push({
          pid: msg.pid,
          port: msg.port,
          host: local ? '127.0.0.1' : msg.address,
          tls: Boolean(msg.tls),
          ...(typeof msg.http === 'boolean' ? { http: msg.http } : {})
        })
      }
    })
  }

  get pid () {
    return this.child?.pid ?? 0
  }

  /**
   * Waits until the target listens: on `port` if given, else on the first port any of its processes opens.
   * @param {{ timeout: number, port?: number }} opts timeout in seconds
   * @returns {Promise<Listening>}
   */
  async waitForListening ({ timeout, port }) {
    const deadline = Date.now() + timeout * 1000
    /** @type {number | null} when the first listener that is no HTTP server appeared */
    let otherSince = null
    while (Date.now() < deadline) {
      const found = port !== undefined ? this.listening.find(l => l.port === port) : await this.httpListener(otherSince)
      if (found) {
        const failed = this.probeFailed.get(found.pid)
        if (failed !== undefined) {
          throw new TargetError(`hotpath's probe could not start in the server (pid ${found.pid}): ${failed} — an internal error, please report it`, { exitCode: INTERNAL_ERROR, stderr: this.tail() })
        }
        return found
      }
      if (port === undefined && otherSince === null && this.listening.length > 0) otherSince = Date.now()
      const tried = port === undefined ? this.noHttpSince() : null
      if (tried !== null && Date.now() - tried >= NO_HTTP_WAIT) {
        const ports = this.ports()
        const answers = ports.length === 1 ? `: ${[...this.answers.values()][0]}` : ` (${[...this.answers.entries()].map(([p, a]) => `port ${p}: ${a}`).join('; ')})`
        throw new TargetError(`the target listens on ${ports.join(', ')}, but speaks no HTTP there${answers}; --port chooses the port to load`, { exitCode: LOAD_FAILED, stderr: this.tail() })
      }
      if (this.exitInfo) {
        throw new TargetError(`the target exited ${describeExit(this.exitInfo)} before listening`, { exitCode: 4, stderr: this.tail() })
      }
      // A server the probe cannot see (not Node, or started without NODE_OPTIONS) still counts if the port answers.
      if (port !== undefined && await portAnswers(port)) return { pid: this.pid, port, host: '127.0.0.1', tls: false }
      await Promise.race([sleep(25), this.exited])
    }
    const ports = this.ports()
    const what = port !== undefined
      ? `did not listen on port ${port}`
      : ports.length > 0 ? `listens on ${ports.join(', ')}, but spoke no HTTP there (--port chooses the port to load)` : 'did not start listening'
    throw new TargetError(`the target ${what} within ${timeout} s (raise --listen-timeout if it starts slowly)`, { exitCode: 4, stderr: this.tail() })
  }

  /**
   * The listener to load when no port was given: the first HTTP server. Other listeners (an app's internal TCP
   * service opened first) are tried by speaking HTTP to them once HTTP_GRACE has passed without an HTTP server.
   * @param {number | null} otherSince
   * @returns {Promise<Listening | undefined>}
   */
  async httpListener (otherSince) {
    const http = this.listening.find(l => l.http !== false)
    if (http) return http
    if (otherSince === null || Date.now() - otherSince < HTTP_GRACE) return undefined
    for (const l of this.listening) {
      if (!this.spoken.has(l.port)) {
        this.spoken.add(l.port)
        const answer = await speaksHttp(l.host, l.port)
        if (answer === null) return { ...l, http: true }
        this.answers.set(l.port, answer)
        this.triedAt = Date.now()
      }
    }
    return undefined
  }

  /**
   * When the last port was found to speak no HTTP, if every port the target opened has been, and none did; else null.
   * @returns {number | null}
   */
  noHttpSince () {
    if (this.listening.length === 0 || this.triedAt === null) return null
    return this.listening.every(l => this.answers.has(l.port)) ? this.triedAt : null
  }

  /** The ports the target listens on, for a message that says which it opened. */
  ports () {
    return [...new Set(this.listening.map(l => `${l.host}:${l.port}`))]
  }

  /** The last lines the target wrote, stderr first: what a user needs to see when it failed. */
  tail () {
    return this.stderrLines.length > 0 ? this.stderrLines.slice(-TAIL_LINES) : this.stdoutLines.slice(-TAIL_LINES)
  }

  /**
   * Whether the target exits by itself within `ms`. A dying process closes its sockets a moment before its exit
   * arrives (an out-of-memory abort writes its report first), so a load that finds nothing listening asks this
   * before it blames the network: the exit is the news.
   * @param {number} ms
   * @returns {Promise<ExitInfo | null>} how it exited, or null while it runs (or when we stopped it)
   */
  async exitsWithin (ms) {
    /** @type {NodeJS.Timeout | undefined} */
    let timer
    await Promise.race([this.exited, new Promise(resolve => { timer = setTimeout(resolve, ms) })])
    clearTimeout(timer)
    return this.exitInfo && !this.exitInfo.stoppedByUs ? this.exitInfo : null
  }

  /**
   * Stops the whole process group: SIGTERM, then SIGKILL after `grace` seconds.
   * @param {number} [grace]
   * @returns {Promise<ExitInfo>}
   */
  async stop (grace = 5) {
    this.stopping = true
    if (!this.exitInfo && this.child?.pid) {
      signalGroup(this.child.pid, 'SIGTERM')
      const timer = setTimeout(() => { if (this.child?.pid) signalGroup(this.child.pid, 'SIGKILL') }, grace * 1000)
      await this.exited
      clearTimeout(timer)
    }
    // The leader may exit before the rest of its group (npm's child, cluster workers): make sure none is left.
    if (this.child?.pid) signalGroup(this.child.pid, 'SIGKILL')
    this.channel.close()
    return /** @type {ExitInfo} */ (this.exitInfo)
  }
}

/**
 * @param {ExitInfo} info
 */
export function describeExit (info) {
  if (info.signal) return `on signal ${info.signal}`
  return `with code ${info.code}`
}

/**
 * @param {number} pid
 * @param {NodeJS.Signals} signal
 */
function signalGroup (pid, signal) {
  try {
    process.kill(-pid, signal)
  } catch {}
}

/**
 * @param {import('node:stream').Readable} stream
 * @param {string[]} lines
 * @param {NodeJS.WritableStream} [echo]
 */
function collectLines (stream, lines, echo) {
  let partial = ''
  stream.setEncoding('utf8')
  stream.on('data', (/** @type {string} */ chunk) => {
    echo?.write(chunk)
    const parts = (partial + chunk).split('\n')
    partial = /** @type {string} */ (parts.pop())
    lines.push(...parts)
    if (lines.length > TAIL_LINES * 4) lines.splice(0, lines.length - TAIL_LINES)
  })
  stream.on('end', () => { if (partial) lines.push(partial) })
}

/** @param {number} port */
function portAnswers (port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

/**
 * Whether a server answers an HTTP request with an HTTP response within a second.
 * @param {string} host
 * @param {number} port
 * @returns {Promise<string | null>} null when it does; else what it did instead, in words
 */
function speaksHttp (host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port })
    let got = ''
    let settled = false
    const done = (/** @type {string | null} */ answer) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(got.startsWith('HTTP/1.') ? null : answer)
    }
    const timer = setTimeout(() => done(got.length > 0 ? answered(got) : 'no answer to GET / within 1 s'), 1000)
    socket.setEncoding('latin1')
    socket.once('connect', () => socket.write(`GET / HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: close\r\n\r\n`))
    socket.on('data', (/** @type {string} */ c) => {
      got += c
      if (got.length >= 8) done(answered(got))
    })
    socket.once('error', (/** @type {NodeJS.ErrnoException} */ err) => done(got.length > 0
      ? answered(got)
      : err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'it reset the connection without answering' : `the connection failed: ${err.code ?? err.message}`))
    socket.once('close', () => done(got.length > 0 ? answered(got) : 'it closed the connection without answering'))
  })
}

/**
 * What a port that is not HTTP answered, as a person can read it: its first printable characters.
 * @param {string} bytes
 */
function answered (bytes) {
  const line = bytes.split(/\r?\n/)[0] || bytes
  const text = line.slice(0, 40).replace(/[^\x20-\x7e]/g, '·')
  return `it answered ${JSON.stringify(text)}${line.length > 40 ? '…' : ''}`
}

/** @param {number} ms */
const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))

/**
 * The URL of a path on what a target listens on (an IPv6 address in brackets).
 * @param {{ host: string, port: number, tls: boolean }} listening
 * @param {string} path
 */
export function listeningUrl (listening, path) {
  const host = listening.host.includes(':') ? `[${listening.host}]` : listening.host
  return `${listening.tls ? 'https' : 'http'}://${host}:${listening.port}${path}`
}
