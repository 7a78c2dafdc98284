// What Linux's /proc says of a process hotpath does not own: whether it is alive, the inspector flags it was started
// with, the TCP sockets listening in its network namespace and which of them it holds. Read by --attach to check a
// process before touching it and to find its port, and by the run to find the backends a target's sockets reach.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs'

/** The port SIGUSR1 opens Node's inspector on when the process names none. */
export const DEFAULT_INSPECTOR_PORT = 9229

/**
 * The port SIGUSR1 opens the inspector on — 9229 unless the process was started with --inspect-port (or --inspect=)
 * naming another, on its command line or in its NODE_OPTIONS — and whether it was started with its inspector open.
 * @param {number} pid
 * @returns {{ port: number, open: boolean, host: string | null }}
 */
export function inspectorFlags (pid) {
  /** @type {string[]} */
  let argv = []
  try { argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean) } catch {}
  // Node's own options come before the script: what follows it is the app's.
  const script = argv.findIndex((w, i) => i > 0 && !w.startsWith('-') && !/^--(inspect-port|debug-port)$/.test(argv[i - 1]))
  const words = script < 0 ? argv.slice(1) : argv.slice(1, script)
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find(e => e.startsWith('NODE_OPTIONS='))
    if (env) words.push(...env.slice('NODE_OPTIONS='.length).split(/\s+/).filter(Boolean))
  } catch {}
  let port = DEFAULT_INSPECTOR_PORT
  let open = false
  /** @type {string | null} */
  let host = null
  for (let i = 0; i < words.length; i++) {
    const m = /^--(?:inspect-port|debug-port|inspect|inspect-brk|inspect-wait)(?:=(.*))?$/.exec(words[i])
    if (m === null) continue
    if (/^--inspect(-brk|-wait)?(=|$)/.test(words[i])) open = true
    const value = m[1] ?? (words[i].startsWith('--inspect-port') || words[i].startsWith('--debug-port') ? words[i + 1] : undefined)
    const n = Number(/(\d+)$/.exec(value ?? '')?.[1])
    if (Number.isInteger(n) && n > 0) port = n
    const named = /^(.+):\d+$/.exec(value ?? '')?.[1] ?? (value !== undefined && !/^\d+$/.test(value) ? value : undefined)
    if (named !== undefined) host = named
  }
  return { port, open, host }
}

/**
 * Every listening TCP socket in the process's network namespace (/proc/<pid>/net/tcp and tcp6; hotpath's own without
 * a pid).
 * @param {number | null} pid
 * @returns {{ address: string, port: number, inode: string }[]}
 */
export function listeningOn (pid) {
  const out = []
  for (const file of ['tcp', 'tcp6']) {
    let text = ''
    try { text = readFileSync(`/proc/${pid ?? 'self'}/net/${file}`, 'utf8') } catch { continue }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length < 10 || f[3] !== '0A') continue
      const [hex, portHex] = f[1].split(':')
      out.push({ address: decodeAddress(hex), port: parseInt(portHex, 16), inode: f[9] })
    }
  }
  return out
}

/**
 * /proc/net/tcp's addresses: IPv4 as one little-endian word, IPv6 as four.
 * @param {string} hex
 */
function decodeAddress (hex) {
  const words = hex.match(/.{8}/g) ?? []
  const bytes = words.flatMap(w => [6, 4, 2, 0].map(i => parseInt(w.slice(i, i + 2), 16)))
  if (bytes.length === 4) return bytes.join('.')
  if (bytes.slice(0, 15).every(b => b === 0) && bytes[15] === 1) return '::1'
  if (bytes.slice(0, 10).every(b => b === 0) && bytes[10] === 255 && bytes[11] === 255) return bytes.slice(12).join('.')
  const groups = []
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16))
  return groups.join(':')
}

/**
 * The inodes of the process's open sockets.
 * @param {number} pid
 * @returns {Set<string>}
 */
export function socketInodes (pid) {
  const inodes = new Set()
  /** @type {string[]} */
  let fds = []
  try { fds = readdirSync(`/proc/${pid}/fd`) } catch {}
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (m) inodes.add(m[1])
    } catch {}
  }
  return inodes
}

/** @param {number} pid */
export function alive (pid) {
  try {
    process.kill(pid, 0)
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM'
  }
  try {
    // A zombie (exited, not yet reaped by its parent) still takes signals.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}
