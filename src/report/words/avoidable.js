// Work the request path need not do, in words: what the code does, where, what it costs, what to do instead and what
// that gives (src/analysis/signals-avoidable.js has the facts). The same thing two layers down, found on a profile's
// stacks: src/profile/avoidable.js.
import { formatMs, formatPercent, placeText } from '../format.js'

/** @typedef {import('../../analysis/signals-avoidable.js').AvoidableSignal} AvoidableSignal */
/** @typedef {import('../../analysis/signals-avoidable.js').Installed} Installed */
/** @typedef {import('../../analysis/signals-avoidable.js').PolyfillSignal} PolyfillSignal */

/**
 * `where (logger.js:3)`
 * @param {{ function: string, label?: string, file: string, line: number }} c
 */
function at (c) {
  return `${c.label ?? c.function} (${placeText(c.file, c.line)})`
}

/**
 * What removing a share of the CPU gives: the same CPU serves 1 / (1 − share) times the requests — "~1.9× the
 * requests/s", or for a small share "~3% more requests/s".
 * @param {number} share
 */
export function gain (share) {
  const x = 1 / Math.max(0.02, 1 - share)
  if (x < 1.1) return `~${Math.max(1, Math.round((x - 1) * 100))}% more requests/s`
  return `~${x >= 10 ? Math.round(x) : x.toFixed(1)}× the requests/s`
}

/**
 * What the code does, as a clause: "builds an Error and reads its stack on every call".
 * @param {AvoidableSignal} c
 */
export function avoidableWhat (c) {
  switch (c.kind) {
    case 'stack-trace':
      return c.wholeFunction ? 'builds an Error on every call and reads its stack to find the caller' : 'reads an Error\'s stack, which V8 then formats frame by frame'
    case 'sync-crypto': return `calls ${c.runtime}, which holds the event loop for the whole computation`
    case 'sync-zlib': return 'compresses or decompresses synchronously (zlib\'s *Sync functions), holding the event loop meanwhile'
    case 'sync-fs': return `calls fs.${c.runtime} on the request path, holding the event loop while the file system answers`
    case 'sync-process': return `runs a child process synchronously (${c.runtime}), holding the event loop until it exits`
    case 'require': return 'calls require() on the request path: every call resolves the module and looks it up in the cache, and the first one reads and compiles it'
  }
}

/**
 * Where it happens: the app's line, and the package it happened in when it did.
 * @param {AvoidableSignal} c
 */
function whereDone (c) {
  const via = c.via ? ` inside ${c.via.package ?? 'a package'}'s ${c.via.label ?? c.via.function}` : ''
  if (c.site) return `${at(c.site)}${via}`
  return c.via ? `${c.via.package ?? 'a package'}'s ${at(c.via)}` : 'code with no frame of the app on its stack'
}

/**
 * The verdict's sentence when the loop is busy with work it need not do.
 * @param {{ cost: AvoidableSignal, cpuPerRequestMs: number, utilization: number }} f
 */
export function avoidableVerdict (f) {
  const c = f.cost
  return `The event loop is busy with work it need not do: ${whereDone(c)} ${avoidableWhat(c)}, ${formatPercent(c.share, 0)} of the serving threads' CPU` +
    `${installedClause(c.installed)} — though each request costs only ${formatMs(f.cpuPerRequestMs)} of CPU, the loop is ${formatPercent(f.utilization, 0)} busy. ` +
    `Without it the same CPU would serve ${gain(c.share)}.`
}

/**
 * Said after another verdict's sentence when a large avoidable cost stands beside it.
 * @param {AvoidableSignal} c
 */
export function avoidableAside (c) {
  return ` ${capital(whereDone(c))} ${avoidableWhat(c)}: ${formatPercent(c.share, 0)} of the serving threads' CPU${installedClause(c.installed)}, work the request path need not do (${gain(c.share)} at the same CPU without it).`
}

/**
 * @param {Installed | null} i
 */
function installedClause (i) {
  if (i === null) return ''
  return `, ${formatPercent(i.share, 0)} of it in ${installedName(i)}`
}

