// Which threads serve the loaded port, their samples in the load window, and the requests they finished: what every
// other signal is computed over.

import { otherHttpPorts } from '../other-ports.js'

/** @typedef {import('./run-data.js').RunData} RunData */
/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {ThreadRecord['samples'][number]} Sample */

/**
 * The threads that serve the loaded port, and their samples in the window.
 * @typedef {object} Serving
 * @property {ThreadRecord[]} threads listening on the port (or, when none says so, the main thread of the loaded pid)
 * @property {Set<string>} keys their `pid-threadId`
 * @property {Set<number>} pids the serving processes
 * @property {ThreadRecord[]} processThreads every thread of the serving processes
 * @property {ThreadRecord[]} helpers the serving processes' other threads that sampled in the window
 * @property {Sample[]} samples the serving threads' samples in the window
 * @property {(t: ThreadRecord) => Sample[]} of any thread's samples in the window
 */

/**
 * Whether a sample's interval lies (mostly) inside the window.
 * @param {Sample} s
 * @param {number} start
 * @param {number} end
 */
export const inWindow = (s, start, end) => {
  const mid = s.time - s.interval / 2
  return mid >= start && mid <= end
}

/** @param {ThreadRecord} t */
export const threadKey = (t) => `${t.pid}-${t.threadId}`

/**
 * @param {RunData} data
 * @param {number} port
 * @param {number} start
 * @param {number} end
 * @returns {Serving}
 */
export function servingThreads (data, port, start, end) {
  let threads = data.threads.filter(t => t.listening.some(l => l.port === port))
  if (threads.length === 0) threads = data.threads.filter(t => t.pid === data.run.listening.pid && t.threadId === 0)
  const keys = new Set(threads.map(threadKey))
  const pids = new Set(threads.map(t => t.pid))
  const windowed = new Map(data.threads.map(t => [threadKey(t), t.samples.filter(s => inWindow(s, start, end))]))
  const of = (/** @type {ThreadRecord} */ t) => /** @type {Sample[]} */ (windowed.get(threadKey(t)))
  return {
    threads,
    keys,
    pids,
    processThreads: data.threads.filter(t => pids.has(t.pid)),
    helpers: data.threads.filter(t => pids.has(t.pid) && !keys.has(threadKey(t)) && of(t).length > 0),
    samples: threads.flatMap(of),
    of
  }
}

/**
 * The other ports on which the target served HTTP by the window's end, in the order they opened, from every thread's
 * event log.
 * @param {RunData} data
 * @param {number} port the loaded one
 * @param {number} end
 * @returns {number[]}
 */
export function recordedOtherPorts (data, port, end) {
  const opened = data.threads.flatMap(t => t.listening).filter(l => l.time <= end).sort((a, b) => a.time - b.time)
  return otherHttpPorts(opened, port)
}

/**
 * The serving processes' main threads.
 * @param {RunData} data
 * @param {Serving} serving
 * @returns {ThreadRecord[]}
 */
export function mainThreads (data, serving) {
  return [...serving.pids].flatMap(pid => data.threads.filter(t => t.pid === pid && t.threadId === 0))
}

/**
 * Requests on the loaded port. In flight is time-weighted: a sample stands for its interval.
 * @param {Sample[]} samples the serving threads'
 * @param {number} port
 * @param {number} seconds
 */
export function requestCounts (samples, port, seconds) {
  let finished = 0
  let inflightMs = 0
  for (const s of samples) {
    for (const r of s.requests ?? []) {
      if (r.port !== port) continue
      finished += r.finished
      inflightMs += r.inflight * s.interval
    }
  }
  // Summed over the serving threads: a cluster's workers each hold their own requests in flight.
  return { finished, inflightMean: inflightMs / (seconds * 1000) }
}
