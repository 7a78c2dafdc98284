// What the app replaced of the runtime: Error.prepareStackTrace (a formatter that runs on every stack read), the
// CommonJS loader's hooks (a require hook per file extension, the loader's own functions) and built-ins replaced by
// userland code (polyfills), with where each replacement is defined and which modules loaded it. The analysis charges
// the time the profile spends in them to the package that installed them (src/analysis/signals-avoidable.js).
//
// Recorded at the load's start, before the window opens: nothing there is timed. Comparing each function with what the
// probe found when it loaded, and asking `Function.prototype.toString` whether a built-in is still native, costs a few
// microseconds; only when something was replaced does the probe ask V8 where its function is defined — the inspector's
// [[FunctionLocation]], whose script needs the debugger domain on for an instant (tens of milliseconds, as for the
// copies of transformed scripts). A preload given with -r runs before this probe: what it replaced is found by where
// its function is defined, not by comparison.
import { createRequire } from 'node:module'
import { Session } from 'node:inspector'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
/** @type {any} */
const Module = require('node:module')
const nativeToString = Function.prototype.toString
const OWN = fileURLToPath(new URL('../', import.meta.url))

/** The loader's functions a require hook replaces (pirates, ts-node, source-map-support, APM agents). */
const LOADER = /** @type {const} */ (['_load', '_resolveFilename'])
const LOADER_PROTO = /** @type {const} */ (['require', '_compile'])

/**
 * ECMAScript built-ins V8 implements natively, which polyfills replace: the constructors, and the methods polyfill
 * libraries patch one by one.
 */
const BUILT_INS = {
  globals: ['Promise', 'Date', 'Map', 'Set', 'WeakMap', 'WeakSet', 'Symbol', 'Proxy', 'RegExp', 'Array', 'Object', 'Number', 'String', 'ArrayBuffer', 'Uint8Array', 'DataView'],
  statics: {
    Promise: ['all', 'allSettled', 'any', 'race', 'resolve', 'reject'],
    Date: ['now', 'parse', 'UTC'],
    Object: ['assign', 'keys', 'values', 'entries', 'fromEntries', 'create', 'defineProperty', 'freeze', 'getOwnPropertyNames'],
    Array: ['from', 'isArray', 'of'],
    Number: ['isInteger', 'isNaN', 'isFinite', 'parseFloat', 'parseInt'],
    JSON: ['parse', 'stringify'],
    Math: ['trunc', 'sign', 'max', 'min', 'round', 'floor'],
    Symbol: ['for']
  },
  prototypes: {
    Promise: ['then', 'catch', 'finally'],
    Date: ['toISOString', 'toJSON', 'getTime', 'toString'],
    Array: ['map', 'filter', 'forEach', 'reduce', 'find', 'findIndex', 'includes', 'indexOf', 'flat', 'flatMap', 'some', 'every', 'fill', 'at', 'sort', 'join', 'push', 'slice', 'splice', 'concat'],
    String: ['padStart', 'padEnd', 'includes', 'startsWith', 'endsWith', 'repeat', 'trim', 'trimStart', 'trimEnd', 'replaceAll', 'at', 'split', 'replace', 'match', 'matchAll'],
    Map: ['get', 'set', 'has', 'delete', 'forEach'],
    Set: ['add', 'has', 'delete', 'forEach'],
    RegExp: ['exec', 'test'],
    Function: ['bind', 'call', 'apply', 'toString'],
    Object: ['hasOwnProperty', 'toString']
  }
}

/**
 * @typedef {object} RuntimeHook
 * @property {'prepareStackTrace' | 'require-extension' | 'loader' | 'polyfill'} kind
 * @property {string} name what was replaced: `Error.prepareStackTrace`, `Module._extensions['.js']`,
 *   `Module.prototype._compile`, `Promise`, `Array.prototype.includes`
 * @property {string} function the replacement's name
 * @property {string | null} file where the replacement is defined (a path, or a URL for what is not a file)
 * @property {number} line 1-based, 0 when unknown
 * @property {number} column 1-based, 0 when unknown
 * @property {string[]} loadedBy the modules that loaded that file, nearest first, up to the app's (CommonJS only: the
 *   require graph; empty when unknown)
 */

/**
 * @typedef {object} RuntimeState
 * @property {RuntimeHook[]} hooks
 * @property {number} stackTraceLimit Error.stackTraceLimit as the load began
 */

