// The part of the load window where the server was measured alone: the probe's costly parts — the wait tracer's
// hooks, which cost every promise of the process, and the CPU profiler, which costs every call into Node's native code
// and pauses the thread as it starts and stops — run in one slice of the window (the profile's), and the server's own
// figures (CPU per request, utilisation, delay, time on the server) are taken from the rest. At a few dozen requests a
// second those parts cost more than the requests themselves: three waiting servers read 7–10 times the CPU a request
// their processes used without the probe, and one was called busy for it.

/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {ThreadRecord['samples'][number]} Sample */

/** ms kept clear on either side of an instrument's time on: the CPU is read every 100 ms and spread over the samples
 * of its span, so a sample this close to the profiler or the hooks may hold some of their cost. */
const MARGIN_MS = 150
/** The quiet part is the basis of the figures when it covers this many seconds… */
const MIN_SECONDS = 1
/** …and this share of the window at least… */
const MIN_SHARE = 0.25
/** …and its serving threads finished this many requests: fewer make a CPU per request that is mostly noise. */
const MIN_REQUESTS = 10

/**
 * Epoch-ms spans during which one of the thread's instruments was on (an instrument still on at the end of its log
 * ran to the end).
 * @param {ThreadRecord} t
 * @returns {[number, number][]}
 */
export function instrumentedSpans (t) {
  /** @type {[number, number][]} */
  const spans = []
  /** @type {Map<string, number>} */
  const since = new Map()
  for (const i of t.instruments) {
    if (i.on) {
      if (!since.has(i.what)) since.set(i.what, i.time)
    } else {
      const from = since.get(i.what)
      if (from !== undefined) spans.push([from, i.time])
      since.delete(i.what)
    }
  }
  for (const from of since.values()) spans.push([from, Infinity])
  return spans
}

/**
 * A thread's samples that no instrument touched, margin included.
 * @param {ThreadRecord} t
 * @param {Sample[]} samples its samples in the window
 */
export function quietSamples (t, samples) {
  return clearOf(samples, instrumentedSpans(t))
}

/**
 * The samples whose interval, widened by the margin, meets none of the spans.
 * @param {Sample[]} samples
 * @param {[number, number][]} spans epoch ms
 */
function clearOf (samples, spans) {
  if (spans.length === 0) return samples
  return samples.filter(s => {
    const from = s.time - s.interval - MARGIN_MS
    const to = s.time + MARGIN_MS
    return spans.every(([a, b]) => to < a || from > b)
  })
}

/**
 * Whether a thread's log says when its instruments went on and off: a run recorded before the probe said cannot tell
 * its quiet part from the rest.
 * @param {ThreadRecord} t
 */
export function toldInstruments (t) {
  return t.instruments.length > 0
}

/**
 * Which samples the server's own figures are taken from: the quiet part of the window, when it is long enough and
 * served enough requests to say something, else the whole window.
 * @param {{ threads: ThreadRecord[], of: (t: ThreadRecord) => Sample[] }} serving
 * @param {ThreadRecord[]} mains the serving processes' main threads (CPU is process-wide, read in the main thread)
 * @param {number} port the loaded port
 * @param {number} seconds the window's length
 * @returns {{ part: 'quiet' | 'window', of: (t: ThreadRecord) => Sample[], seconds: number }} `seconds`: what the chosen
 *   samples cover, per serving thread on average
 */
export function measuredPart (serving, mains, port, seconds) {
  const threads = [...new Set([...serving.threads, ...mains])]
  if (threads.length === 0 || !threads.some(toldInstruments)) return { part: /** @type {const} */ ('window'), of: serving.of, seconds }
  // All of the window but the moments an instrument went on or off: the profiler's start and stop pause the thread
  // (a second, on a loaded machine), which read as the server's longest task.
  /** @type {Map<ThreadRecord, Sample[]>} */
  const calm = new Map(threads.map(t => [t, clearOfToggles(t, serving.of(t))]))
  const calmOf = (/** @type {ThreadRecord} */ t) => calm.get(t) ?? serving.of(t)
  const whole = { part: /** @type {const} */ ('window'), of: calmOf, seconds: coveredSeconds(serving.threads, calmOf) }
  /** @type {Map<ThreadRecord, Sample[]>} */
  const quiet = new Map(threads.map(t => [t, quietSamples(t, serving.of(t))]))
  const of = (/** @type {ThreadRecord} */ t) => quiet.get(t) ?? serving.of(t)
  let finished = 0
  for (const t of serving.threads) {
    for (const s of of(t)) {
      for (const r of s.requests ?? []) if (r.port === port) finished += r.finished
    }
  }
  const quietSeconds = coveredSeconds(serving.threads, of)
  if (quietSeconds < MIN_SECONDS || quietSeconds < MIN_SHARE * seconds || finished < MIN_REQUESTS) return whole
  return { part: 'quiet', of, seconds: quietSeconds }
}

/**
 * Seconds the threads' samples cover, per thread on average.
 * @param {ThreadRecord[]} threads
 * @param {(t: ThreadRecord) => Sample[]} of
 */
function coveredSeconds (threads, of) {
  let covered = 0
  for (const t of threads) for (const s of of(t)) covered += s.interval
  return covered / 1000 / Math.max(1, threads.length)
}

/**
 * A thread's samples but those within the margin of an instrument going on or off.
 * @param {ThreadRecord} t
 * @param {Sample[]} samples
 */
function clearOfToggles (t, samples) {
  return clearOf(samples, t.instruments.map(i => /** @type {[number, number]} */ ([i.time, i.time])))
}

/**
 * ms of the samples' time the probe spent on its own measuring (the sampler and its writes), which the thread's CPU
 * and utilisation include.
 * @param {Sample[]} samples
 */
export function ownMs (samples) {
  let ms = 0
  for (const s of samples) if (typeof s.own === 'number' && s.own > 0) ms += s.own
  return ms
}
