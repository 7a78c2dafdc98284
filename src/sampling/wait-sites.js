// Where in the app a wait began: the stack taken as it began (unformatted until the wait is kept), and the app's frame
// on it, past the frames of Node, of node_modules and of the client class that opened the socket.

import { isAppFile, isInternal, parseFrame, stackText } from './stack.js'
import { CLIENT, DEFERRALS } from './wait-spans.js'
import { packageName } from '../package-name.js'

/** @typedef {import('./wait-spans.js').Span} Span */
/** @typedef {import('./wait-tracer.js').WaitSite} WaitSite */

/** Frames kept per stack: deep enough to climb out of a driver's or ORM's frames to the app's call. */
const STACK_FRAMES = 40
/** Packages kept of a wait's way through its stack. */
const MAX_PACKAGES = 8

/** @typedef {import('./wait-tracer.js').PackageFrame} PackageFrame */

/**
 * The frames where a wait begins, captured but not formatted: V8 formats `stack` when it is first read, which the
 * tracer does only for the waits it keeps.
 * @param {Function} above
 * @returns {{ stack?: string }}
 */
export function rawStack (above) {
  /** @type {{ stack?: string }} */
  const holder = {}
  const saved = Error.stackTraceLimit
  Error.stackTraceLimit = STACK_FRAMES
  try {
    Error.captureStackTrace(holder, above)
  } finally {
    Error.stackTraceLimit = saved
  }
  return holder
}

/**
 * Who made a write, by the frames of its stack: 'app' when a frame of the app is on it (its call, made in that turn);
 * else the one package whose frames it holds (a client writing from a callback it scheduled itself), or null when
 * several packages' are (a middleware calling its store). A stack that cannot be read is taken as the app's.
 * @param {{ stack?: string }} holder
 * @returns {string | null}
 */
export function writerOf (holder) {
  const text = stackText(holder)
  if (text === '') return 'app'
  /** @type {string | null} */
  let writer = null
  for (const line of text.split('\n')) {
    const t = line.trim()
    if (!t.startsWith('at ')) continue
    const s = parseFrame(t.slice(3))
    if (s === null || isInternal(s.file)) continue
    const name = packageName(s.file)
    if (name === null) return 'app'
    if (writer === null) writer = name
    else if (writer !== name) return null
  }
  return writer
}

/**
 * Where a span began in the app: its own stack's first app frame, else its parent's (a driver's callback or a nextTick
 * continues what the app started there).
 * @param {Span} span
 * @returns {WaitSite | null}
 */
export function siteOf (span) {
  if (span.site !== undefined) return span.site
  // A wait a client socket's round trip ended may begin in the client's code: the methods of the class that opened
  // the connection (and what they run) are not where the request waits, even when the app wrote that class.
  const owners = span.trips?.[0]?.owners ?? []
  const text = span.stack !== null ? stackText(span.stack) : ''
  let site = text !== '' ? siteFromStack(text, owners) : null
  span.appFrame = site !== null
  if (site === null && span.parent !== null && span.parent !== span) site = siteOf(span.parent)
  // No frame of the app on its stack nor on those of the waits it began in: the packages it went through say where.
  if (site === null && text !== '') site = packageSite(text)
  span.site = site
  return site
}

/**
 * Whether a promise is a client's work for a batch rather than a wait of the request: made, with no frame of the app on
 * its stack nor on those of the spans (the promises, the nextTicks) it began in, by a deferral that wrote a client's
 * batch (see CLIENT) — ioredis's pipeline promise, made in the setImmediate the first request to ask scheduled, and
 * what the pipeline's callback does for each request it answered. Its site would be that request's call, and it
 * settles with the batch's reply: it made the request's wait read as begun at the client's call.
 * @param {Span} span
 */
export function isClientWork (span) {
  if (span.kind !== 'PROMISE') return false
  for (let s = /** @type {Span | null} */ (span); s !== null; s = s.parent) {
    if (DEFERRALS.has(s.kind) && /** @type {any} */ (s.resource)?.[CLIENT] !== undefined) return true
    if (s.stack === null) return false
    siteOf(s)
    if (s.appFrame === true) return false
  }
  return false
}

