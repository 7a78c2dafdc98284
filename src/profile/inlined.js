// V8's sampling heap profiler does not expand inlined frames: what a function TurboFan inlined into its caller
// allocates is charged to the caller, and the builtins it calls (`repeat`, `push`, `join`) appear as the caller's own
// calls although the caller's source never makes them. This finds, for such a call, the function that does make it:
// among the functions the caller's source calls that the source lets us resolve — declared in the same file, or
// imported from a relative module — then the functions those call, nearest first.
import { callLines } from './call-sites.js'
import { functionSource } from './function-source.js'
import { KEYWORDS } from './script-declarations.js'
import { scriptIndex } from './script-index.js'

/** @typedef {import('./function-source.js').FunctionSource} FunctionSource */
/** @typedef {import('./script-index.js').Declaration} Declaration */

/**
 * A function, found in the source, that makes a call its caller's frame was charged with.
 * @typedef {object} InlinedSite
 * @property {string} file the script it is in (the one that ran)
 * @property {Declaration} declaration
 * @property {number} callLine 1-based line of the call, in `file`
 * @property {{ name: string, line: number }} hop the call in the charged function's own source that leads to it: the
 *   name called and its 1-based line
 * @property {number} depth 1 when the charged function calls it directly
 */

/**
 * A function a profile shows being called, where it starts in the script that ran.
 * @typedef {object} CalledFunction
 * @property {string} name as V8 names it
 * @property {string} file
 * @property {number} line 1-based
 * @property {number} column 0-based
 */

