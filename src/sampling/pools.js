import { EventEmitter } from 'node:events'
import { Stream } from 'node:stream'
import { appSite, captureStack, isAppFile } from './stack.js'

/** @typedef {import('./stack.js').Site} Site */

/**
 * @typedef {object} PoolSite where the app constructed an object that opens connections, and the limit it was given
 * @property {string} class its class (the most derived one)
 * @property {string[]} classes its class and the classes it extends, up to EventEmitter
 * @property {Site} site where the app constructed it
 * @property {{ key: string, value: number } | null} limit the option that caps its connections, as found on it
 */

/** Constructions remembered at most. */
const MAX_KEPT = 2000
/** Option names that cap a pool's connections, in the order they are looked for (pg's max, mysql's connectionLimit,
 * node:http's maxSockets, MongoDB's maxPoolSize, generic-pool's max…). */
const LIMIT_KEYS = ['maxSockets', 'connectionLimit', 'maxPoolSize', 'max', 'poolSize', 'maxConnections', 'connections', 'size']

/**
 * Remembers where the app constructs event emitters of its libraries' classes (connection pools among them: pg's
 * Pool, mysql2's Pool, generic-pool, MongoClient, http.Agent, undici's Pool all extend EventEmitter) while it starts,
 * so that when requests queue for the connections of one, hotpath can name the line that created it and its limit.
 * Every EventEmitter constructor calls EventEmitter.init; wrapping it costs each construction a call, so the wrapper
 * is on only until the load starts (pools are made at start-up). Streams (sockets, requests, files) are skipped.
 */
export class PoolWatcher {
  /** @type {{ ref: WeakRef<object>, classes: string[], site: Site }[]} */
  #kept = []
  /** @type {Function | null} */
  #original = null
  /** @type {Function | null} */
  #wrapped = null

  start () {
    if (this.#original !== null) return
    const ee = /** @type {any} */ (EventEmitter)
    const original = ee.init
    if (typeof original !== 'function') return
    const watcher = this
    /** @this {any} */
    function initWatched () {
      const result = Reflect.apply(original, this, arguments)
      try { watcher.#saw(this) } catch {}
      return result
    }
    this.#original = original
    this.#wrapped = initWatched
    ee.init = initWatched
  }

  /** Stops watching constructions; what was seen is kept. */
  stop () {
    const ee = /** @type {any} */ (EventEmitter)
    if (this.#wrapped !== null && ee.init === this.#wrapped) ee.init = this.#original
    this.#original = null
    this.#wrapped = null
  }

  /**
   * The most recent live construction of one of these classes (a connection's owners: see sockets.js).
   * @param {string[]} owners class names, innermost first (as a stack lists them)
   * @returns {PoolSite | null}
   */
  find (owners) {
    // The owner nearest the app comes first: a pool's connection is opened by a client the pool made, whose own
    // connection object it made in turn — the app made only the pool.
    for (let o = owners.length - 1; o >= 0; o--) {
      for (let i = this.#kept.length - 1; i >= 0; i--) {
        const k = this.#kept[i]
        if (!k.classes.includes(owners[o])) continue
        const obj = k.ref.deref()
        if (obj === undefined) continue
        return { class: k.classes[0], classes: k.classes, site: k.site, limit: limitOf(obj) }
      }
    }
    return null
  }

  /**
   * Where the app constructed the objects still alive, one line per class and place: what names the line behind a
   * package's method on a wait's stack (a session store's `get`, created by the app with its options).
   * @returns {{ classes: string[], site: Site }[]}
   */
  constructions () {
    /** @type {Map<string, { classes: string[], site: Site }>} */
    const out = new Map()
    for (const k of this.#kept) {
      if (k.ref.deref() === undefined) continue
      const key = `${k.classes.join(',')}|${k.site.file}:${k.site.line}`
      if (!out.has(key)) out.set(key, { classes: k.classes, site: k.site })
    }
    return [...out.values()]
  }

  /** @param {object} emitter */
  #saw (emitter) {
    if (emitter instanceof Stream || this.#kept.length >= MAX_KEPT) return
    const classes = classesOf(emitter)
    if (classes.length === 0) return
    const frames = captureStack(/** @type {Function} */ (this.#wrapped), 12)
    const site = appSite(frames)
    if (site === null || !isAppFile(site.file)) return
    // A class that mixes EventEmitter's methods into its prototype takes its `constructor` too (ioredis's Redis reads
    // as an EventEmitter): the constructor the app called with `new`, on the stack, names it.
    const made = constructedBy(frames)
    if (made !== null && !classes.includes(made)) classes.unshift(made)
    this.#kept.push({ ref: new WeakRef(emitter), classes, site })
  }
}

/**
 * The class the outermost `new` on a construction's stack made, below the app's frame.
 * @param {string[]} frames innermost first
 * @returns {string | null}
 */
function constructedBy (frames) {
  /** @type {string | null} */
  let made = null
  for (const frame of frames) {
    const m = /^new ([\w$.]+) \(/.exec(frame)
    if (m !== null) made = m[1]
    else if (!frame.includes('/node_modules/') && !frame.includes('node:') && /\(.*:\d+:\d+\)$|^[^(]*:\d+:\d+$/.test(frame)) break
  }
  return made
}

/**
 * The class names of an object's prototype chain, most derived first, above EventEmitter.
 * @param {object} obj
 */
function classesOf (obj) {
  const out = []
  let proto = Object.getPrototypeOf(obj)
  while (proto !== null && proto !== EventEmitter.prototype && proto !== Object.prototype && out.length < 8) {
    const name = proto.constructor?.name
    if (typeof name === 'string' && name !== '') out.push(name)
    proto = Object.getPrototypeOf(proto)
  }
  return out
}

/**
 * The option that caps an object's connections, looked for on the object and on its option objects (`options`,
 * `config`, `_config`…), one level down.
 * @param {any} obj
 * @returns {{ key: string, value: number } | null}
 */
export function limitOf (obj) {
  const places = [obj]
  try {
    for (const key of Object.keys(obj)) {
      const v = obj[key]
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && /option|config|settings|opts/i.test(key)) places.push(v)
    }
  } catch {}
  for (const name of LIMIT_KEYS) {
    for (const place of places) {
      try {
        const v = place[name]
        if (typeof v === 'number' && Number.isFinite(v) && v >= 1) return { key: name, value: v }
      } catch {}
    }
  }
  return null
}
