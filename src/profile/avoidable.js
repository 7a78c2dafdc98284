// Work a server need not do on its request path, recognised by the runtime's own functions on the profile's stacks —
// never by the app's names: a stack trace formatted (V8's `stack` accessor, Node's prepareStackTraceCallback), a
// synchronous call that has an asynchronous form (Node's `*Sync` functions of crypto, zlib, fs and child_process), and
// require() (the CommonJS loader). Each sample goes to the outermost such function on its stack (a require that reads
// its file synchronously is the require), and each cost to the app function that did it: the nearest app frame above,
// at the line that makes the call — with the package the app called on the way, when the work happened inside one.
// The same thing two layers up, in words: src/report/words/avoidable.js.
import { callSites } from './call-sites.js'
import { culpritContext } from './culprits/context.js'
import { originalLine } from './culprits/frame-index.js'

/** @typedef {'stack-trace' | 'sync-crypto' | 'sync-zlib' | 'sync-fs' | 'sync-process' | 'require'} AvoidableKind */

/**
 * @typedef {object} AvoidableCost
 * @property {AvoidableKind} kind
 * @property {string} runtime the runtime function that shows it, outermost on the stack: `get stack`, `pbkdf2Sync`
 * @property {string} runtimeFile its file: `node:internal/crypto/pbkdf2`, '' for V8's own
 * @property {number} share of the profile (CPU without idle) spent in it
 * @property {AvoidableSite | null} site the app function that does it, at the line that does it (null: no app frame
 *   on its stacks — a package did it on its own)
 * @property {AvoidableSite | null} via the package function the app called on the way, when it happened inside one
 * @property {number} siteShare the share of the profile charged to the site's function: its own code and the
 *   runtime's and packages' it calls (0 without a site)
 * @property {number} siteTotal the share of the profile spent in the site's function and all it calls, app functions
 *   included (0 without a site)
 * @property {number} ownShare the share of the profile the site's function spent on its own lines that do it: for a
 *   stack, the lines that build the Error or read its stack (V8 captures the frames in the constructor, which the
 *   profile shows as the constructing function's own time)
 * @property {{ file: string, function: string, line: number, share: number }[]} inside code outside the runtime that
 *   ran within it — an Error.prepareStackTrace the app installed, a require hook, the module a require ran —, the
 *   outermost such function of each stack, most first, with the share of the profile spent in it
 */

/**
 * @typedef {object} AvoidableSite
 * @property {string} function
 * @property {string} [label]
 * @property {string} file
 * @property {number} line 1-based: the line that makes the call, when found; else the function's first line
 * @property {number} functionLine
 * @property {import('./classify.js').FrameKind} kind
 */

/**
 * What each kind is, from a frame of the runtime (Node's or V8's); null for any other.
 * @param {import('./model.js').ProfileFrame} frame
 * @returns {AvoidableKind | null}
 */
export function avoidableKind (frame) {
  const { name, file, kind } = frame
  if (kind === 'v8') return name === 'get stack' || name === 'captureStackTrace' ? 'stack-trace' : null
  if (kind !== 'node') return null
  if (file === 'node:internal/errors' && name === 'prepareStackTraceCallback') return 'stack-trace'
  const sync = name.endsWith('Sync')
  if (file.startsWith('node:internal/crypto/') && sync) return 'sync-crypto'
  if (file === 'node:zlib' && (sync || name === 'syncBufferWrapper')) return 'sync-zlib'
  if ((file === 'node:fs' || file.startsWith('node:internal/fs/')) && sync) return 'sync-fs'
  if (file === 'node:child_process' && sync) return 'sync-process'
  if (file.startsWith('node:internal/modules/') && REQUIRE.has(name)) return 'require'
  return null
}

/** The CommonJS loader's entry points, as V8 names them: what a call of require() goes through. */
const REQUIRE = new Set(['require', 'Module.require', 'Module._load', 'Module._resolveFilename'])

