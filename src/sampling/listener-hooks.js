// The process-wide hooks the listener watchers (listeners.js) share: Node's MaxListenersExceededWarning, the
// setMaxListeners wrapper and, when the warning cannot be relied on, wrappers of EventEmitter.prototype's add-listener
// methods; each reports an emitter's growth to every active watcher.

import { EventEmitter } from 'node:events'
import { firstUserSite, fromCaller, stackText } from './stack.js'

/** @typedef {import('./listeners.js').ListenerWatcher} ListenerWatcher */

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
export function subscribe (watcher) {
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
export function unsubscribe (watcher) {
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
export function review () {
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
    const stack = fromCaller(warningFrames(stackText(warning)))
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

/** @returns {boolean} whether the add-listener methods of EventEmitter.prototype are wrapped now */
export function everyAdditionHooked () {
  return hook !== null
}
