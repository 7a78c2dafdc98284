import { relative } from 'node:path'
import { NOT_RECORDED } from '../../profile/source-maps.js'

/** @typedef {import('../../analysis/run-warnings.js').RunWarning} RunWarning */
/** @typedef {RunWarning & { cost: string, message: string }} WordedWarning */

const WHAT = {
  events: 'The event log',
  cpu: 'The CPU profile',
  heapAllocations: 'The heap allocation samples',
  heapRetained: 'The heap samples of what stayed alive',
  retainers: 'The heap snapshots of what keeps memory alive'
}

/**
 * A warning about a damaged file of the run with what it cost (`cost`) and all of it in one sentence (`message`), in
 * the order the JSON has always had them.
 * @param {RunWarning} w
 * @returns {WordedWarning}
 */
export function wordWarning (w) {
  const cost = costText(w.loss)
  if (w.kind === 'sourceMap') {
    return { ...w, cost, message: sourceMapMessage(w.file, w.problem, w.loss.kind === 'source-lines' ? w.loss : { lost: false, map: null }) }
  }
  const who = `pid ${w.pid}${w.threadId ? ` thread ${w.threadId}` : ''}`
  const state = w.notTaken
    ? `were not taken: the phase after the load window stopped short (${w.problem})`
    : w.notWritten ? `was not written: ${w.problem}` : w.problem === 'missing' ? 'is missing' : `is corrupt (${w.problem})`
  return {
    file: w.file,
    kind: w.kind,
    pid: w.pid,
    threadId: w.threadId,
    problem: w.problem,
    notTaken: w.notTaken,
    notWritten: w.notWritten,
    cost,
    affects: w.affects,
    // A phase that stopped short wrote no file: naming run.json would send the reader to the wrong place.
    message: `${WHAT[w.kind]} of ${who}${w.notTaken ? '' : ` (${w.file})`} ${state}: ${cost}.`,
    loss: w.loss
  }
}

/**
 * A script whose lines no source map could place, in one sentence: `hotpath flame` and `hotpath heap` say it too.
 * @param {string} file the script
 * @param {string} reason `no source map`, `unreadable (ENOENT)`…
 * @param {{ lost: boolean, map: string | null }} how lost: a loader compiled it in memory (no line is shown)
 * @returns {string}
 */
export function sourceMapMessage (file, reason, { lost, map }) {
  const which = map === null ? reason : `${reason}: ${map}`
  if (reason === NOT_RECORDED) {
    return `${file} ran as code a loader compiled in memory, which this profile does not hold (its positions are not in the file): its lines are not shown; record with hotpath flame -- <command>, which keeps that code.`
  }
  return lost
    ? `${file} ran as code a loader compiled in memory, with ${reason === 'no source map' ? 'no source map' : `a source map that could not be read (${which})`}: its lines are not shown, since the compiled code's are no line of the file (have the loader write inline source maps).`
    : `The source map of ${file} could not be read (${which}): its lines are those of the compiled file.`
}

/**
 * What a command that names files and lines says of the app's scripts among them whose source map is missing or
 * unreadable.
 * @param {import('../../profile/source-maps.js').SourceMapper | null | undefined} mapper the one the lines came through
 * @param {Iterable<string | null | undefined>} files the files it names (absolute paths)
 * @param {string} [cwd] files under it are named relative to it
 * @returns {string[]}
 */
export function sourceMapMessages (mapper, files, cwd) {
  if (!mapper || mapper.problems.size === 0) return []
  const named = new Set(files)
  // A package's own compiled lines are what its files hold: only the app's files are worth the words.
  const shown = (/** @type {string} */ f) => {
    const rel = cwd === undefined ? f : relative(cwd, f)
    return rel === '' || rel.startsWith('..') ? f : rel
  }
  return [...mapper.problems.values()]
    .filter(p => named.has(p.file) && !p.file.includes('/node_modules/'))
    .map(p => sourceMapMessage(shown(p.file), p.reason, { lost: p.lost, map: p.map === null ? null : shown(p.map) }))
}

/**
 * @param {import('../../analysis/run-warnings.js').Loss} l
 * @returns {string}
 */
function costText (l) {
  switch (l.kind) {
    case 'thread-lost': return 'nothing of this thread is in the analysis'
    case 'lines-lost': {
      const hello = l.helloLost ? '; its command line is lost with them, so which files are the app\'s is guessed from the run\'s working directory' : ''
      return `what ${l.lines === 1 ? 'that line' : 'those lines'} held (samples, listeners, traced requests…) is missing from the figures${hello}`
    }
    case 'cpu-culprits':
      return l.utilizationMisread ? 'no CPU culprits from it, and its event-loop utilisation is left as libuv misread it under the profiler (too high)' : 'no CPU culprits from it'
    case 'allocation-culprits': return 'no allocation culprits from it'
    case 'retained-culprits': return 'no culprits of what stays alive from it'
    case 'leak-culprits-allocated': return 'the leak\'s culprits are what it allocated, not what stayed alive'
    case 'retainer-paths': return 'no culprit says what keeps the leak alive'
    case 'source-lines': return l.lost ? 'its culprits have no line' : 'its culprits\' lines are the compiled file\'s'
    case 'none': return `none for this verdict (${l.category} does not blame ${l.blames})`
  }
}
