// V8 profiles say which function called which, but not from which line: a node's positionTicks count only its own
// samples. When a function's time goes to what it calls, the line to show is the one that makes that call. This finds
// it by reading the function's source (from the start position V8 gives) and looking for a call of the callee's name,
// outside strings, comments and regular expressions.
import { EventEmitter } from 'node:events'
import { IncomingMessage, OutgoingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { Duplex, Readable, Writable } from 'node:stream'
import { functionSource } from './function-source.js'

/** @typedef {import('./function-source.js').FunctionSource} FunctionSource */

// Also exported here, beside callLines, which searches what it returns.
export { functionSource }

/**
 * Lines (1-based) inside the function where it calls `calleeName`, first occurrence first.
 * @param {FunctionSource} fn
 * @param {string} calleeName a V8 function name: `digest`, `Hash`, `Module._load`, `bound foo`, `get size`
 * @returns {number[]}
 */
export function callLines (fn, calleeName) {
  /** @type {number[]} */
  const lines = []
  for (const site of callSites(fn, calleeName)) {
    if (!lines.includes(site.line)) lines.push(site.line)
  }
  return lines
}

/**
 * Where inside the function it calls `calleeName`: 1-based line and 0-based column of each call, first first. The
 * column tells a call apart from others on its line — in one line of minified code, or of code a loader compiled
 * whitespace-free (tsx), a source map needs it to find the call's own line.
 * @param {FunctionSource} fn
 * @param {string} calleeName see callLines
 * @returns {{ line: number, column: number }[]}
 */
export function callSites (fn, calleeName) {
  let name = calleeName.trim()
  let getter = false
  for (const prefix of ['bound ', 'async ', 'get ', 'set ']) {
    while (name.startsWith(prefix)) {
      if (prefix === 'get ' || prefix === 'set ') getter = true
      name = name.slice(prefix.length).trim()
    }
  }
  name = name.slice(name.lastIndexOf('.') + 1)
  if (!/^[\w$]+$/.test(name)) return []
  const id = name.replace(/\$/g, '\\$')
  // `name(`, `name?.(`, `name.call(`, `name.apply(`, `new Name(`, tagged templates; a getter is a bare property read.
  const pattern = getter
    ? new RegExp(`(?<![\\w$])${id}(?![\\w$]|\\s*\\()`, 'g')
    : new RegExp(`(?<![\\w$])${id}\\s*(?:\\?\\.\\s*)?(?:\\(|\\.\\s*(?:call|apply)\\s*\\(|\`)`, 'g')
  /** @type {{ line: number, column: number }[]} */
  const sites = []
  // The function's own name at its start is a declaration, not a call.
  const bodyFrom = fn.start === 0 ? 0 : fn.code.search(/[({]/)
  let m
  while ((m = pattern.exec(fn.code)) !== null) {
    if (m.index < bodyFrom) continue
    const newlines = countNewlines(fn.code, m.index)
    const lineStart = fn.code.lastIndexOf('\n', m.index - 1) + 1
    // The function's first line starts at its start, not at the line's: columns there count from the line's start.
    const column = newlines === 0 ? fn.column + m.index : m.index - lineStart
    sites.push({ line: fn.firstLine + newlines, column })
  }
  return sites
}

/**
 * @param {string} s
 * @param {number} end
 */
function countNewlines (s, end) {
  let n = 0
  for (let i = s.indexOf('\n'); i !== -1 && i < end; i = s.indexOf('\n', i + 1)) n++
  return n
}

/**
 * Whether V8 names a function by the computed key it was defined under (`obj.<computed>`, `Model.<computed>`): a method
 * written `[key]() {}` or assigned `obj[name] = function () {}`, as ORMs define their accessors. Its name is not in the
 * code that calls it (`user.getPosts()`), so a call of it is not found by name.
 * @param {string} name
 */
export function isComputedName (name) {
  return /(?:^|\.)<computed>$/.test(name.trim())
}

/**
 * Whether the function starting at `offset` of `text` is defined under a computed key: `[key] () {`, `[key]: function`,
 * `obj[key] = function`, `obj[key] = () =>`. V8 gives a class method written `[key]() {}` no name at all.
 * @param {string} text the script
 * @param {number} offset where V8 says the function starts (its parameters for a method, `function` or `async` else)
 */
export function computedKeyAt (text, offset) {
  const before = text.slice(Math.max(0, offset - 200), offset).replace(/\s+$/, '')
  return /\]$|\]\s*(?:=|:)\s*(?:async\s+)?(?:function\b\s*\*?\s*[\w$]*)?$|\]\s*(?:=|:)\s*(?:async\s*)?$/.test(before)
}

