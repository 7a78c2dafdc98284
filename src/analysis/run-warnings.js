// What the damaged files of a run cost the diagnosis, in words: a verdict or a list of culprits that rests on data
// that could not be read must say so, not pass for one that was measured whole.

/**
 * @typedef {object} RunWarning
 * @property {string} file the damaged file (absolute path)
 * @property {import('./run-data.js').RunDamage['kind']} kind what it held: `events` (the probe's event log), `cpu`
 *   (the CPU profile), `heapAllocations` or `heapRetained` (heap samples)
 * @property {number} pid
 * @property {number} threadId
 * @property {string} problem what is wrong with the file
 * @property {string} cost what the diagnosis lacks because of it
 * @property {'verdict' | 'culprits' | 'nothing'} affects the most it may have changed
 * @property {string} message the whole warning in one sentence
 */

const WHAT = {
  events: 'The event log',
  cpu: 'The CPU profile',
  heapAllocations: 'The heap allocation samples',
  heapRetained: 'The heap samples of what stayed alive'
}

/**
 * @param {import('./run-data.js').RunData} data
 * @param {string} category what the figures say (rules' category)
 * @returns {RunWarning[]}
 */
export function runWarnings (data, category) {
  return data.damage.map(d => {
    const t = data.threads.find(x => x.pid === d.pid && x.threadId === d.threadId)
    const { cost, affects } = costOf(d, t, category)
    const who = `pid ${d.pid}${d.threadId ? ` thread ${d.threadId}` : ''}`
    const state = d.problem === 'missing' ? 'is missing' : `is corrupt (${d.problem})`
    return {
      file: d.file,
      kind: d.kind,
      pid: d.pid,
      threadId: d.threadId,
      problem: d.problem,
      cost,
      affects,
      message: `${WHAT[d.kind]} of ${who} (${d.file}) ${state}: ${cost}.`
    }
  })
}

/**
 * @param {import('./run-data.js').RunDamage} d
 * @param {import('./run-data.js').ThreadRecord | undefined} t the thread, when anything of it could be read
 * @param {string} category
 * @returns {{ cost: string, affects: RunWarning['affects'] }}
 */
function costOf (d, t, category) {
  switch (d.kind) {
    case 'events': {
      if (t === undefined) return { cost: 'nothing of this thread is in the analysis', affects: 'verdict' }
      // Without its hello, the thread's command line and working directory are unknown: so is where the app's code is.
      const hello = Object.keys(t.hello).length === 0 ? '; its command line is lost with them, so which files are the app\'s is guessed from the run\'s working directory' : ''
      return { cost: `what ${d.lines === 1 ? 'that line' : 'those lines'} held (samples, listeners, traced requests…) is missing from the figures${hello}`, affects: 'verdict' }
    }
    case 'cpu':
      // Without its profile, the thread's utilisation stays as libuv misread it while profiling (profile-utilization.js).
      return t?.clock
        ? { cost: 'no CPU culprits from it, and its event-loop utilisation is left as libuv misread it under the profiler (too high)', affects: 'verdict' }
        : { cost: 'no CPU culprits from it', affects: 'culprits' }
    case 'heapAllocations':
      if (category === 'gc') return { cost: 'no allocation culprits from it', affects: 'culprits' }
      if (category === 'memory-leak' && !t?.profiles.heapRetained) return { cost: 'no allocation culprits from it', affects: 'culprits' }
      return { cost: `none for this verdict (${category} does not blame allocations)`, affects: 'nothing' }
    case 'heapRetained':
      if (category === 'memory-leak') {
        return t?.profiles.heapAllocations
          ? { cost: 'the leak\'s culprits are what it allocated, not what stayed alive', affects: 'culprits' }
          : { cost: 'no culprits of what stays alive from it', affects: 'culprits' }
      }
      return { cost: `none for this verdict (${category} does not blame what stays alive)`, affects: 'nothing' }
  }
}