export class RuntimeHooks {
  constructor () {
    // What the runtime had when the probe loaded, before the app's code ran (unless a -r preload ran first).
    this.initial = this.current()
    this.preloaded = hasRequirePreload()
  }

  /** @returns {Map<string, Function>} */
  current () {
    /** @type {Map<string, Function>} */
    const out = new Map()
    try {
      const prepare = Error.prepareStackTrace
      if (typeof prepare === 'function') out.set('Error.prepareStackTrace', prepare)
      for (const [ext, fn] of Object.entries(Module._extensions ?? {})) {
        if (typeof fn === 'function') out.set(`Module._extensions['${ext}']`, fn)
      }
      for (const name of LOADER) if (typeof Module[name] === 'function') out.set(`Module.${name}`, Module[name])
      for (const name of LOADER_PROTO) if (typeof Module.prototype?.[name] === 'function') out.set(`Module.prototype.${name}`, Module.prototype[name])
    } catch {}
    return out
  }

  /**
   * What is replaced now. Never throws.
   * @returns {RuntimeState}
   */
  record () {
    /** @type {{ kind: RuntimeHook['kind'], name: string, fn: Function }[]} */
    const found = []
    let stackTraceLimit = 10
    try {
      stackTraceLimit = Number(Error.stackTraceLimit)
      for (const [name, fn] of this.current()) {
        // A -r preload ran before the probe: its replacements are found by where they are defined.
        if (this.initial.get(name) === fn && !this.preloaded) continue
        found.push({ kind: name === 'Error.prepareStackTrace' ? 'prepareStackTrace' : name.startsWith('Module._extensions') ? 'require-extension' : 'loader', name, fn })
      }
      for (const [name, fn] of builtIns()) {
        if (!isNative(fn)) found.push({ kind: 'polyfill', name, fn })
      }
    } catch {}
    if (found.length === 0) return { hooks: [], stackTraceLimit }
    const places = locate(found.map(f => f.fn))
    const parents = found.some((_, i) => places[i]?.file) ? requireParents() : new Map()
    /** @type {RuntimeHook[]} */
    const hooks = []
    found.forEach((f, i) => {
      const at = places[i]
      const file = at?.file ?? null
      // Node's own functions (a -r preload's comparison finds them all) and hotpath's own are not the app's doing.
      if (file !== null && (file.startsWith('node:') || file.startsWith(OWN))) return
      if (file === null && f.kind !== 'polyfill') return
      hooks.push({ kind: f.kind, name: f.name, function: functionName(f.fn), file, line: at?.line ?? 0, column: at?.column ?? 0, loadedBy: file ? loadedBy(file, parents) : [] })
    })
    return { hooks, stackTraceLimit }
  }
}

/**
 * @param {Function} fn
 */
function functionName (fn) {
  try {
    return typeof fn.name === 'string' && fn.name !== '' ? fn.name : '(anonymous)'
  } catch {
    return '(anonymous)'
  }
}

/**
 * Whether the process was started with a CommonJS preload (-r, --require), which runs before this probe.
 */
function hasRequirePreload () {
  const words = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
  return words.some(w => w === '-r' || w === '--require' || w.startsWith('--require='))
}

/**
 * The built-ins of BUILT_INS as they are now, by name.
 * @returns {[string, Function][]}
 */
function builtIns () {
  /** @type {[string, Function][]} */
  const out = []
  const g = /** @type {Record<string, any>} */ (globalThis)
  for (const name of BUILT_INS.globals) if (typeof g[name] === 'function') out.push([name, g[name]])
  for (const [owner, names] of Object.entries(BUILT_INS.statics)) {
    const o = g[owner]
    if (o === null || o === undefined) continue
    for (const name of names) {
      const d = Object.getOwnPropertyDescriptor(o, name)
      if (d && typeof d.value === 'function') out.push([`${owner}.${name}`, d.value])
    }
  }
  for (const [owner, names] of Object.entries(BUILT_INS.prototypes)) {
    const proto = g[owner]?.prototype
    if (proto === null || proto === undefined) continue
    for (const name of names) {
      const d = Object.getOwnPropertyDescriptor(proto, name)
      if (d && typeof d.value === 'function') out.push([`${owner}.prototype.${name}`, d.value])
    }
  }
  return out
}

