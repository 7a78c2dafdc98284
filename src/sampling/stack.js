import { fileURLToPath } from 'node:url'
import { isHotpathFile } from '../hotpath-files.js'

/** @typedef {{ function: string, file: string, line: number, column: number }} Site */

// Node's own formatter, as it was when the probe loaded (before the app's code could replace it).
const NODE_PREPARE = Error.prepareStackTrace
/** whether the last stack read through stackText was formatted by rawPrepare */
let formattedRaw = false

/**
 * V8's text of each frame, with no source map applied and whatever formatter the app installed left out: positions in
 * the code that ran, which the analysis maps through the maps the run recorded (src/analysis/run-sites.js), once.
 * @param {unknown} _error
 * @param {NodeJS.CallSite[]} callSites
 */
function rawPrepare (_error, callSites) {
  formattedRaw = true
  let text = 'Error'
  for (const site of callSites) text += `\n    at ${site}`
  return text
}

/**
 * The text of a captured stack as V8 formats it, positions unmapped: Node maps a stack under --enable-source-maps (tsx
 * turns that on) and source-map-support maps it too (ts-node, @swc-node), each with its own maps, or none; the
 * analysis maps every position the same way, from the maps the run recorded. A stack something else read first (and
 * so formatted) is given only when nothing can have mapped it; else ''.
 * @param {{ stack?: unknown }} holder an Error, or an object Error.captureStackTrace filled
 * @returns {string}
 */
export function stackText (holder) {
  const saved = Error.prepareStackTrace
  formattedRaw = false
  let text
  try {
    Error.prepareStackTrace = rawPrepare
    text = holder.stack
  } catch {
  } finally {
    try { Error.prepareStackTrace = saved } catch {}
  }
  if (typeof text !== 'string') return ''
  if (!formattedRaw && (process.sourceMapsEnabled || saved !== NODE_PREPARE)) return ''
  return text
}

/**
 * The current call stack as text lines (without the "Error" header), skipping `above` and everything it called.
 * Each frame is V8's own text of it, its position in the code that ran (see stackText).
 * @param {Function} above
 * @param {number} [limit] frames to capture
 * @returns {string[]}
 */
export function captureStack (above, limit = 30) {
  /** @type {{ stack?: string }} */
  const holder = {}
  const saved = Error.stackTraceLimit
  try {
    Error.stackTraceLimit = limit
    Error.captureStackTrace(holder, above)
  } catch {
  } finally {
    Error.stackTraceLimit = saved
  }
  const text = stackText(holder)
  const lines = []
  for (const line of text.split('\n')) {
    const t = line.trim()
    if (t.startsWith('at ')) lines.push(t.slice(3))
  }
  return lines
}

/**
 * Parses one frame such as `fn (file:///x.js:3:7)`, `async fn (/x.js:3:7)` or `/x.js:3:7`.
 * @param {string} frame
 * @returns {Site | null}
 */
export function parseFrame (frame) {
  const m = /^(?:async\s+)?(?:(.*?)\s+\()?(.+?):(\d+):(\d+)\)?$/.exec(frame)
  if (m === null) return null
  let file = m[2]
  if (file.startsWith('file://')) {
    try { file = fileURLToPath(file) } catch {}
  }
  return { function: m[1] ?? '<anonymous>', file, line: Number(m[3]), column: Number(m[4]) }
}

/**
 * The first frame that is neither Node's internals nor hotpath itself: where the app (or a dependency) did it.
 * @param {string[]} frames
 * @returns {Site | null}
 */
export function firstUserSite (frames) {
  for (const frame of frames) {
    const site = parseFrame(frame)
    if (site === null) continue
    if (isInternal(site.file)) continue
    return site
  }
  return null
}

/**
 * The frames from the first one outside Node and hotpath on: a stack taken inside Node's event code starts there.
 * @param {string[]} frames
 * @returns {string[]}
 */
export function fromCaller (frames) {
  const i = frames.findIndex(frame => {
    const site = parseFrame(frame)
    return site === null || !isInternal(site.file)
  })
  return i <= 0 ? frames : frames.slice(i)
}

/**
 * Whether a frame's file is Node's internals or hotpath itself.
 * @param {string} file
 */
export function isInternal (file) {
  return file.startsWith('node:') || file.startsWith('internal/') || isHotpathFile(file)
}

/**
 * Whether a frame's file is the app's own: not Node's, not hotpath's, not a package's.
 * @param {string} file
 */
export function isAppFile (file) {
  return !isInternal(file) && !file.includes('/node_modules/')
}

/**
 * The app's own frame where it has one (a call made through an HTTP client library is the app's call), else the
 * first frame outside Node and hotpath. An anonymous function (a promise executor, a request handler) is named after
 * the app function it runs in, when the stack shows one.
 * @param {string[]} frames
 * @returns {Site | null}
 */
export function appSite (frames) {
  const sites = frames.map(parseFrame)
  const isApp = (/** @type {Site | null} */ s) => s !== null && isAppFile(s.file)
  const i = sites.findIndex(isApp)
  if (i === -1) return firstUserSite(frames)
  const site = /** @type {Site} */ (sites[i])
  if (!isAnonymous(site.function)) return site
  const named = sites.slice(i + 1).find(s => isApp(s) && !isAnonymous(/** @type {Site} */ (s).function))
  return { ...site, function: named ? `(anonymous in ${named.function.replace(/^(async|new)\s+/, '')})` : '(anonymous)' }
}

/** @param {string} name as a stack frame gives it: `<anonymous>`, `Server.<anonymous>` */
const isAnonymous = (name) => name === '' || name.endsWith('<anonymous>')
