// Which environment variables the app reads, and where. process.env is replaced by a Proxy over the real one whose
// `get` notes the first read of each name by code outside Node and hotpath, with that code's file and line: doctor
// compares the values read with the limits it finds (an agent's maxSockets equal to a variable's value) and, for a
// variable read unset, sets it on a restart and watches whether the limit follows (src/experiments/limit-variable.js).
// Everything else reaches the real object as before: `in`, Object.keys, assignment (which it turns into a string),
// delete, JSON.stringify, the environment a child process or worker inherits.
import { captureStack, parseFrame, isInternal } from './stack.js'

/** @typedef {import('./stack.js').Site} Site */

/**
 * The first read of one variable by the app (or a package it uses).
 * @typedef {object} EnvRead
 * @property {string} name
 * @property {boolean} set whether it had a value then
 * @property {string | null} value that value when it is a whole number of up to nine digits (a limit, a size, a
 *   port); any other value is not kept — it may be a token or a password
 * @property {Site | null} site the code that read it (null when the stack could not be read)
 * @property {number} time epoch ms
 */

/** Names noted at most: an app reads tens. */
const MAX_NAMES = 500
/** Node's own reads of one name looked at before it is no longer looked at (a TLS option read on every connection). */
const MAX_INTERNAL = 32
/** Names read from any object that are no variables: JSON.stringify looks for toJSON, await for then. */
const NOT_VARIABLES = new Set([...Object.getOwnPropertyNames(Object.prototype), 'toJSON', 'then'])
const WHOLE = /^\s*\d{1,9}\s*$/

export class EnvWatcher {
  /** @type {NodeJS.ProcessEnv | null} the real object */
  #original = null
  /** @type {NodeJS.ProcessEnv | null} */
  #proxy = null
  #active = false
  /** names noted, or no longer looked at: the one lookup a read costs after the first */
  #done = new Set()
  /** @type {Map<string, number>} Node's own reads so far, by name */
  #internal = new Map()
  /** @type {EnvRead[]} noted since the last take() */
  #fresh = []
  /**
   * The names an enumeration just listed (a spread, Object.entries, JSON.stringify, a for-in): their reads in that
   * order, in the same turn, copy the environment rather than read one variable each.
   * @type {string[] | null}
   */
  #listed = null
  #next = 0
  /** a read made while noting one (an Error.prepareStackTrace of the app's that reads the environment) */
  #busy = false

  start () {
    if (this.#active) return
    const env = process.env
    if (env === null || typeof env !== 'object') return
    if (this.#proxy === null || this.#original !== env) {
      this.#original = env
      this.#proxy = new Proxy(env, this.#handler())
    }
    try {
      process.env = this.#proxy
      this.#active = true
    } catch {}
  }

  /** Puts the real object back, unless the app has since put one of its own there; a kept reference reads through. */
  stop () {
    this.#active = false
    this.#listed = null
    try {
      if (this.#proxy !== null && process.env === this.#proxy) process.env = /** @type {NodeJS.ProcessEnv} */ (this.#original)
    } catch {}
  }

  /** The reads noted since the last call. */
  take () {
    const out = this.#fresh
    this.#fresh = []
    return out
  }

  /** @returns {ProxyHandler<NodeJS.ProcessEnv>} */
  #handler () {
    const watcher = this
    return {
      get: function envRead (target, key) {
        const value = /** @type {any} */ (target)[key]
        if (watcher.#active && typeof key === 'string') watcher.#saw(key, value, envRead)
        return value
      },
      // Assignment straight to the real object: it stores strings through its own interceptor, which the default
      // (a define on the proxy as the receiver) would not reach the same way.
      set (target, key, value) {
        /** @type {any} */ (target)[key] = value
        return true
      },
      ownKeys (target) {
        const keys = Reflect.ownKeys(target)
        if (watcher.#active) watcher.#enumerated(keys)
        return keys
      }
    }
  }

  /**
   * @param {string} name
   * @param {unknown} value
   * @param {Function} trap the frame above the reader's
   */
  #saw (name, value, trap) {
    if (this.#listed !== null) {
      if (this.#listed[this.#next] === name) {
        if (++this.#next >= this.#listed.length) this.#listed = null
        return
      }
      this.#listed = null
    }
    if (this.#done.has(name) || this.#busy) return
    this.#busy = true
    try {
      this.#note(name, value, trap)
    } catch {
    } finally {
      this.#busy = false
    }
  }

  /**
   * @param {string} name
   * @param {unknown} value
   * @param {Function} trap
   */
  #note (name, value, trap) {
    // Object.prototype's methods are found on the environment too: those are no variables.
    if ((value !== undefined && typeof value !== 'string') || NOT_VARIABLES.has(name)) {
      this.#done.add(name)
      return
    }
    const frames = captureStack(trap, 1)
    const site = frames.length > 0 ? parseFrame(frames[0]) : null
    // Node reading its own settings (NODE_DEBUG, a TLS option) is no choice of the app's, nor is hotpath reading its.
    if (site !== null && isInternal(site.file)) {
      const n = (this.#internal.get(name) ?? 0) + 1
      this.#internal.set(name, n)
      if (n >= MAX_INTERNAL) this.#done.add(name)
      return
    }
    this.#done.add(name)
    if (this.#done.size > MAX_NAMES) return
    const text = typeof value === 'string' ? value : null
    this.#fresh.push({ name, set: text !== null, value: text !== null && WHOLE.test(text) ? text.trim() : null, site, time: Date.now() })
  }

  /** @param {(string | symbol)[]} keys */
  #enumerated (keys) {
    this.#listed = /** @type {string[]} */ (keys.filter(k => typeof k === 'string'))
    this.#next = 0
    if (this.#listed.length === 0) {
      this.#listed = null
      return
    }
    // A read after this turn is a read of its own, whatever its name.
    const listed = this.#listed
    queueMicrotask(() => { if (this.#listed === listed) this.#listed = null })
  }
}
