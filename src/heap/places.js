// Where in the program a function, or a scope, is. A snapshot's `locations` give a closure's script id, line and
// column; the script's name comes from the graph itself (closure → `shared` function info → its script, whose node is
// named by the script's URL or path). That works on a snapshot file alone, with no inspector session to ask
// (Debugger.scriptParsed would be one more protocol domain enabled in the target, and says nothing a saved snapshot
// does not). A scope (Context) has no location: it is placed by a closure that runs in it, and a variable in it by
// its declaration in that file, read from disk when the file is there. A place in code a loader compiled or a bundler
// built is mapped to the source the user wrote, through the maps the profiles are mapped through (profile/sources.js).
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { SourceCache } from '../profile/sources.js'

/**
 * @typedef {object} Place
 * @property {string} function the function's name ('(anonymous)' when it has none)
 * @property {string} file as the runtime names it: a path, a file:// URL or node:internal… — or the source's path,
 *   when a source map placed it
 * @property {number} line 1-based; 0 when unknown (compiled in memory, with no map)
 * @property {number} column 1-based
 * @property {true} [unmapped] in a script with a source map, at a position the map does not cover: still a place in
 *   the code that ran
 */

export class Places {
  /**
   * @param {import('./snapshot-graph.js').HeapGraph} graph
   * @param {SourceCache} [scripts] the scripts as they ran (the run's copies of what loaders compiled in memory)
   */
  constructor (graph, scripts = new SourceCache()) {
    this.graph = graph
    this.scripts = scripts
    this.mapper = scripts.mapper()
    /** @type {Map<number, number>} node index → index in `locations` */
    this.locationOf = new Map()
    const { locations } = graph.raw
    for (let k = 0; k + 3 < locations.length; k += 4) this.locationOf.set(locations[k] / graph.nodeFields, k)
    /** @type {Map<number, number> | null} context → a closure running in it */
    this.closureOf = null
    /** @type {Map<string, string[] | null>} */
    this.sources = new Map()
  }

  /**
   * @param {number} closure a closure node
   * @returns {Place | null}
   */
  ofClosure (closure) {
    const k = this.locationOf.get(closure)
    if (k === undefined) return null
    const { graph } = this
    const { locations } = graph.raw
    const file = this.scriptName(closure)
    if (!file) return null
    const place = { function: graph.name(closure) || '(anonymous)', file, line: locations[k + 2] + 1, column: locations[k + 3] + 1 }
    return this.mapped(place)
  }

  /**
   * A place in the code that ran, as a place in the source: through the script's source map; with no line when a
   * loader compiled the script in memory and left no map (its line is nobody's).
   * @param {Place} place
   * @returns {Place}
   */
  mapped (place) {
    if (this.mapper === null) return place
    let path = place.file
    try {
      if (path.startsWith('file://')) path = fileURLToPath(path)
    } catch {}
    if (!path.startsWith('/')) return place
    const original = this.mapper.original(path, place.line, place.column - 1)
    if (original !== null) {
      return { function: original.name && place.function !== '(anonymous)' ? original.name : place.function, file: original.file, line: original.line, column: original.column + 1 }
    }
    if (this.mapper.lost(path)) return { ...place, line: 0, column: 0 }
    return this.mapper.mapOf(path) === null ? place : { ...place, unmapped: true }
  }

  /**
   * The script a closure was compiled from: its function info's script node, named by the script's name.
   * @param {number} closure
   */
  scriptName (closure) {
    const { graph } = this
    const shared = graph.child(closure, 'shared')
    if (shared < 0) return ''
    for (let e = graph.firstEdge[shared]; e < graph.firstEdge[shared + 1]; e += graph.edgeFields) {
      const name = graph.edgeName(e)
      if (typeof name === 'string' && name.startsWith('script')) {
        const script = graph.edgeTarget(e)
        const scriptName = graph.name(script)
        if (scriptName && !scriptName.startsWith('system /')) return scriptName
        // Some V8 versions name the Script node generically and hang the name off a `name` edge.
        const named = graph.child(script, 'name')
        return named >= 0 ? graph.name(named) : ''
      }
    }
    return ''
  }