/**
 * Whether V8 implements the function: its text, by the toString the probe found when it loaded (core-js replaces
 * `Function.prototype.toString` to make its polyfills read native).
 * @param {Function} fn
 */
function isNative (fn) {
  try {
    return /\{\s*\[native code\]\s*\}\s*$/.test(nativeToString.call(fn))
  } catch {
    return true
  }
}

/**
 * Where each function is defined: V8's [[FunctionLocation]] and the script it names. Never throws; null for a
 * function it cannot place (a native one).
 * @param {Function[]} fns
 * @returns {({ file: string, line: number, column: number } | null)[]}
 */
function locate (fns) {
  /** @type {({ file: string, line: number, column: number } | null)[]} */
  const out = fns.map(() => null)
  const key = Symbol.for('hotpath.locate')
  const g = /** @type {any} */ (globalThis)
  /** @type {Session | null} */
  let session = null
  try {
    session = new Session()
    session.connect()
    /** @type {Map<string, string>} */
    const scripts = new Map()
    session.on('Debugger.scriptParsed', (/** @type {any} */ m) => scripts.set(String(m.params.scriptId), String(m.params.url)))
    postSync(session, 'Debugger.enable')
    g[key] = fns
    const list = /** @type {any} */ (postSync(session, 'Runtime.evaluate', { expression: 'globalThis[Symbol.for("hotpath.locate")]', objectGroup: 'hotpath' }))
    const items = /** @type {any} */ (postSync(session, 'Runtime.getProperties', { objectId: list?.result?.objectId, ownProperties: true }))
    for (const item of items?.result ?? []) {
      const i = Number(item.name)
      if (!Number.isInteger(i) || i < 0 || i >= fns.length || !item.value?.objectId) continue
      const props = /** @type {any} */ (postSync(session, 'Runtime.getProperties', { objectId: item.value.objectId, ownProperties: true }))
      const at = props?.internalProperties?.find((/** @type {any} */ p) => p.name === '[[FunctionLocation]]')?.value?.value
      const url = at ? scripts.get(String(at.scriptId)) : undefined
      if (at && url) out[i] = { file: fileOf(url), line: Number(at.lineNumber) + 1, column: Number(at.columnNumber) + 1 }
    }
    postSync(session, 'Runtime.releaseObjectGroup', { objectGroup: 'hotpath' })
    postSync(session, 'Debugger.disable')
  } catch {
  } finally {
    try { delete g[key] } catch {}
    try { session?.disconnect() } catch {}
  }
  return out
}

/**
 * @param {string} url a script's URL as V8 names it
 */
function fileOf (url) {
  if (!url.startsWith('file://')) return url
  try {
    return fileURLToPath(url)
  } catch {
    return url
  }
}

/**
 * Each loaded CommonJS module's parents (the modules whose children it is), in the order they loaded: the first is
 * the one that loaded it, as a rule. Walked from the cache through `children`, not read from the cache alone: a
 * package may load its own modules into a private cache (@babel/register does), and those are still some module's
 * children. (`module.parent` would say it directly, but is deprecated, and warns under --pending-deprecation.)
 * @returns {Map<string, string[]>}
 */
function requireParents () {
  /** @type {Map<string, string[]>} */
  const parents = new Map()
  try {
    /** @type {Set<any>} */
    const seen = new Set()
    const stack = Object.values(Module._cache ?? {}).reverse()
    while (stack.length > 0 && seen.size < 100000) {
      const m = stack.pop()
      if (m === null || typeof m !== 'object' || seen.has(m)) continue
      seen.add(m)
      const children = Array.isArray(m.children) ? m.children : []
      for (const child of children) {
        if (typeof child?.filename !== 'string') continue
        const list = parents.get(child.filename) ?? []
        if (!list.includes(m.filename)) list.push(m.filename)
        parents.set(child.filename, list)
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i])
    }
  } catch {}
  return parents
}

/**
 * The modules that loaded a file, nearest first, up to the first one outside node_modules (the app's).
 * @param {string} file
 * @param {Map<string, string[]>} parents
 * @returns {string[]}
 */
function loadedBy (file, parents) {
  /** @type {string[]} */
  const chain = []
  let at = file
  for (let i = 0; i < 16; i++) {
    const next = (parents.get(at) ?? []).find(p => p !== file && !chain.includes(p))
    if (next === undefined) break
    chain.push(next)
    if (!/[\\/]node_modules[\\/]/.test(next)) break
    at = next
  }
  return chain
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
