import { captureStack, firstUserSite, fromCaller } from './stack.js'
import { positiveOption } from './warn.js'
import { everyAdditionHooked, review, subscribe, unsubscribe } from './listener-hooks.js'

/** @typedef {import('node:events').EventEmitter} EventEmitter */
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
 * Catches the listener that is added on every request (the post-mortem behind examples/listener-leak): records, for each emitter kind and event whose
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
 * The hooks themselves, shared by every watcher: listener-hooks.js.
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
  get watchingEveryAddition () { return this.#active && everyAdditionHooked() }

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