  /**
   * The place of a scope (a Context node): of a closure that runs in it, preferring one from a file of the program.
   * @param {number} context
   * @param {Set<number>} wanted every context that will be asked about, indexed in one pass over the edges
   * @returns {Place | null}
   */
  ofContext (context, wanted) {
    if (this.closureOf === null) this.closureOf = this.indexClosures(wanted)
    const closure = this.closureOf.get(context)
    return closure === undefined ? null : this.ofClosure(closure)
  }

  /** @param {Set<number>} contexts */
  indexClosures (contexts) {
    const { graph } = this
    /** @type {Map<number, number>} */
    const found = new Map()
    const closureType = graph.nodeTypes.indexOf('closure')
    for (let n = 0; n < graph.nodeCount; n++) {
      if (graph.nodes[n * graph.nodeFields + graph.typeAt] !== closureType) continue
      const context = graph.child(n, 'context')
      if (context >= 0 && contexts.has(context) && !found.has(context) && this.locationOf.has(n)) found.set(context, n)
    }
    return found
  }

  /**
   * Where `name` is declared for code at `place` (const/let/var/function/class): in the place's file, near its line.
   * A place a map could not place (a bundle's module wrapper is mapped to nothing) is looked for in the code that ran,
   * and what is found there mapped: the declaration is a line of the source.
   * @param {Place} place
   * @param {string} name
   * @returns {{ file: string, line: number } | null}
   */
  declared (place, name) {
    const path = pathOf(place.file)
    if (place.unmapped && this.mapper !== null && path !== null) {
      const text = this.scripts.read(path)
      const line = text === null ? null : declarationIn(text.split('\n'), name, place.line)
      if (line === null || text === null) return null
      const column = text.split('\n')[line - 1].search(new RegExp(`\\b${name.replace(/\$/g, '\\$')}\\b`))
      const original = this.mapper.original(path, line, Math.max(0, column))
      return original === null ? { file: place.file, line } : { file: original.file, line: original.line }
    }
    const line = this.declaration(place.file, name, place.line)
    return line === null ? null : { file: place.file, line }
  }

  /**
   * The line that declares `name` in `file` (const/let/var/function/class), when the file can be read; else null.
   * @param {string} file
   * @param {string} name
   * @param {number} [near] prefer the declaration closest before this line
   */
  declaration (file, name, near = Infinity) {
    const lines = this.source(file)
    return lines === null ? null : declarationIn(lines, name, near)
  }

  /**
   * The line that sets property `name` in `file` (`this.name =`, `obj.name =`, a class field, an object literal's
   * `name:`), when the file can be read; else null.
   * @param {string} file
   * @param {string} name
   */
  assignment (file, name) {
    const lines = this.source(file)
    if (lines === null || !/^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(name)) return null
    const n = name.replace(/\$/g, '\\$')
    const sets = new RegExp(`(?:\\.${n}\\s*=(?!=)|^\\s*(?:static\\s+)?#?${n}\\s*=(?!=)|[{,]\\s*${n}\\s*:|^\\s*${n}\\s*:)`)
    const i = lines.findIndex(l => sets.test(l))
    return i < 0 ? null : i + 1
  }

  /** @param {string} file */
  source (file) {
    if (!this.sources.has(file)) {
      let lines = null
      try {
        const path = file.startsWith('file://') ? fileURLToPath(file) : file
        if (path.startsWith('/')) lines = readFileSync(path, 'utf8').split('\n')
      } catch {}
      this.sources.set(file, lines)
    }
    return /** @type {string[] | null} */ (this.sources.get(file))
  }
}

/**
 * @param {string[]} lines
 * @param {string} name
 * @param {number} near prefer the declaration closest before this line
 * @returns {number | null}
 */
function declarationIn (lines, name, near) {
  if (!/^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(name)) return null
  const declares = new RegExp(`\\b(?:const|let|var|function\\*?|class)\\s+(?:[^=;]*[{,]\\s*)?${name.replace(/\$/g, '\\$')}\\b`)
  let best = null
  for (let i = 0; i < lines.length; i++) {
    if (declares.test(lines[i]) && (best === null || i + 1 <= near)) best = i + 1
  }
  return best
}

/**
 * @param {string} file a path or a file:// URL
 * @returns {string | null}
 */
function pathOf (file) {
  try {
    const path = file.startsWith('file://') ? fileURLToPath(file) : file
    return path.startsWith('/') ? path : null
  } catch {
    return null
  }
}