/**
 * What the app writes to make each kind of call: searched in the site's source for the line that makes it. The stack
 * is made by reading `stack` (V8 formats it then, lazily); zlib's sync functions run under a wrapper of another name.
 * @type {Record<AvoidableKind, (runtime: string) => string[]>}
 */
const CALLED_AS = {
  'stack-trace': () => ['get stack', 'captureStackTrace'],
  'sync-crypto': (r) => [r],
  'sync-zlib': (r) => r === 'syncBufferWrapper' || r === 'zlibBufferSync'
    ? ['gzipSync', 'gunzipSync', 'deflateSync', 'inflateSync', 'deflateRawSync', 'inflateRawSync', 'unzipSync', 'brotliCompressSync', 'brotliDecompressSync', 'zstdCompressSync', 'zstdDecompressSync']
    : [r],
  'sync-fs': (r) => [r],
  'sync-process': (r) => [r],
  require: () => ['require']
}

/**
 * The avoidable costs of a CPU profile, most first.
 * @param {import('./model.js').ProfileModel} model
 * @param {{ isOwn?: (file: string) => boolean, minShare?: number }} [opts] `isOwn`: a tool's own files (hotpath's
 *   probe), whose stacks are nobody's to fix; `minShare`: leave out smaller costs (default 0.005)
 * @returns {AvoidableCost[]}
 */
export function findAvoidable (model, opts = {}) {
  const isOwn = opts.isOwn ?? (() => false)
  const minShare = opts.minShare ?? 0.005
  const { nodes, frames } = model
  if (model.type !== 'cpu' || model.total <= 0) return []
  /** @type {Map<string, { kind: AvoidableKind, marker: number, site: number, via: number, value: number, inside: Map<number, number> }>} */
  const groups = new Map()
  for (const node of nodes) {
    if (node.self <= 0 || frames[node.frame].name === '(idle)') continue
    // Up the stack: the outermost runtime function of a kind, and the outermost code outside the runtime within it.
    let marker = -1
    let inside = -1
    let candidate = -1
    let own = false
    for (let i = node.id; i > 0; i = nodes[i].parent) {
      const frame = frames[nodes[i].frame]
      if (isOwn(frame.file)) own = true
      if (avoidableKind(frame) !== null) {
        marker = i
        inside = candidate
      } else if (frame.kind === 'app' || frame.kind === 'dependency') candidate = i
    }
    if (marker === -1 || own) continue
    const kind = /** @type {AvoidableKind} */ (avoidableKind(frames[nodes[marker].frame]))
    // Down from the app frame that did it: the first package function it called on the way, if any.
    let site = -1
    let via = -1
    for (let i = nodes[marker].parent; i > 0; i = nodes[i].parent) {
      const k = frames[nodes[i].frame].kind
      if (k === 'app') {
        site = i
        break
      }
      if (k === 'dependency') via = i
    }
    const siteFrame = site === -1 ? -1 : nodes[site].frame
    const viaFrame = via === -1 ? -1 : nodes[via].frame
    const key = `${kind}|${siteFrame}|${viaFrame}`
    let g = groups.get(key)
    if (!g) groups.set(key, g = { kind, marker: nodes[marker].frame, site: siteFrame, via: viaFrame, value: 0, inside: new Map() })
    g.value += node.self
    if (inside !== -1) g.inside.set(nodes[inside].frame, (g.inside.get(nodes[inside].frame) ?? 0) + node.self)
  }
  const kept = [...groups.values()].filter(g => g.value / model.total >= minShare).sort((a, b) => b.value - a.value)
  if (kept.length === 0) return []
  const ctx = culpritContext(model, [])
  const charged = chargedToApp(model)
  return kept.map(g => {
    const marker = frames[g.marker]
    const names = CALLED_AS[g.kind](marker.name)
    return {
      kind: g.kind,
      runtime: marker.name,
      runtimeFile: marker.file,
      share: g.value / model.total,
      site: g.site === -1 ? null : siteOf(g.site, g.via === -1 ? names : calledNames(frames[g.via]), ctx),
      via: g.via === -1 ? null : siteOf(g.via, names, ctx),
      siteShare: g.site === -1 ? 0 : (charged.get(g.site) ?? 0) / model.total,
      siteTotal: g.site === -1 ? 0 : frames[g.site].total / model.total,
      ownShare: g.site === -1 || g.kind !== 'stack-trace' ? 0 : ownLinesValue(g.site, ['Error', 'captureStackTrace', 'get stack'], ctx) / model.total,
      inside: [...g.inside].sort((a, b) => b[1] - a[1]).map(([f, value]) => ({ file: frames[f].file, function: frames[f].name, line: frames[f].line, share: value / model.total }))
    }
  })
}