const CALL = /(?<![\w$.#])([A-Za-z_$][\w$]*)\s*(?:\?\.\s*)?\(/g

export class InlineResolver {
  /**
   * @param {import('./sources.js').SourceCache} sources
   * @param {{ maxDepth?: number, maxFunctions?: number }} [opts] how deep to follow calls (V8 inlines a few levels),
   *   how many functions to read per search at most
   */
  constructor (sources, opts = {}) {
    this.sources = sources
    this.maxDepth = opts.maxDepth ?? 3
    this.maxFunctions = opts.maxFunctions ?? 200
    /** @type {Map<string, { name: string, line: number, offset: number }[]>} */
    this.callCache = new Map()
    /** @type {Map<string, FunctionSource | null>} */
    this.functionCache = new Map()
  }

  /**
   * The functions that make a call `calleeName` which a function's own source does not make: those found at the
   * shallowest depth (several when as many make it: the call is shared out among them).
   * @param {string} file the script the charged function is in (the one that ran)
   * @param {FunctionSource} fn its source
   * @param {string} calleeName as V8 names the callee
   * @param {{ called?: CalledFunction[], calledOnly?: boolean }} [opts] called: functions the profile shows it calling
   *   where its source names none (a framework running a route handler it was given), searched with those its source
   *   calls; calledOnly: search from those alone
   * @returns {InlinedSite[]}
   */
  sites (file, fn, calleeName, opts = {}) {
    /** @type {Set<string>} */
    const seen = new Set([`${file}:${fn.start}`])
    /** @type {{ file: string, fn: FunctionSource, hop: { name: string, line: number } | null }[]} */
    let frontier = [{ file, fn, hop: null }]
    let read = 0
    for (let depth = 1; depth <= this.maxDepth && frontier.length > 0; depth++) {
      /** @type {InlinedSite[]} */
      const found = []
      /** @type {typeof frontier} */
      const next = []
      for (const item of frontier) {
        const targets = item.hop === null
          ? [...this.calledTargets(opts.called ?? [], item.fn), ...(opts.calledOnly ? [] : this.staticTargets(item.file, item.fn))]
          : this.staticTargets(item.file, item.fn)
        for (const { target, hop: first } of targets) {
          const key = `${target.file}:${target.declaration.start}`
          if (seen.has(key) || read >= this.maxFunctions) continue
          seen.add(key)
          read++
          const helper = this.functionOf(target.file, target.declaration)
          if (!helper) continue
          const hop = item.hop ?? first
          const lines = callLines(helper, calleeName)
          if (lines.length > 0) found.push({ file: target.file, declaration: target.declaration, callLine: lines[0], hop, depth })
          next.push({ file: target.file, fn: helper, hop })
        }
      }
      if (found.length > 0) return found
      frontier = next
    }
    return []
  }

  /**
   * The functions a function's source calls by a name that can be resolved, each with the call that leads there.
   * @param {string} file
   * @param {FunctionSource} fn
   * @returns {{ target: { file: string, declaration: Declaration }, hop: { name: string, line: number } }[]}
   */
  staticTargets (file, fn) {
    return this.callsIn(file, fn).flatMap(call => this.resolve(file, call.name, call.offset).map(target => ({ target, hop: { name: call.name, line: call.line } })))
  }

  /**
   * Functions a profile shows being called, as targets of the search: the call that leads to each is not in the
   * caller's source, so it is placed at the caller's first line.
   * @param {CalledFunction[]} called
   * @param {FunctionSource} caller
   */
  calledTargets (called, caller) {
    /** @type {{ target: { file: string, declaration: Declaration }, hop: { name: string, line: number } }[]} */
    const out = []
    for (const c of called) {
      const start = scriptIndex(this.sources, c.file)?.offset(c.line, c.column) ?? -1
      if (start < 0) continue
      const declaration = { name: c.name, start, line: c.line, column: c.column, bindable: false, exportDefault: false }
      out.push({ target: { file: c.file, declaration }, hop: { name: c.name, line: caller.firstLine } })
    }
    return out
  }

  /**
   * The plain names a function's source calls (`name(`, `name?.(`), first occurrence of each.
   * @param {string} file
   * @param {FunctionSource} fn
   */
  callsIn (file, fn) {
    const key = `${file}:${fn.start}`
    let calls = this.callCache.get(key)
    if (calls) return calls
    calls = []
    /** @type {Set<string>} */
    const names = new Set()
    CALL.lastIndex = 0
    let m
    let line = fn.firstLine
    let counted = 0
    while ((m = CALL.exec(fn.code)) !== null) {
      const name = m[1]
      if (KEYWORDS.has(name) || names.has(name)) continue
      // A function's own name at its start (`function name (`) is not a call; V8's start is past it.
      const before = fn.code.slice(Math.max(0, m.index - 12), m.index)
      if (/\bfunction\s*\*?\s*$/.test(before)) continue
      for (let i = fn.code.indexOf('\n', counted); i !== -1 && i < m.index; i = fn.code.indexOf('\n', i + 1)) {
        line++
        counted = i + 1
      }
      names.add(name)
      calls.push({ name, line, offset: fn.start + m.index })
    }
    this.callCache.set(key, calls)
    return calls
  }

  /**
   * The functions a bare name called at `offset` of `file` refers to.
   * @param {string} file
   * @param {string} name
   * @param {number} offset
   * @returns {{ file: string, declaration: Declaration }[]}
   */
  resolve (file, name, offset) {
    const index = scriptIndex(this.sources, file)
    if (!index) return []
    const local = index.bound(name, offset)
    if (local.length > 0) return local.map(declaration => ({ file, declaration }))
    const imported = index.importOf(name)
    if (!imported) return []
    const target = index.resolveSpecifier(imported.specifier, (f) => this.sources.read(f) !== null)
    const other = target ? scriptIndex(this.sources, target) : null
    if (!target || !other) return []
    const candidates = other.declarations().filter(d => imported.imported === 'default'
      ? d.exportDefault
      : d.name === imported.imported && other.enclosing(d.start) === null)
    candidates.sort((a, b) => Number(b.bindable) - Number(a.bindable))
    return candidates.slice(0, 1).map(declaration => ({ file: target, declaration }))
  }

  /**
   * @param {string} file
   * @param {Declaration} d
   * @returns {FunctionSource | null}
   */
  functionOf (file, d) {
    const key = `${file}:${d.start}`
    let fn = this.functionCache.get(key)
    if (fn !== undefined) return fn
    fn = null
    const text = this.sources.read(file)
    if (text !== null) {
      try {
        fn = functionSource(text, d.line, d.column)
      } catch {}
    }
    this.functionCache.set(key, fn)
    return fn
  }
}