/**
 * "source-map-support's Error.prepareStackTrace, installed by @babel/register"
 * @param {Installed} i
 */
function installedName (i) {
  const owner = i.package ? `${i.package}'s ${i.hook}` : `the ${i.hook} at ${i.file}`
  return i.installer && i.installer !== i.package ? `${owner}, installed by ${i.installer}` : owner
}

/**
 * @param {string} s
 */
function capital (s) {
  return s.charAt(0).toUpperCase() + s.slice(1)
}

/**
 * The remedy for an avoidable cost and what it gives.
 * @param {'stop-stack-traces' | 'use-async-api' | 'read-files-once' | 'hoist-require'} kind
 * @param {AvoidableSignal} c
 * @param {number | null} [stackTraceLimit]
 */
export function avoidableAdviceText (kind, c, stackTraceLimit = null) {
  const share = formatPercent(c.share, 0)
  const where = whereDone(c)
  switch (kind) {
    case 'stop-stack-traces': {
      const limit = stackTraceLimit !== null && stackTraceLimit > 10 ? ` Error.stackTraceLimit is ${stackTraceLimit} (Node's default is 10): every stack captured is that deep.` : ''
      if (c.via) return `Stop ${c.via.package ?? 'the package'} from reading a stack on every call made at ${where}: it takes ${share} of the CPU — turn off its option that records the caller or the stack, at least in production (${gain(c.share)} at the same CPU).${limit}`
      const what = c.wholeFunction ? `stop building an Error per call in ${where} to find its caller` : `stop reading Error stacks on the request path at ${where}`
      const how = c.wholeFunction
        ? 'pass the caller in (a name, or the module\'s logger bound to it), or log it only at levels you do not keep in production'
        : 'read `.stack` only when you print it, and create Errors only for errors'
      return `${capital(what)}: ${c.wholeFunction ? 'it takes' : 'formatting them takes'} ${share} of the CPU, so ${gain(c.share)} at the same CPU — ${how}.${limit}`
    }
    case 'use-async-api': {
      const api = c.kind === 'sync-crypto' ? `crypto.${c.runtime.replace(/Sync$/, '')}()` : c.kind === 'sync-zlib' ? 'zlib\'s async functions (zlib.gzip(), or a stream)' : 'child_process.execFile() or spawn()'
      const off = c.kind === 'sync-process' ? 'the loop no longer waits for the child' : 'that work then runs on libuv\'s thread pool'
      return `Use ${api} instead of the synchronous call at ${where}: it takes ${share} of the event loop's CPU, and ${off} — the loop serves ${gain(c.share)} where the machine has a core to spare, and no request waits behind the call.`
    }
    case 'read-files-once':
      return `Read the file once at start-up and keep it (or use fs.promises) instead of fs.${c.runtime} at ${where} on every request: it takes ${share} of the CPU — ${gain(c.share)} without it.`
    case 'hoist-require': {
      const hook = c.installed ? `, and every call goes through ${installedName(c.installed)}` : ''
      if (c.via) return `${capital(where)} calls require() on every call: ${share} of the CPU${hook} — a package that loads modules on its request path; update it, or call it less often (${gain(c.share)} without it).`
      return `Hoist the require() at ${where} to the top of its module: it runs on every request and takes ${share} of the CPU${hook} — ${gain(c.share)} at the same CPU.`
    }
  }
}

/**
 * Precompile instead of registering a transpiler (or a stack mapper) at runtime.
 * @param {Installed} i
 * @param {number | null} stackTraceLimit
 */
