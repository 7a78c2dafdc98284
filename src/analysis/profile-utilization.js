/**
 * Event-loop utilisation while V8's CPU profiler runs, taken from the profile itself.
 *
 * libuv counts a loop's idle time around its poll call. The profiler interrupts that call with SIGPROF every sampling
 * interval; libuv then polls again and starts counting idle time afresh, so whatever the thread slept before the
 * signal is lost. A server idle 85% of the time reads as 50–65% busy (Node 20, 22 and 24, profiler at 1 ms; poll
 * timeouts of 1 ms happen to escape it, which is why a 1 ms delay monitor hid the bug).
 *
 * Two measures that the signals leave alone take its place, each blind where the other sees:
 * - the profile: Node marks the time the loop waits for events "(idle)", so the other samples are busy time,
 *   including JavaScript blocked in a system call; but it also marks idle the native work libuv does before calling
 *   into JavaScript (reading sockets, parsing HTTP), a third of a saturated hello-world server's time;
 * - the thread's own CPU and run-queue time (Linux), which counts that native work but not blocking calls.
 * The busier of the two is the utilisation; both fall short of the truth, never past it.
 */

/**
 * @typedef {object} Clock one instant on both clocks: Date.now() and the monotonic clock V8 stamps profiles with
 * @property {number} time ms since the epoch
 * @property {number} monotonic µs
 */

/**
 * Replaces the utilisation of the samples the profile covers (most of their interval). Leaves everything as it is
 * when the profile has no idle samples: a loop that never waited was never misread.
 * @param {{ time: number, interval: number, utilization: number, thread?: { cpu: number, wait: number } }[]} samples
 *   a thread's runtime samples; `time` ends the interval, all in ms
 * @param {any} profile the thread's .cpuprofile
 * @param {Clock} clock
 * @returns {number} how many samples were corrected
 */
export function correctUtilization (samples, profile, clock) {
  const busy = busyTime(profile)
  if (busy === null) return 0
  const { first, last } = busy
  let corrected = 0
  for (const s of samples) {
    const end = (s.time - clock.time) * 1000 + clock.monotonic
    const start = end - s.interval * 1000
    const from = Math.max(start, first)
    const to = Math.min(end, last)
    const covered = to - from
    if (!(covered > 0.5 * (end - start))) continue
    const fromProfile = busy.before(to) - busy.before(from)
    const fromThread = s.thread ? (s.thread.cpu + s.thread.wait) * 1000 * covered / (end - start) : 0
    const u = (Math.max(fromProfile, fromThread) + s.utilization * (end - start - covered)) / (end - start)
    s.utilization = Math.min(1, Math.max(0, Math.round(u * 1e4) / 1e4))
    corrected++
  }
  return corrected
}

/**
 * Cumulative busy time of a profile: sample i stands for the time since sample i-1.
 * @param {any} profile
 * @returns {{ first: number, last: number, before: (t: number) => number } | null} µs on the profile's clock
 */
function busyTime (profile) {
  const nodes = profile?.nodes
  const ids = profile?.samples
  const deltas = profile?.timeDeltas
  if (!Array.isArray(nodes) || !Array.isArray(ids) || !Array.isArray(deltas) || ids.length < 2 || deltas.length !== ids.length) return null
  const idle = new Set()
  for (const n of nodes) if (n?.callFrame?.functionName === '(idle)') idle.add(n.id)
  if (idle.size === 0) return null
  const n = ids.length
  const times = new Float64Array(n)
  const cumulative = new Float64Array(n)
  const isBusy = new Uint8Array(n)
  let t = Number(profile.startTime) || 0
  let sawIdle = false
  for (let i = 0; i < n; i++) {
    // V8 can stamp a sample marginally before the previous one: time never runs backwards here
    t += Math.max(0, deltas[i])
    times[i] = t
    isBusy[i] = idle.has(ids[i]) ? 0 : 1
    if (isBusy[i] === 0) sawIdle = true
    cumulative[i] = i === 0 ? 0 : cumulative[i - 1] + (isBusy[i] ? times[i] - times[i - 1] : 0)
  }
  if (!sawIdle) return null
  return {
    first: times[0],
    last: times[n - 1],
    before (at) {
      if (at <= times[0]) return 0
      if (at >= times[n - 1]) return cumulative[n - 1]
      let lo = 0
      let hi = n - 1
      while (hi - lo > 1) {
        const mid = (lo + hi) >>> 1
        if (times[mid] <= at) lo = mid
        else hi = mid
      }
      // within the interval sample `hi` stands for: its share so far
      return cumulative[lo] + (isBusy[hi] ? at - times[lo] : 0)
    }
  }
}
