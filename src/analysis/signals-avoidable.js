// Work the serving threads did that they need not do on the request path (src/profile/avoidable.js finds it in their
// CPU profile by the runtime's own functions), with what the app replaced of the runtime that ran within it — an
// Error.prepareStackTrace, a require hook — charged to the package that installed it, and the built-ins a polyfill
// replaced with the time spent in it (the probe recorded them as the load began: src/probe/runtime-hooks.js).
import { readFileSync } from 'node:fs'
import { findAvoidable, shareInFiles } from '../profile/avoidable.js'
import { appRootOf, displayPath } from './paths.js'
import { isHotpathFile } from '../hotpath-files.js'
import { cpuCulprits } from './profile-culprits.js'

/** @typedef {import('../profile/avoidable.js').AvoidableKind} AvoidableKind */
/** @typedef {import('../probe/runtime-hooks.js').RuntimeHook} RuntimeHook */

/**
 * A function as the advice names it, its file as the target sees it.
 * @typedef {{ function: string, label?: string, file: string, line: number }} CodeSite
 */

/**
 * One avoidable cost of the serving threads.
 * @typedef {object} AvoidableSignal
 * @property {AvoidableKind} kind
 * @property {string} runtime the runtime function that shows it: `get stack`, `pbkdf2Sync`, `require`
 * @property {number} share of the serving threads' CPU that the remedy takes off the event loop
 * @property {number} runtimeShare the part of it in the runtime's work itself (capturing and formatting the stack, the
 *   sync call)
 * @property {boolean} wholeFunction the site's function spends most of its time on it (a function that builds an Error
 *   to find its caller): `share` is all of its time, parsing included
 * @property {CodeSite | null} site the app's line that does it (null: a package did it with no app code on the stack)
 * @property {(CodeSite & { package: string | null }) | null} via the package function the app called, when the work
 *   was done inside it (a logger that reads the stack itself)
 * @property {Installed | null} installed a replacement of the runtime's that ran within it
 */

/**
 * A replacement of the runtime's (a stack formatter, a require hook) and who installed it.
 * @typedef {object} Installed
 * @property {string} hook what it replaced: `Error.prepareStackTrace`, `Module._extensions['.js']`
 * @property {string} function
 * @property {string} file where it is defined, as the target sees it
 * @property {string | null} package the package it is defined in (null: the app's own code)
 * @property {string | null} installer the package the app loaded that installed it (`@babel/register` for
 *   source-map-support's formatter); the same as `package` when the app loaded that itself, null when unknown
 * @property {{ file: string, line: number } | null} loadedAt the app's line that loads the installer
 * @property {number} share of the serving threads' CPU spent in it
 */

/**
 * Built-ins replaced by userland code, by the package (or app file) that defines the replacements.
 * @typedef {object} PolyfillSignal
 * @property {string[]} replaced `Promise`, `Array.prototype.includes`
 * @property {string | null} package
 * @property {string} file where the first replacement is defined, as the target sees it
 * @property {string | null} installer the package the app loaded that brought it
 * @property {{ file: string, line: number } | null} loadedAt
 * @property {number} share of the serving threads' CPU spent in that package's (or file's) code
 */

/**
 * @typedef {object} AvoidableSignals
 * @property {AvoidableSignal[]} costs most first
 * @property {PolyfillSignal[]} polyfills most first
 * @property {number | null} stackTraceLimit Error.stackTraceLimit as the load began, when the app changed it from
 *   Node's 10 (a deeper stack costs every capture and format more)
 */

/** @type {AvoidableSignals} */
const NONE = { costs: [], polyfills: [], stackTraceLimit: null }

/**
 * @param {import('./run-data.js').RunData} data
 * @param {number} port the loaded port
 * @returns {AvoidableSignals}
 */