/**
 * What the app writes to call a package function: its name (`info` for `Logger.info`).
 * @param {import('./model.js').ProfileFrame} frame
 */
function calledNames (frame) {
  return frame.name === '(anonymous)' ? [] : [frame.name]
}

/**
 * A function of the profile as a site, at the first line of its source that makes one of the calls named.
 * @param {number} f
 * @param {string[]} names
 * @param {import('./culprits/context.js').CulpritContext} ctx
 * @returns {AvoidableSite}
 */
function siteOf (f, names, ctx) {
  const frame = ctx.frameOf(f)
  const fn = ctx.fnOf(f)
  let line
  if (fn) {
    for (const name of names) {
      const at = callSites(fn, name)[0]
      line = at ? originalLine(frame, at.line, ctx.mapper, at.column) : undefined
      if (line !== undefined) break
    }
  }
  return { function: frame.name, ...(frame.label ? { label: frame.label } : {}), file: frame.file, line: line ?? frame.line, functionLine: frame.line, kind: frame.kind }
}

/**
 * The time a function spent on its own lines that make any of the calls named.
 * @param {number} f
 * @param {string[]} names
 * @param {import('./culprits/context.js').CulpritContext} ctx
 */
function ownLinesValue (f, names, ctx) {
  const frame = ctx.frameOf(f)
  const fn = ctx.fnOf(f)
  if (!fn) return 0
  const lines = new Set()
  for (const name of names) {
    for (const at of callSites(fn, name)) {
      const line = originalLine(frame, at.line, ctx.mapper, at.column)
      if (line !== undefined) lines.add(line)
    }
  }
  let value = 0
  for (const [line, v] of frame.lines) if (lines.has(line)) value += v
  return value
}

/**
 * The time charged to each app function as culprits are: its own, and that of the runtime's and packages' functions it
 * calls (up to the next app function).
 * @param {import('./model.js').ProfileModel} model
 * @returns {Map<number, number>} by frame
 */
function chargedToApp (model) {
  const { nodes, frames } = model
  /** @type {Map<number, number>} */
  const out = new Map()
  for (const node of nodes) {
    if (node.self <= 0 || frames[node.frame].name === '(idle)') continue
    for (let i = node.id; i > 0; i = nodes[i].parent) {
      if (frames[nodes[i].frame].kind === 'app') {
        out.set(nodes[i].frame, (out.get(nodes[i].frame) ?? 0) + node.self)
        break
      }
    }
  }
  return out
}

/**
 * The share of the profile spent in some files' code: samples whose nearest frame outside the runtime is in one of
 * them (their own time, and the runtime's work they asked for) — a polyfill's package, say.
 * @param {import('./model.js').ProfileModel} model
 * @param {(file: string) => boolean} inFiles
 * @param {(file: string) => boolean} [isOwn] a tool's own files: their stacks are left out
 */
export function shareInFiles (model, inFiles, isOwn = () => false) {
  const { nodes, frames } = model
  if (model.total <= 0) return 0
  let value = 0
  for (const node of nodes) {
    if (node.self <= 0 || frames[node.frame].name === '(idle)') continue
    for (let i = node.id; i > 0; i = nodes[i].parent) {
      const frame = frames[nodes[i].frame]
      if (frame.kind !== 'app' && frame.kind !== 'dependency') continue
      if (!isOwn(frame.file) && inFiles(frame.file)) value += node.self
      break
    }
  }
  return value / model.total
}
