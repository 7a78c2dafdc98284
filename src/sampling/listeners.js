import { EventEmitter } from 'node:events'
import { captureStack, firstUserSite } from './stack.js'
import { positiveOption } from './warn.js'

/** @typedef {import('./stack.js').Site} Site */

/**
 * @typedef {object} ListenerGrowth
 * @property {string} emitter constructor name of the emitters
 * @property {string} event
 * @property {number} count most listeners seen on one emitter for this event
 * @property {number} emitters how many emitters of that kind reached the threshold
 * @property {Site | null} site where the listener was added: the first frame outside Node and hotpath
 * @property {string[]} stack the frames at that moment
 */

/**
 * Catches the listener that is added on every request (DESIGN.md §2): watches every EventEmitter's add-listener calls
 * and records, when one emitter's listeners for one event reach the threshold and at each doubling after, where the
 * listener was added. It works whatever setMaxListeners or `defaultMaxListeners = Infinity` say, since those only
 * decide whether Node warns.
 *
 * Cost: one length check per added listener; a stack is captured only at the threshold and its doublings.
 */
export class ListenerWatcher {
  #threshold
  /** @type {Map<string, Growth>} */
  #growth = new Map()
  #active = false

  /** @param {{ threshold?: number }} [opts] listeners on one emitter for one event that count as growth (default 10) */
  constructor (opts = {}) {
    const o = opts !== null && typeof opts === 'object' ? opts : {}
    this.#threshold = Math.max(2, Math.round(positiveOption(o.threshold, 10, 'ListenerWatcher threshold')))
  }