export function avoidableSignals (data, port) {
  const serving = data.threads.filter(t => t.listening.some(l => l.port === port))
  const threads = serving.length > 0 ? serving : data.threads.filter(t => t.pid === data.run.listening.pid && t.threadId === 0)
  if (threads.length === 0) return NONE
  const cwd = String(threads[0].hello.cwd ?? data.run.cwd)
  const appRoot = appRootOf(threads[0].hello, data.run.cwd)
  const { model } = cpuCulprits(data, threads, appRoot, cwd)
  const hooks = distinctHooks(threads.flatMap(t => t.runtime?.hooks ?? []))
  /** @type {number[]} */
  const limits = []
  for (const t of threads) if (t.runtime && t.runtime.stackTraceLimit !== 10) limits.push(t.runtime.stackTraceLimit)
  const stackTraceLimit = limits.length > 0 ? Math.max(...limits) : null
  if (model === null) return { ...NONE, stackTraceLimit }
  /** @type {AvoidableSignal[]} */
  let costs
  try {
    costs = findAvoidable(model, { isOwn: isHotpathFile }).map(c => avoidableSignal(c, hooks, cwd))
  } catch {
    costs = []
  }
  costs.sort((a, b) => b.share - a.share)
  return { costs, polyfills: polyfills(model, hooks, cwd), stackTraceLimit }
}

/**
 * @param {import('../profile/avoidable.js').AvoidableCost} c
 * @param {RuntimeHook[]} hooks
 * @param {string} cwd
 * @returns {AvoidableSignal}
 */
function avoidableSignal (c, hooks, cwd) {
  // A stack costs its capture (the Error's construction, the function's own time on that line) and its formatting.
  // A function that spends most of its time on a stack it builds is there to read it (a logger's caller lookup):
  // without the stack it has nothing left to do, parsing included — all its time, and its helpers'.
  const runtimeShare = c.share + c.ownShare
  const wholeFunction = c.kind === 'stack-trace' && c.site !== null && c.via === null && runtimeShare >= 0.5 * c.siteShare
  return {
    kind: c.kind,
    runtime: c.runtime,
    share: wholeFunction ? Math.max(c.siteShare, c.siteTotal) : runtimeShare,
    runtimeShare,
    wholeFunction,
    site: c.site ? codeSite(c.site, cwd) : null,
    via: c.via ? { ...codeSite(c.via, cwd), package: packageOf(c.via.file) } : null,
    installed: installedIn(c, hooks, cwd)
  }
}

/**
 * The replacement of the runtime's that ran within a cost: the stack formatter the app installed (whatever ran
 * under Node's prepareStackTraceCallback that is not Node's is that formatter), or the require hook a require went
 * through; with who installed it, when the probe recorded it.
 * @param {import('../profile/avoidable.js').AvoidableCost} c
 * @param {RuntimeHook[]} hooks
 * @param {string} cwd
 * @returns {Installed | null}
 */
function installedIn (c, hooks, cwd) {
  const kinds = c.kind === 'stack-trace' ? ['prepareStackTrace'] : c.kind === 'require' ? ['require-extension', 'loader'] : []
  if (kinds.length === 0 || c.inside.length === 0) return null
  const candidates = hooks.filter(h => kinds.includes(h.kind) && h.file !== null)
  for (const h of candidates) {
    const root = codeRoot(/** @type {string} */ (h.file))
    const share = c.inside.filter(i => codeRoot(i.file) === root).reduce((a, i) => a + i.share, 0)
    if (share > 0) return { hook: h.name, function: h.function, file: displayPath(/** @type {string} */ (h.file), cwd), package: packageOf(/** @type {string} */ (h.file)), ...installer(h, cwd), share }
  }
  // Runs recorded before the probe looked: what ran under the stack's formatting is the formatter, named by its file.
  if (c.kind !== 'stack-trace') return null
  const top = c.inside[0]
  const root = codeRoot(top.file)
  const share = c.inside.filter(i => codeRoot(i.file) === root).reduce((a, i) => a + i.share, 0)
  const pkg = packageOf(top.file)
  return { hook: 'Error.prepareStackTrace', function: top.function, file: displayPath(top.file, cwd), package: pkg, installer: pkg, loadedAt: null, share }
}