// Methods the engine and Node.js define (`push`, `then`, `end`, `setHeader`): V8 knows them by their names, so a call of
// one of these is not the call of a function it names `<computed>`.
const RUNTIME_METHODS = runtimeMethods()

/**
 * Where a function calls a callee that V8 names `<computed>` (see isComputedName): its source calls it as a method under
 * some other name. The candidates are its method calls (`.name(`, `[key](`) whose names no function of the profile
 * (`known`) and no method of the runtime has; one line of them is the call. Between several lines, the function's own
 * samples on them decide, when they favour one; else nothing is found rather than a guess.
 * @param {FunctionSource} fn
 * @param {Set<string>} known names the profile knows functions by (the part after the last `.`)
 * @param {Map<number, number>} [ownLines] the function's own samples by 1-based line
 * @returns {{ line: number, column: number } | undefined}
 */
export function computedCallSite (fn, known, ownLines) {
  const sites = methodCallSites(fn).filter(s => s.name === null || (!known.has(s.name) && !RUNTIME_METHODS.has(s.name)))
  const lines = [...new Set(sites.map(s => s.line))]
  if (lines.length === 0) return undefined
  if (lines.length === 1) return { line: sites[0].line, column: sites[0].column }
  let best = -1
  let most = 0
  let tied = false
  for (const line of lines) {
    const v = ownLines?.get(line) ?? 0
    if (v > most) {
      best = line
      most = v
      tied = false
    } else if (v === most && v > 0) {
      tied = true
    }
  }
  const site = best === -1 || tied ? undefined : sites.find(s => s.line === best)
  return site && { line: site.line, column: site.column }
}

/**
 * The method calls a function makes: `recv.name(`, `recv?.name(`, `recv.name.call(`, `recv[key](`, with the called
 * name (null for a computed one).
 * @param {FunctionSource} fn
 * @returns {{ line: number, column: number, name: string | null }[]}
 */
function methodCallSites (fn) {
  const pattern = /(?:\?\.|\.)\s*([\w$]+)\s*(?:\?\.\s*)?(?:\(|\.\s*(?:call|apply)\s*\()|\]\s*(?:\?\.\s*)?\(/g
  /** @type {{ line: number, column: number, name: string | null }[]} */
  const sites = []
  const bodyFrom = fn.start === 0 ? 0 : fn.code.search(/[({]/)
  let m
  while ((m = pattern.exec(fn.code)) !== null) {
    if (m.index < bodyFrom) continue
    // `.5(` is no call, `...args(` neither: a name starts with a letter, `_` or `$`.
    if (m[1] !== undefined && (/^\d/.test(m[1]) || fn.code[m.index - 1] === '.')) continue
    const at = m[1] === undefined ? m.index : m.index + m[0].indexOf(m[1])
    const newlines = countNewlines(fn.code, at)
    const lineStart = fn.code.lastIndexOf('\n', at - 1) + 1
    sites.push({ line: fn.firstLine + newlines, column: newlines === 0 ? fn.column + at : at - lineStart, name: m[1] ?? null })
  }
  return sites
}

/** @returns {Set<string>} */
function runtimeMethods () {
  /** @type {Set<string>} */
  const names = new Set()
  const typed = Object.getPrototypeOf(Uint8Array.prototype)
  const objects = [
    Object, Function, Array, String, Number, Boolean, Symbol, BigInt, RegExp, Date, Promise, Map, Set, WeakMap, WeakSet,
    Error, ArrayBuffer, DataView, JSON, Math, Reflect, Atomics, console, Buffer, URL, URLSearchParams,
    typed, EventEmitter, Readable, Writable, Duplex, ServerResponse, IncomingMessage, OutgoingMessage, Socket
  ]
  for (const o of objects) {
    for (const own of [o, /** @type {any} */ (o).prototype]) {
      if (own === null || own === undefined) continue
      for (const key of Object.getOwnPropertyNames(own)) names.add(key)
    }
  }
  return names
}
