// How often doctor's CPU profiler samples, chosen from the load it will profile: the culprits need samples, not a
// rate. Each sample costs the server 60–90 µs of its core on a 2-core VM (V8's profiler thread wakes and signals the
// main thread: context switches, whatever the rate), so the profiler's cost is the number of samples it takes: 7–9% of
// a saturated hello server's throughput at 1 ms, about 1% at 10 ms (docs/diagnosis.md). A culprit's share from 1,000
// samples is known to within a point (its standard error, √(share·(1−share)/samples), is 0.95 points for a share of a
// tenth, 1.4 for a third), and the culprits are ranked by shares that differ by more. So the window gets about 1,000
// samples whatever its length: 1 ms apart at the closest (a window of a second or less) and 10 ms at the farthest (the
// default 10 s; a minute's window still has 6,000 samples, at the same cost a second).
const SAMPLES = 1000
const MIN_US = 1000
const MAX_US = 10000
/** The window's length when the load does not say (an --on-port command, --amount): doctor's default duration. */
const UNKNOWN_SECONDS = 10

/**
 * @param {number | undefined} seconds the load window's planned length, when known
 * @returns {number} µs between samples, a multiple of 100
 */
export function profileIntervalFor (seconds) {
  const s = seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : UNKNOWN_SECONDS
  return Math.min(MAX_US, Math.max(MIN_US, Math.round((s * 1e6) / SAMPLES / 100) * 100))
}

/** The shortest slice worth taking: a second or two of a load still holds its warm-up (compiling, cold caches). */
const MIN_SLICE_SECONDS = 3
/** The slice of a load whose length is not known ahead: its first seconds, which every load has. */
const UNKNOWN_SLICE_SECONDS = 4

/**
 * Which part of doctor's load window its CPU profiler runs in. While V8's profiler is on, every call from JavaScript
 * into Node's native code takes a slower path (V8 records each native callback for the profiler): the server pays per
 * request, whatever the sampling rate (docs/diagnosis.md). The culprits need about 1,000 samples of the load's steady
 * state, not all of it: the middle third of the window, at least 3 s, holds them, and the load's start (warm-up) and
 * end stay out of it. A window of 4.5 s or less is profiled whole. A load whose end is not known ahead (--on-port,
 * --amount) is profiled for its first 4 s: a slice any later could begin after a short load has ended.
 * @param {number | undefined} seconds the load window's planned length, when known
 * @param {number} [warmup] seconds of it before the measurement begins
 * @returns {{ from: number, seconds: number } | null} seconds from the window's start; null: the whole window
 */
export function profileSliceFor (seconds, warmup = 0) {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds <= 0) return { from: 0, seconds: UNKNOWN_SLICE_SECONDS }
  const measured = Math.max(0, seconds - warmup)
  const length = Math.max(MIN_SLICE_SECONDS, measured / 3)
  if (length * 1.5 >= measured) return null
  return { from: round3(warmup + (measured - length) / 2), seconds: round3(length) }
}

/** @param {number} x */
const round3 = (x) => Math.round(x * 1000) / 1000