/**
 * Built-ins replaced by userland code, grouped by where the replacements are defined, with the time spent there.
 * @param {import('../profile/model.js').ProfileModel} model
 * @param {RuntimeHook[]} hooks
 * @param {string} cwd
 * @returns {PolyfillSignal[]}
 */
function polyfills (model, hooks, cwd) {
  /** @type {Map<string, RuntimeHook[]>} */
  const byRoot = new Map()
  for (const h of hooks) {
    if (h.kind !== 'polyfill' || h.file === null || !h.file.startsWith('/')) continue
    const root = codeRoot(h.file)
    byRoot.set(root, [...(byRoot.get(root) ?? []), h])
  }
  /** @type {PolyfillSignal[]} */
  const out = []
  for (const [root, list] of byRoot) {
    let share = 0
    try {
      share = shareInFiles(model, (file) => codeRoot(file) === root, isHotpathFile)
    } catch {}
    const first = list[0]
    out.push({ replaced: list.map(h => h.name), package: packageOf(/** @type {string} */ (first.file)), file: displayPath(/** @type {string} */ (first.file), cwd), ...installer(first, cwd), share })
  }
  return out.sort((a, b) => b.share - a.share)
}

/**
 * Who installed a hook: of the modules that loaded its file, the package the app's own module loaded, and the app's
 * line that loads it.
 * @param {RuntimeHook} h
 * @param {string} cwd
 * @returns {{ installer: string | null, loadedAt: { file: string, line: number } | null }}
 */
function installer (h, cwd) {
  const chain = [String(h.file), ...h.loadedBy]
  const app = chain.findIndex(f => packageOf(f) === null)
  if (app === 0) return { installer: null, loadedAt: null }
  const pkg = packageOf(chain[app === -1 ? chain.length - 1 : app - 1])
  if (app === -1 || pkg === null) return { installer: pkg, loadedAt: null }
  const line = loadLine(chain[app], pkg)
  return { installer: pkg, loadedAt: line ? { file: displayPath(chain[app], cwd), line } : null }
}

/**
 * The first line of a file that loads a package (`require('@babel/register')`, `import … from 'pkg/sub'`).
 * @param {string} file
 * @param {string} pkg
 * @returns {number | null}
 */
function loadLine (file, pkg) {
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return null
  }
  const name = pkg.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const loads = new RegExp(`(?:require\\s*\\(|\\bfrom|\\bimport\\s*\\(?)\\s*['"\`]${name}(?:/[^'"\`]*)?['"\`]`)
  const i = text.split('\n').findIndex(l => loads.test(l))
  return i === -1 ? null : i + 1
}

/**
 * The same hook recorded by several threads (a cluster's workers) once.
 * @param {RuntimeHook[]} hooks
 */
function distinctHooks (hooks) {
  const seen = new Set()
  return hooks.filter(h => {
    const key = `${h.name}\0${h.file}\0${h.line}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * @param {import('../profile/avoidable.js').AvoidableSite} s
 * @param {string} cwd
 * @returns {CodeSite}
 */
function codeSite (s, cwd) {
  return { function: s.function, ...(s.label ? { label: s.label } : {}), file: displayPath(s.file, cwd), line: s.line }
}

const PACKAGE = /^(.*[\\/]node_modules[\\/])((?:@[^\\/]+[\\/])?[^\\/]+)/

/**
 * The package a file belongs to, by the last node_modules on its path (null: not in one).
 * @param {string} file
 * @returns {string | null}
 */
export function packageOf (file) {
  const m = PACKAGE.exec(file)
  return m ? m[2].replace(/\\/g, '/') : null
}

/**
 * A package's folder, or the file itself for code outside node_modules: what the code of one replacement is.
 * @param {string} file
 */
function codeRoot (file) {
  const m = PACKAGE.exec(file)
  return m ? m[1] + m[2] : file
}