/**
 * Where a wait with no frame of the app began, in the packages its stack went through, outermost first: the request's
 * dispatcher (the package node:http called: a framework) called others (its router, a middleware) down to the one
 * that made the call. The site is the outermost package's entry; the analysis tells the dispatcher from the rest.
 * @param {string} text an Error's stack
 * @returns {WaitSite | null}
 */
export function packageSite (text) {
  /** @type {(import('./stack.js').Site | null)[]} */
  const sites = []
  for (const line of text.split('\n')) {
    const t = line.trim()
    if (t.startsWith('at ')) sites.push(parseFrame(t.slice(3)))
  }
  const chain = packageChain(sites)
  if (chain.length === 0) return null
  const first = chain[0]
  return {
    function: first.function,
    file: first.file,
    line: first.line,
    column: 0,
    api: chain.length > 1 ? chain[1].function : null,
    apiFile: chain.length > 1 ? chain[1].file : null,
    callers: [],
    packages: chain
  }
}

/**
 * @param {string} text an Error's stack
 * @param {string[]} [owners] classes whose methods are a client's own code (skipped)
 * @returns {WaitSite | null}
 */
export function siteFromStack (text, owners = []) {
  const frames = []
  for (const line of text.split('\n')) {
    const t = line.trim()
    if (t.startsWith('at ')) frames.push(t.slice(3))
  }
  const sites = frames.map(parseFrame)
  const isApp = (/** @type {import('./stack.js').Site | null} */ s) => s !== null && isAppFile(s.file)
  const isOwner = (/** @type {import('./stack.js').Site | null} */ s) => s !== null && owners.some(o => s.function.replace(/^(async|new)\s+/, '').startsWith(`${o}.`))
  // Past the client's own code: its methods, and what they run below them (a promise executor, a callback).
  let from = 0
  const first = sites.findIndex(isOwner)
  if (first !== -1) {
    from = first + 1
    while (from < sites.length && (isOwner(sites[from]) || !isApp(sites[from]))) from++
  }
  const i = sites.findIndex((s, j) => j >= from && isApp(s) && !isOwner(s))
  if (i === -1) return null
  const own = /** @type {import('./stack.js').Site} */ (sites[i])
  // The call the app made there: the frame below its own, past the async_hooks machinery that reported the wait.
  let below = null
  for (let j = i - 1; j >= 0; j--) {
    const s = sites[j]
    if (s !== null && !s.file.startsWith('node:internal/async_hooks')) {
      below = s
      break
    }
  }
  const callers = []
  for (const s of sites.slice(i + 1)) {
    if (callers.length >= 3) break
    if (isApp(s) && s !== null) callers.push({ function: s.function.replace(/^async\s+/, ''), file: s.file, line: s.line, column: s.column })
  }
  // The packages the app's call went through to the wait (a framework's res.json, a middleware's end, a store, an
  // ORM, a driver): what it set going.
  const chain = packageChain(sites.slice(0, i))
  return {
    function: own.function.replace(/^async\s+/, ''),
    file: own.file,
    line: own.line,
    column: own.column,
    api: below ? below.function.replace(/^(async|new)\s+/, '') : null,
    apiFile: below ? below.file : null,
    callers,
    ...(chain.length > 0 ? { below: chain } : {})
  }
}

/**
 * The packages a run of stack frames went through, outermost first, each by the function the stack entered it by.
 * @param {(import('./stack.js').Site | null)[]} sites innermost first, as a stack lists them
 * @returns {PackageFrame[]}
 */
function packageChain (sites) {
  /** @type {PackageFrame[]} */
  const groups = []
  for (const s of sites) {
    if (s === null || isInternal(s.file)) continue
    const name = packageName(s.file)
    if (name === null) continue
    const frame = { name, function: s.function.replace(/^(async|new)\s+/, ''), file: s.file, line: s.line }
    const last = groups[groups.length - 1]
    // Innermost first: a package's frames in a row end with the one the stack entered it by.
    if (last !== undefined && last.name === name) groups[groups.length - 1] = frame
    else groups.push(frame)
  }
  return groups.reverse().slice(0, MAX_PACKAGES)
}