  get threshold () { return this.#threshold }

  start () {
    if (this.#active) return
    this.#active = true
    subscribe(this)
  }

  /** Stops watching; once no watcher is left, EventEmitter.prototype gets its original methods back. */
  stop () {
    if (!this.#active) return
    this.#active = false
    unsubscribe(this)
  }

  /**
   * Every emitter kind and event that grew past the threshold, most listeners first.
   * @returns {ListenerGrowth[]}
   */
  snapshot () {
    /** @type {ListenerGrowth[]} */
    const out = []
    for (const g of this.#growth.values()) {
      // Emitters still alive may have grown since the last checkpoint.
      for (const ref of g.refs) {
        const emitter = ref.deref()
        if (emitter === undefined) continue
        try {
          const n = emitter.listenerCount(g.event)
          if (n > g.count) g.count = n
        } catch {}
      }
      g.refs = g.refs.filter(ref => ref.deref() !== undefined)
      out.push({ emitter: g.emitter, event: eventName(g.event), count: g.count, emitters: g.emitters, site: g.site, stack: g.stack })
    }
    return out.sort((a, b) => b.count - a.count)
  }

  /**
   * Called by the shared hook when an emitter's listeners for one event reach `count` (>= the lowest threshold).
   * @param {EventEmitter} emitter
   * @param {string | symbol} event
   * @param {number} count
   * @param {Function} above the hook's wrapper, so the stack starts at the caller
   */
  check (emitter, event, count, above) {
    if (!isCheckpoint(count, this.#threshold)) return
    const kind = constructorName(emitter)
    const key = kind + '\0' + (typeof event === 'symbol' ? event.toString() : event)
    let g = this.#growth.get(key)
    if (g === undefined) {
      g = { emitter: kind, event, count, emitters: 0, seen: new WeakSet(), refs: [], site: null, stack: [] }
      this.#growth.set(key, g)
    }
    if (count > g.count) g.count = count
    if (!g.seen.has(emitter)) {
      g.seen.add(emitter)
      g.emitters++
      if (g.refs.length < MAX_REFS) g.refs.push(new WeakRef(emitter))
    }
    if (g.site === null) {
      const stack = captureStack(above)
      g.stack = stack
      g.site = firstUserSite(stack)
    }
  }
}

/**
 * @typedef {object} Growth
 * @property {string} emitter
 * @property {string | symbol} event
 * @property {number} count
 * @property {number} emitters
 * @property {WeakSet<EventEmitter>} seen
 * @property {WeakRef<EventEmitter>[]} refs a few of the emitters, to re-read their counts at snapshot time
 * @property {Site | null} site
 * @property {string[]} stack
 */

const MAX_REFS = 16

/**
 * The threshold and each doubling after it: 10, 20, 40, 80…
 * @param {number} count
 * @param {number} threshold
 */
function isCheckpoint (count, threshold) {
  if (count < threshold || count % threshold !== 0) return false
  const q = count / threshold
  return (q & (q - 1)) === 0
}

/** @param {string | symbol} event */
function eventName (event) {
  return typeof event === 'symbol' ? event.toString() : String(event)
}

/** @param {object} emitter */
function constructorName (emitter) {
  try {
    const name = emitter.constructor?.name
    return typeof name === 'string' && name !== '' ? name : 'Object'
  } catch {
    return 'Object'
  }
}

// One hook on EventEmitter.prototype, shared by every active watcher (the probe and the runtime may both watch).
// `once` and `prependOnceListener` add through `on` and `prependListener`, so wrapping the two primitives sees all.
const proto = EventEmitter.prototype
/** @type {Set<ListenerWatcher>} */
const watchers = new Set()
let lowest = Infinity
/** @type {{ addListener: Function, on: Function, prependListener: Function, wrappedAdd: Function, wrappedOn: Function, wrappedPrepend: Function } | null} */
let hook = null

/** @param {ListenerWatcher} watcher */
function subscribe (watcher) {
  watchers.add(watcher)
  lowest = Math.min(lowest, watcher.threshold)
  if (hook !== null) return
  const addListener = proto.addListener
  const on = proto.on
  const prependListener = proto.prependListener
  const wrappedAdd = wrap(addListener)
  // `on` and `addListener` are one function in Node; keep them one so identity checks still hold.
  const wrappedOn = on === addListener ? wrappedAdd : wrap(on)
  const wrappedPrepend = wrap(prependListener)
  hook = { addListener, on, prependListener, wrappedAdd, wrappedOn, wrappedPrepend }
  proto.addListener = /** @type {any} */ (wrappedAdd)
  proto.on = /** @type {any} */ (wrappedOn)
  proto.prependListener = /** @type {any} */ (wrappedPrepend)
}

/** @param {ListenerWatcher} watcher */
function unsubscribe (watcher) {
  watchers.delete(watcher)
  lowest = Infinity
  for (const w of watchers) lowest = Math.min(lowest, w.threshold)
  if (watchers.size > 0 || hook === null) return
  // Restore only what is still ours: if something wrapped our wrapper since, removing it would drop theirs too;
  // our wrapper then stays in place and does nothing (no watchers).
  if (proto.addListener === hook.wrappedAdd) proto.addListener = /** @type {any} */ (hook.addListener)
  if (proto.on === hook.wrappedOn) proto.on = /** @type {any} */ (hook.on)
  if (proto.prependListener === hook.wrappedPrepend) proto.prependListener = /** @type {any} */ (hook.prependListener)
  hook = null
}

/**
 * @param {Function} original
 * @returns {Function}
 */
function wrap (original) {
  /**
   * Runs on every listener added in the process (node:http adds three a request) and V8 inlines it into Node's own
   * hot functions, where its size counts against their inlining budget: so the common path is one property read and
   * one comparison (90 bytes of bytecode; 269 with the checks inline), and the rare path is a call.
   * @this {EventEmitter}
   * @param {string | symbol} type
   * @param {Function} listener
   */
  function addListenerWatched (type, listener) {
    const result = original.call(this, type, listener)
    // Node keeps one listener as the function itself and several as an array: only arrays can be long. `lowest` is
    // Infinity while no watcher runs.
    const list = /** @type {any} */ (this)._events?.[type]
    if (typeof list === 'object' && list !== null && list.length >= lowest) grew(this, type, list.length, addListenerWatched)
    return result
  }
  return addListenerWatched
}

/**
 * The rare path: one emitter's listeners for one event reached the lowest threshold.
 * @param {EventEmitter} emitter
 * @param {string | symbol} type
 * @param {number} count
 * @param {Function} above
 */
function grew (emitter, type, count, above) {
  try {
    for (const w of watchers) w.check(emitter, type, count, above)
  } catch {}
}
