import { EventEmitter } from 'node:events'
import { captureStack, firstUserSite, fromCaller } from './stack.js'
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
 * Catches the listener that is added on every request (DESIGN.md §2): records, for each emitter kind and event whose
 * listeners on one emitter grow past the threshold, how far they grew and where the listener was added.
 *
 * It costs the process nothing per added listener while Node's own MaxListenersExceededWarning will tell: that warning
 * is raised inside the `on()` call that passes an emitter's limit (10 by default), with the emitter, the event, the
 * count and the stack of the adding call, and it reaches every 'warning' listener whatever --no-warnings or
 * --disable-warning say (those only silence the printing). Where it cannot tell, the watcher looks at additions itself:
 * - an emitter whose limit is raised past the threshold or turned off with setMaxListeners() (libraries do it to their
 *   own emitters), or whose warning's stack was cut short by `Error.stackTraceLimit`, gets a 'newListener' listener of
 *   its own: that emitter's additions are checked, no other's;
 * - when the default limit is off or above the threshold (`defaultMaxListeners = Infinity`, the post-mortem's "fix"),
 *   every emitter is concerned, and EventEmitter.prototype's add-listener methods are wrapped (`watchingEveryAddition`).
 * Not seen: an emitter whose `_maxListeners` was raised before the watcher started, or assigned directly.
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

  /** Whether every add-listener call in the process is being watched (rather than Node's warnings alone). */
  get watchingEveryAddition () { return this.#active && hook !== null }

  start () {
    if (this.#active) return
    this.#active = true
    subscribe(this)
  }

  /** Stops watching; once no watcher is left, EventEmitter.prototype and process get their own state back. */
  stop () {
    if (!this.#active) return
    this.#active = false
    unsubscribe(this)
  }

  /**
   * Re-reads whether Node's warning can still be relied on: an app may turn the default limit off at any time (the
   * probe calls this when the app starts listening; snapshot() does it too).
   */
  refresh () {
    if (this.#active) review()
  }

  /**
   * Every emitter kind and event that grew past the threshold, most listeners first.
   * @returns {ListenerGrowth[]}
   */
  snapshot () {
    this.refresh()
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
      // A warning under a higher threshold than Node's limit is kept, and reported once the emitter reaches it.
      if (g.count < this.#threshold) continue
      out.push({ emitter: g.emitter, event: eventName(g.event), count: g.count, emitters: g.emitters, site: g.site, stack: g.stack })
    }
    return out.sort((a, b) => b.count - a.count)
  }

  /**
   * Called by the add-listener hook when an emitter's listeners for one event reach `count` (>= the lowest threshold).
   * @param {EventEmitter} emitter
   * @param {string | symbol} event
   * @param {number} count
   * @param {Function} above the hook's wrapper, so the stack starts at the caller
   */
  check (emitter, event, count, above) {
    if (!isCheckpoint(count, this.#threshold)) return
    const g = this.#record(emitter, event, count)
    if (g.site === null) {
      const stack = fromCaller(captureStack(above))
      g.stack = stack
      g.site = firstUserSite(stack)
    }
  }

  /**
   * Called with Node's MaxListenersExceededWarning: `emitter` just passed its limit, in the call whose stack this is.
   * @param {EventEmitter} emitter
   * @param {string | symbol} event
   * @param {number} count
   * @param {string[]} stack
   * @param {Site | null} site
   */
  warned (emitter, event, count, stack, site) {
    const g = this.#record(emitter, event, count)
    if (g.site === null && site !== null) {
      g.stack = stack
      g.site = site
    }
  }

  /**
   * @param {EventEmitter} emitter
   * @param {string | symbol} event
   * @param {number} count
   * @returns {Growth}
   */
  #record (emitter, event, count) {
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
    return g
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

// The hooks are shared by every active watcher (the probe and the runtime may both watch): one 'warning' listener and
// one setMaxListeners wrapper always, and the add-listener wrappers only once the warning cannot be relied on.
// `once` and `prependOnceListener` add through `on` and `prependListener`, so wrapping the two primitives sees all.
const proto = EventEmitter.prototype
/** @type {Set<ListenerWatcher>} */
const watchers = new Set()
let lowest = Infinity
/** @type {{ addListener: Function, on: Function, prependListener: Function, wrappedAdd: Function, wrappedOn: Function, wrappedPrepend: Function } | null} */
let hook = null
/** @type {{ setMaxListeners: Function, wrapped: Function } | null} */
let limits = null
// Node's own add, captured before anything wraps it: the watcher's 'newListener' listeners must not count themselves.
const addListener = proto.addListener
const removeListener = proto.removeListener
/** Emitters that got a 'newListener' listener, to take it off again when the last watcher stops. */
/** @type {WeakSet<EventEmitter>} */
let watched = new WeakSet()
/** @type {WeakRef<EventEmitter>[]} */
let watchedRefs = []

/** @param {ListenerWatcher} watcher */
function subscribe (watcher) {
  watchers.add(watcher)
  lowest = Math.min(lowest, watcher.threshold)
  if (limits === null) {
    const setMaxListeners = proto.setMaxListeners
    const wrapped = wrapSetMaxListeners(setMaxListeners)
    limits = { setMaxListeners, wrapped }
    proto.setMaxListeners = /** @type {any} */ (wrapped)
  }
  review()
}

/** @param {ListenerWatcher} watcher */
function unsubscribe (watcher) {
  watchers.delete(watcher)
  lowest = Infinity
  for (const w of watchers) lowest = Math.min(lowest, w.threshold)
  if (watchers.size > 0) return
  process.removeListener('warning', onWarning)
  for (const ref of watchedRefs) {
    const emitter = ref.deref()
    if (emitter !== undefined) removeListener.call(emitter, 'newListener', onNewListener)
  }
  watched = new WeakSet()
  watchedRefs = []
  // Restore only what is still ours: if something wrapped our wrapper since, removing it would drop theirs too;
  // our wrapper then stays in place and does nothing (no watchers).
  if (limits !== null && proto.setMaxListeners === limits.wrapped) proto.setMaxListeners = /** @type {any} */ (limits.setMaxListeners)
  limits = null
  if (hook === null) return
  if (proto.addListener === hook.wrappedAdd) proto.addListener = /** @type {any} */ (hook.addListener)
  if (proto.on === hook.wrappedOn) proto.on = /** @type {any} */ (hook.on)
  if (proto.prependListener === hook.wrappedPrepend) proto.prependListener = /** @type {any} */ (hook.prependListener)
  hook = null
}

/**
 * Keeps the 'warning' listener in place (an app may remove all of them) and switches to watching every addition when
 * the default limit no longer warns by the lowest threshold.
 */
function review () {
  if (watchers.size === 0) return
  if (!process.listeners('warning').includes(onWarning)) process.on('warning', onWarning)
  if (hook === null && !warnsBy(EventEmitter.defaultMaxListeners)) watchEveryAddition()
}

/**
 * Whether an emitter with this limit warns by the time its listeners reach the lowest threshold (Node warns at one
 * past the limit; 0 turns it off).
 * @param {unknown} limit
 */
function warnsBy (limit) {
  return typeof limit === 'number' && limit > 0 && limit <= lowest
}

/**
 * @param {Function} original
 * @returns {Function}
 */
function wrapSetMaxListeners (original) {
  /**
   * An emitter that will not warn in time from now on: its additions are watched.
   * @this {EventEmitter}
   * @param {number} n
   */
  function setMaxListenersWatched (n) {
    const result = original.call(this, n)
    if (watchers.size > 0 && !warnsBy(n)) watchEmitter(this)
    return result
  }
  return setMaxListenersWatched
}

/** @param {any} warning */
function onWarning (warning) {
  try {
    if (warning === null || typeof warning !== 'object' || warning.name !== 'MaxListenersExceededWarning') return
    // EventTarget's warning (Node 20 only) names a `target`, not an `emitter`: not ours.
    const emitter = warning.emitter
    if (emitter === null || typeof emitter !== 'object' || typeof warning.count !== 'number') return
    // Node's own frames that raise the warning are dropped: the stack starts at the adding call.
    const stack = fromCaller(warningFrames(warning.stack))
    const site = firstUserSite(stack)
    for (const w of watchers) w.warned(emitter, warning.type, warning.count, stack, site)
    // A stack cut short (Error.stackTraceLimit) has no adding site: the emitter's next checkpoint will capture one.
    if (site === null) watchEmitter(emitter)
  } catch {}
}

/**
 * A warning's stack as frames.
 * @param {unknown} stack
 * @returns {string[]}
 */
function warningFrames (stack) {
  const frames = []
  for (const line of typeof stack === 'string' ? stack.split('\n') : []) {
    const t = line.trim()
    if (t.startsWith('at ')) frames.push(t.slice(3))
  }
  return frames
}

/**
 * Watches one emitter's additions through its own 'newListener' event, which Node emits inside the adding call, just
 * before the listener is added: the rest of the process pays nothing.
 * @param {EventEmitter} emitter
 */
function watchEmitter (emitter) {
  if (hook !== null || watched.has(emitter)) return
  try {
    addListener.call(emitter, 'newListener', onNewListener)
    watched.add(emitter)
    watchedRefs = watchedRefs.filter(ref => ref.deref() !== undefined)
    watchedRefs.push(new WeakRef(emitter))
  } catch {}
}

/**
 * @this {EventEmitter}
 * @param {string | symbol} type
 */
function onNewListener (type) {
  if (hook !== null || type === 'newListener') return
  // The listener is not in yet: it will make one more.
  const list = /** @type {any} */ (this)._events?.[type]
  const count = (typeof list === 'function' ? 1 : typeof list === 'object' && list !== null ? list.length : 0) + 1
  if (count >= lowest) grew(this, type, count, onNewListener)
}

/**
 * Wraps the add-listener primitives: from now on every listener added in the process is counted against the
 * threshold, whatever the emitter's limit says.
 */
function watchEveryAddition () {
  if (hook !== null) return
  const add = proto.addListener
  const on = proto.on
  const prependListener = proto.prependListener
  const wrappedAdd = wrap(add)
  // `on` and `addListener` are one function in Node; keep them one so identity checks still hold.
  const wrappedOn = on === add ? wrappedAdd : wrap(on)
  const wrappedPrepend = wrap(prependListener)
  hook = { addListener: add, on, prependListener, wrappedAdd, wrappedOn, wrappedPrepend }
  proto.addListener = /** @type {any} */ (wrappedAdd)
  proto.on = /** @type {any} */ (wrappedOn)
  proto.prependListener = /** @type {any} */ (wrappedPrepend)
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
