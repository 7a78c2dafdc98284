// What every stage of culprit finding reads a profile's functions through: its frames (the model's, and those the
// stages add), each function's source (read once), and for heap profiles the search for the calls that functions V8
// inlined make.
import { callSites, computedCallSite, computedKeyAt, isComputedName } from '../call-sites.js'
import { InlineResolver } from '../inlined.js'
import { SOURCES } from '../model.js'
import { scriptIndex } from '../script-index.js'
import { SourceCache } from '../sources.js'
import { appCallees } from './dispatch.js'
import { FrameIndex, originalLine, readFunction, scriptOf } from './frame-index.js'

/** @typedef {import('../function-source.js').FunctionSource} FunctionSource */
/** @typedef {import('../inlined.js').InlinedSite} InlinedSite */

/**
 * The functions that make a call `name` which the source `fn` of frame `f` does not make.
 * @typedef {(f: number, fn: FunctionSource, name: string) => InlinedSite[]} SiteSearch
 */

/**
 * @typedef {object} CulpritContext
 * @property {import('../model.js').ProfileModel} model
 * @property {FrameIndex} index the model's frames by position, and the frames added for functions it lacks
 * @property {import('../source-maps.js').SourceMapper | null} mapper
 * @property {(f: number) => import('../model.js').ProfileFrame} frameOf a frame of the model or one added
 * @property {(f: number) => FunctionSource | null} fnOf the source of a frame's function, read once
 * @property {InlineResolver | null} inlining heap profiles only: they charge what an inlined function allocates to the
 *   function it was inlined into (CPU profiles expand inlined frames)
 * @property {Map<number, number[]>} called package frame → the app frames it runs (heap profiles; empty for CPU)
 * @property {SiteSearch} appSites searched among the app functions the package frame runs
 * @property {SiteSearch} inlineSites searched in the app code it runs first, then in the functions its source calls
 * @property {(fn: FunctionSource, callee: number, ownLines?: Map<number, number>) => { line: number, column: number } | undefined} callSite
 *   where the source `fn` calls the callee frame
 * @property {(f: number) => number | null} ownCpuLine where the frame's function spends most of its time in the CPU
 *   profiles of the same code (`callProfiles`): a line of its own, or a line that calls an app function this profile
 *   does not show it calling (V8 inlined it here); null when they do not show it running
 */

/**
 * @param {import('../model.js').ProfileModel} model
 * @param {import('../model.js').ProfileModel[]} callProfiles see CulpritOptions
 * @returns {CulpritContext}
 */
