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
    case 'none': return `none for this verdict (${l.category} does not blame ${l.blames})`
  }
}
