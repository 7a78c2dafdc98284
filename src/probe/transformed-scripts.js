// The code V8 ran for the scripts a loader transformed in memory — tsx, ts-node, @swc-node/register, babel's register
// hook, Node's own type stripping — copied into the run directory, so that the analysis reads the positions profiles
// and stacks give against the code they are positions in, and its source map (the inline `sourceMappingURL` such
// loaders append) maps them to the source the user wrote. The file on disk is the TypeScript, not what ran: read
// in its place, a culprit's line was the compiled code's (every line `server.ts:1` under tsx, which emits one line).
//
// V8 knows every script it compiled and its exact text: the debugger domain lists them (Debugger.enable replays one
// scriptParsed per script) and hands their source over. It runs only between loads — after the load window, before a
// heap snapshot — never on a request's path: enabled, read and disabled at once, synchronously (an in-process session
// answers on the posting thread), tens of milliseconds for the few hundred scripts of a server.
import { createHash } from 'node:crypto'
import { Session } from 'node:inspector'
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The run directory's folder for them: `scripts/<hash>.js`, one file per distinct text (cluster workers share). */
export const SCRIPTS_DIR = 'scripts'

/** A script longer than this is not copied: no loader transforms one that size on the fly. */
const MAX_CHARS = 32 * 1024 * 1024
/** Files that run as they are on disk unless something transformed them. */
const JAVASCRIPT = /\.[cm]?js$/
// hotpath's own folder: its scripts are never the user's.
const OWN = fileURLToPath(new URL('../', import.meta.url))

/**
 * @typedef {object} RecordedScript
 * @property {string} url as V8 names the script (a file:// URL for ES modules, a path for CommonJS)
 * @property {string} source the copy of the code that ran, relative to the run directory
 */

export class TransformedScripts {
  /** @type {Set<string>} scripts already looked at, by URL and hash: each is read once */
  seen = new Set()
  /** ms the last record() took */
  ms = 0

  /**
   * Copies the scripts that ran as something else than their file holds, once each. Never throws.
   * @param {string} runDir
   * @returns {RecordedScript[]} those copied by this call
   */
  record (runDir) {
    const started = performance.now()
    /** @type {RecordedScript[]} */
    const out = []
    /** @type {Session | null} */
    let session = null
    try {
      session = new Session()
      session.connect()
      /** @type {{ scriptId: string, url: string, hash: string, length?: number }[]} */
      const parsed = []
      session.on('Debugger.scriptParsed', (/** @type {any} */ m) => parsed.push(m.params))
      postSync(session, 'Debugger.enable')
      for (const p of parsed) {
        try {
          const recorded = this.one(session, p, runDir)
          if (recorded !== null) out.push(recorded)
        } catch {}
      }
      postSync(session, 'Debugger.disable')
    } catch {
    } finally {
      try { session?.disconnect() } catch {}
    }
    this.ms = performance.now() - started
    return out
  }

  /**
   * @param {Session} session
   * @param {{ scriptId: string, url: string, hash: string, length?: number }} p a scriptParsed event's params
   * @param {string} runDir
   * @returns {RecordedScript | null}
   */
  one (session, p, runDir) {
    const path = pathOf(p.url)
    if (path === null || path.startsWith(OWN)) return null
    const key = `${p.url}\0${p.hash}`
    if (this.seen.has(key)) return null
    this.seen.add(key)
    let size = -1
    try { size = statSync(path).size } catch {}
    // A JavaScript file of the same length as the script ran as it is (lengths count UTF-16 units and bytes: alike for
    // ASCII; a file with other characters is read and compared).
    if (JAVASCRIPT.test(path) && size === p.length) return null
    const result = /** @type {{ scriptSource?: string } | null} */ (postSync(session, 'Debugger.getScriptSource', { scriptId: p.scriptId }))
    const text = result?.scriptSource
    if (typeof text !== 'string' || text.length === 0 || text.length > MAX_CHARS) return null
    if (size >= 0 && size <= MAX_CHARS * 4) {
      let disk = null
      try { disk = readFileSync(path, 'utf8') } catch {}
      if (disk === text || (disk !== null && disk.charCodeAt(0) === 0xfeff && disk.slice(1) === text)) return null
    }
    const name = `${createHash('sha1').update(text).digest('hex').slice(0, 20)}.js`
    const dir = join(runDir, SCRIPTS_DIR)
    mkdirSync(dir, { recursive: true })
    try {
      // Another process of the run may have copied the same text: the first copy stands.
      writeFileSync(join(dir, name), text, { flag: 'wx' })
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'EEXIST') throw err
    }
    return { url: p.url, source: `${SCRIPTS_DIR}/${name}` }
  }
}

/**
 * The file a script URL names, or null when it names none (node: internals, wasm://, eval'd code).
 * @param {string} url
 * @returns {string | null}
 */
function pathOf (url) {
  if (url.startsWith('file://')) {
    try {
      return fileURLToPath(url)
    } catch {
      return null
    }
  }
  return url.startsWith('/') ? url : null
}

/**
 * A post answered before it returns (an in-process session answers synchronously on the posting thread), or null.
 * @param {Session} session
 * @param {string} method
 * @param {object} [params]
 * @returns {unknown}
 */
function postSync (session, method, params = {}) {
  /** @type {unknown} */
  let out = null
  session.post(method, params, (err, result) => { if (!err) out = result })
  return out
}