export function culpritContext (model, callProfiles) {
  const context = /** @type {any} */ (model)[SOURCES] ?? {}
  const sources = /** @type {SourceCache} */ (context.sources ?? new SourceCache())
  const mapper = /** @type {import('../source-maps.js').SourceMapper | null} */ ('mapper' in context ? context.mapper : sources.mapper())
  // Functions V8 ran only inlined, or only in another profile, have no frame in the model: they get one here.
  const index = new FrameIndex(model, mapper)
  const frameOf = (/** @type {number} */ f) => index.frame(f)
  /** @type {Map<number, FunctionSource | null>} */
  const functionCache = new Map()
  const fnOf = (/** @type {number} */ f) => {
    let fn = functionCache.get(f)
    if (fn === undefined) functionCache.set(f, fn = readFunction(frameOf(f), sources))
    return fn
  }
  // Heap profiles charge what an inlined function allocates to the function it was inlined into (CPU profiles expand
  // inlined frames): a call its own source does not make is looked for in the functions it calls.
  const inlining = model.type === 'heap' ? new InlineResolver(sources) : null
  const called = inlining ? appCallees(model, index, callProfiles) : /** @type {Map<number, number[]>} */ (new Map())
  /** @type {SiteSearch} */
  const appSites = (f, fn, name) => {
    const dynamic = (called.get(f) ?? []).map(c => calledFunction(frameOf(c)))
    return inlining && dynamic.length > 0 ? inlining.sites(scriptOf(frameOf(f)).file, fn, name, { called: dynamic, calledOnly: true }) : []
  }
  /** @type {SiteSearch} */
  const inlineSites = (f, fn, name) => {
    if (!inlining) return []
    // The app's code first: a package's own helpers make many of the calls a route handler makes too.
    const fromApp = appSites(f, fn, name)
    return fromApp.length > 0 ? fromApp : inlining.sites(scriptOf(frameOf(f)).file, fn, name)
  }
  /** @type {Set<string> | null} */
  let known = null
  /** @type {CulpritContext['callSite']} */
  const callSite = (fn, callee, ownLines) => {
    const frame = frameOf(callee)
    const [site] = callSites(fn, frame.name)
    if (site !== undefined || !definedUnderComputedKey(frame, sources)) return site
    known ??= new Set(model.frames.map(x => x.name.slice(x.name.lastIndexOf('.') + 1)))
    return computedCallSite(fn, known, ownLines)
  }
  /** @type {CulpritContext['ownCpuLine']} */
  const ownCpuLine = (f) => {
    const frame = frameOf(f)
    // What this profile shows it calling: those callees were charged with what they allocated there.
    /** @type {Set<number>} */
    const calledHere = new Set()
    for (const node of model.nodes) if (node.parent >= 0 && model.nodes[node.parent].frame === f) calledHere.add(node.frame)
    const key = positionOf(frame)
    const fn = fnOf(f)
    /** @type {Map<number, number>} line → ms */
    const lines = new Map()
    for (const cpu of callProfiles) {
      if (cpu.unit !== 'ms') continue
      const own = cpu.frames.find(x => positionOf(x) === key)
      if (!own) continue
      for (const [line, v] of own.lines) lines.set(line, (lines.get(line) ?? 0) + v)
      // The app functions it calls that this profile does not show it calling: V8 ran them inlined here (or they
      // allocated nothing sampled), and what they allocated is among the function's own. Their time counts at the line
      // that calls them.
      /** @type {Map<number, number>} */
      const callees = new Map()
      for (const node of cpu.nodes) {
        if (node.parent < 0 || node.frame === own.id || cpu.nodes[node.parent].frame !== own.id || cpu.frames[node.frame].kind !== 'app') continue
        callees.set(node.frame, (callees.get(node.frame) ?? 0) + node.total)
      }
      for (const [c, v] of callees) {
        const here = index.forFrame(cpu.frames[c])
        if (calledHere.has(here)) continue
        const site = fn ? callSite(fn, here) : undefined
        const line = site ? originalLine(frame, site.line, mapper, site.column) : undefined
        if (line !== undefined) lines.set(line, (lines.get(line) ?? 0) + v)
      }
    }
    let best = null
    let most = 0
    for (const [line, v] of lines) {
      if (v > most) {
        best = line
        most = v
      }
    }
    return best
  }
  return { model, index, mapper, frameOf, fnOf, inlining, called, appSites, inlineSites, callSite, ownCpuLine }
}

/** @param {import('../model.js').ProfileFrame} frame */
function positionOf (frame) {
  const where = scriptOf(frame)
  return `${where.file}\0${where.line}\0${where.column}`
}

/**
 * Whether V8 names the frame's function by a computed key (`obj.<computed>`), or gives none to a method it found
 * written `[key]() {}`: the code that calls it does not say that name.
 * @param {import('../model.js').ProfileFrame} frame
 * @param {SourceCache} sources
 */
function definedUnderComputedKey (frame, sources) {
  if (isComputedName(frame.name)) return true
  if (frame.name !== '(anonymous)') return false
  const where = scriptOf(frame)
  const script = scriptIndex(sources, where.file)
  const at = script ? script.offset(where.line, where.column) : -1
  return script !== null && at > 0 && computedKeyAt(script.masked, at)
}

/**
 * A frame's function as the inline search takes it: where it starts in the script that ran.
 * @param {import('../model.js').ProfileFrame} frame
 * @returns {import('../inlined.js').CalledFunction}
 */
function calledFunction (frame) {
  return { name: frame.name, ...scriptOf(frame) }
}
