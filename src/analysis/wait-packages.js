// Where the app put a wait that packages make on its behalf: a session middleware's lookup, a store's touch in
// res.end, an ORM's query. The stack of such a wait holds the packages it went through (outermost first); which of
// them the app put on the request's path, the object of theirs it constructed (a store, a client) and the line where
// it hands the package to its framework are what a developer can act on.
import { existsSync, readFileSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { SourceCache } from '../profile/sources.js'
import { displayPath } from './paths.js'

/** @typedef {import('../sampling/wait-tracer.js').PackageFrame} PackageFrame */
/** @typedef {import('../sampling/wait-tracer.js').WaitSite} WaitSite */

/**
 * @typedef {object} PackagePath a wait's way through packages, and where the app put them on the request's path
 * @property {boolean} outsideApp no frame of the app was on the wait's stack: the packages made it on their own
 * @property {string | null} dispatcher the framework that called the first package the app chose (Express, Fastify…),
 *   for a wait made with no frame of the app on its stack
 * @property {number | null} patched for a wait at a line of the app: the index in `chain` of a package patched into
 *   what the app called (none of the packages before it depends on it: a middleware's res.end wrapper), when one is
 * @property {{ name: string, function: string }[]} chain the packages from the one the app chose (a middleware, or the
 *   first one its own line called) down to the one that made the call
 * @property {{ class: string, file: string, line: number } | null} created where the app constructed an object of
 *   theirs that the wait went through (a session store, a client), while it started
 * @property {{ package: string, file: string, line: number } | null} used the line of the app that calls the first of
 *   them (`app.use(session({ … }))`), found in its source
 */

/** @type {Map<string, Set<string>>} */
const depsCache = new Map()

/**
 * The dependencies a package declares, from the package.json above one of its files.
 * @param {string} file a file of the package (as a stack gives it)
 * @param {string} name the package
 * @returns {Set<string>}
 */
export function dependenciesOf (file, name) {
  const i = file.lastIndexOf(`/node_modules/${name}/`)
  if (i === -1) return new Set()
  const manifest = file.slice(0, i) + `/node_modules/${name}/package.json`
  let deps = depsCache.get(manifest)
  if (deps === undefined) {
    deps = new Set()
    try {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8'))
      for (const k of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
        for (const d of Object.keys(pkg?.[k] ?? {})) deps.add(d)
      }
    } catch {}
    depsCache.set(manifest, deps)
  }
  return deps
}

/**
 * How a wait went through packages, and where the app put them on the request path.
 * @param {WaitSite} site
 * @param {{ constructions: { classes: string[], site: { file: string, line: number } }[], appFiles: string[], cwd: string }} context
 *   where the app constructed its packages' objects, and the app's files whose source may call them
 * @returns {PackagePath | null}
 */
export function packagePath (site, context) {
  const own = site.packages !== undefined
  const frames = site.packages ?? site.below ?? []
  if (frames.length === 0) return null
  let from = 0
  /** @type {string | null} */
  let dispatcher = null
  if (own && frames.length > 1) {
    // The outermost package dispatched the request (node:http called it): a framework. Its own parts (its router, its
    // layers: packages it depends on) come next; the first package that none of those depends on is the one the app
    // put on the path.
    dispatcher = frames[0].name
    from = 1
    while (from < frames.length - 1 && frames.slice(0, from).some(f => dependenciesOf(f.file, f.name).has(frames[from].name))) from++
  }
  const chain = frames.slice(from)
  // Below a line of the app, a package none of those before it depends on was patched into what the app called (a
  // middleware's res.end wrapper): its work, not the call's.
  const patched = own ? -1 : chain.findIndex((f, i) => i > 0 && !chain.slice(0, i).some(q => dependenciesOf(q.file, q.name).has(f.name)))
  return {
    outsideApp: own,
    dispatcher,
    patched: patched > 0 ? patched : null,
    chain: chain.map(f => ({ name: f.name, function: f.function })),
    created: createdIn(chain, context),
    used: own ? usedIn(chain[0].name, context) : null
  }
}

/**
 * Where the app constructed an object whose method the wait went through, the outermost first.
 * @param {PackageFrame[]} chain
 * @param {{ constructions: { classes: string[], site: { file: string, line: number } }[], cwd: string }} context
 */
function createdIn (chain, context) {
  for (const f of chain) {
    const dot = f.function.indexOf('.')
    if (dot <= 0) continue
    const cls = f.function.slice(0, dot)
    const made = context.constructions.findLast(c => c.classes.includes(cls))
    // Named by its own class: a method inherited from a base (ioredis's `EventEmitter.sort`) names the base.
    if (made) return { class: made.classes[0] ?? cls, file: displayPath(made.site.file, context.cwd), line: made.site.line }
  }
  return null
}

/** @type {SourceCache} */
const sources = new SourceCache()

/**
 * The first line of the app's source that calls what it imported from a package.
 * @param {string} pkg
 * @param {{ appFiles: string[], cwd: string }} context
 * @returns {{ package: string, file: string, line: number } | null}
 */
function usedIn (pkg, context) {
  const quoted = pkg.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const imports = [
    new RegExp(`(?:const|let|var)\\s+([\\w$]+)\\s*=\\s*require\\(\\s*['"]${quoted}['"]\\s*\\)`),
    new RegExp(`(?:const|let|var)\\s*\\{([^}]*)\\}\\s*=\\s*require\\(\\s*['"]${quoted}['"]\\s*\\)`),
    new RegExp(`import\\s+([\\w$]+)\\s*(?:,\\s*\\{[^}]*\\})?\\s*from\\s*['"]${quoted}['"]`),
    new RegExp(`import\\s*\\*\\s*as\\s+([\\w$]+)\\s+from\\s*['"]${quoted}['"]`),
    new RegExp(`import\\s*\\{([^}]*)\\}\\s*from\\s*['"]${quoted}['"]`)
  ]
  for (const file of context.appFiles) {
    const abs = isAbsolute(file) ? file : resolve(context.cwd, file)
    const text = sources.read(abs)
    if (text === null) continue
    const lines = text.split('\n')
    for (let i = 0; i < lines.length; i++) {
      const names = imports.flatMap(re => {
        const m = re.exec(lines[i])
        return m ? m[1].split(',').map(n => n.split(/\s+as\s+|:/).pop()?.trim() ?? '').filter(Boolean) : []
      })
      if (names.length === 0) continue
      const call = new RegExp(`(?:\\bnew\\s+|[^.\\w$]|^)(?:${names.map(n => n.replace(/\$/g, '\\$')).join('|')})\\s*(?:\\(|\\.[\\w$]+\\s*\\()`)
      for (let j = i + 1; j < lines.length; j++) {
        if (call.test(lines[j])) return { package: pkg, file: displayPath(abs, context.cwd), line: j + 1 }
      }
    }
  }
  return null
}

/**
 * The line of the app a wait made by packages is blamed at: where the app hands the first of them to its framework,
 * else where it constructed an object of theirs the wait went through; null when neither was found, or when the wait
 * began at a line of the app (that line is blamed).
 * @param {PackagePath | null} p
 * @returns {{ file: string, line: number } | null}
 */
export function placedAt (p) {
  if (p === null || !p.outsideApp) return null
  const at = p.used ?? p.created
  return at === null ? null : { file: at.file, line: at.line }
}

/**
 * The app's files a run names: the script it ran and every app file in its waits' sites and constructions.
 * @param {import('./run-data.js').ThreadRecord} t
 * @param {string} cwd
 * @returns {string[]} absolute paths
 */
export function appFilesOf (t, cwd) {
  /** @type {Set<string>} */
  const files = new Set()
  const argv = Array.isArray(t.hello.argv) ? t.hello.argv : []
  const script = argv.slice(1).find((/** @type {unknown} */ a) => typeof a === 'string' && !a.startsWith('-'))
  if (typeof script === 'string') {
    const abs = isAbsolute(script) ? script : resolve(cwd, script)
    if (existsSync(abs)) files.add(abs)
    else if (existsSync(`${abs}.js`)) files.add(`${abs}.js`)
  }
  const add = (/** @type {string} */ f) => {
    if (!f.includes('/node_modules/') && !f.startsWith('node:')) files.add(isAbsolute(f) ? f : resolve(cwd, f))
  }
  for (const s of t.waits.sites.values()) {
    if (s.packages === undefined) add(s.file)
    for (const c of s.callers) add(c.file)
  }
  for (const c of t.constructions) add(c.site.file)
  return [...files]
}