export function precompileText (i, stackTraceLimit) {
  const loaded = i.loadedAt ? ` (loaded at ${placeText(i.loadedAt.file, i.loadedAt.line)})` : ''
  const who = i.installer ?? i.package ?? i.file
  const what = i.hook === 'Error.prepareStackTrace'
    ? `every stack the app reads runs ${installedName(i)}${loaded}, which rewrites each frame (a source map's lookup): ${formatPercent(i.share, 0)} of the CPU`
    : `every require() on the request path runs ${installedName(i)}${loaded}: ${formatPercent(i.share, 0)} of the CPU`
  const limit = stackTraceLimit !== null && stackTraceLimit > 10 ? `, and Error.stackTraceLimit stays at Node's 10 (it is ${stackTraceLimit})` : ''
  return `Precompile instead of registering at runtime: ${what}. Build the code ahead (the same transform as a build step) and start the server without ${who}, so stacks and modules are Node's own${limit} — ${gain(i.share)} at the same CPU.`
}

/**
 * @param {PolyfillSignal} p
 */
export function polyfillText (p) {
  const names = p.replaced.length > 2 ? `${p.replaced.slice(0, 2).join(', ')} and ${p.replaced.length - 2} more built-ins` : p.replaced.join(' and ')
  const by = p.package ? `${p.package}'s code` : `code at ${p.file}`
  const loaded = p.loadedAt ? ` (loaded at ${placeText(p.loadedAt.file, p.loadedAt.line)}${p.installer && p.installer !== p.package ? `, by ${p.installer}` : ''})` : p.installer && p.installer !== p.package ? ` (brought by ${p.installer})` : ''
  return `${names} ${p.replaced.length === 1 ? 'is' : 'are'} replaced by ${by}${loaded}, where ${formatPercent(p.share, 0)} of the CPU goes: Node's built-ins are native — drop the polyfill, or load it only where the runtime lacks the feature (up to ${gain(p.share)}).`
}

/**
 * Overload protection in front of a server that the load saturates.
 * @param {{ utilization: number, connections: number, latencyMeanMs: number, serverTimeMs: number }} a
 */
export function overloadText (a) {
  const waited = Math.max(0, a.latencyMeanMs - a.serverTimeMs)
  return `The load saturates the server: its event loop is ${formatPercent(a.utilization, 0)} busy and each request waited ~${formatMs(waited)} behind the others for ${formatMs(a.serverTimeMs)} on the server (${a.connections} connections): latency grows with every connection added. ` +
    'Put hotpath/runtime\'s overload protection in front, so that past a delay it answers 503 with Retry-After at once and a load balancer sends the excess elsewhere, keeping the latency of what it accepts: ' +
    '`const guard = overloadProtection({ maxEventLoopDelay: 200 })` (import { overloadProtection } from \'hotpath/runtime\'), then `http.createServer(guard.http(handler))` — or app.use(guard.express()), app.register(guard.fastify()), app.use(guard.koa()).'
}

/** Kinds of avoidable cost as an evidence row names them. */
const KIND_LABELS = {
  'stack-trace': 'stack traces read',
  'sync-crypto': 'synchronous crypto',
  'sync-zlib': 'synchronous zlib',
  'sync-fs': 'synchronous file system calls',
  'sync-process': 'synchronous child processes',
  require: 'require() on the request path'
}

/** The evidence row of an avoidable cost (src/report/words/evidence.js). */
export const avoidableEvidence = {
  label: (/** @type {any} */ f) => `${KIND_LABELS[/** @type {keyof KIND_LABELS} */ (f.kind)] ?? f.kind}${f.site ? ` at ${placeText(f.site.file, f.site.line)}` : f.via ? ` in ${f.via.package ?? f.via.function}` : ''}`,
  verdict: {
    avoidable: (/** @type {any} */ f) => `avoidable: ${f.runtime}${f.installed ? `, through ${f.installed.package ?? f.installed.file}'s ${f.installed.hook}` : ''}`,
    ok: (/** @type {any} */ f) => `small: ${f.runtime}`
  }
}

/** The evidence row of a polyfill's code. */
export const polyfillEvidence = {
  label: (/** @type {any} */ f) => `${f.replaced[0]}${f.replaced.length > 1 ? ` and ${f.replaced.length - 1} more` : ''} replaced by ${f.package ?? f.file}`,
  verdict: { costly: 'its code takes CPU: a polyfill of a native built-in', ok: 'a polyfill of a native built-in' }
}
