// How often doctor's CPU profiler samples, chosen from the load it will profile: the culprits need samples, not a
// rate. The profiler's cost to a saturated server grows with its rate (7–9% of a hello server's throughput at 1 ms,
// 4–6% at 2 ms: docs/diagnosis.md), while a culprit's share from 2,500 samples is known to within a point (its
// standard error, √(share·(1−share)/samples), is 0.6 points for a share of a tenth). So the window gets about 2,500
// samples whatever its length: 1 ms apart at the closest (a short window keeps the resolution it always had) and
// 10 ms at the farthest (a minute's window still has 6,000 samples).
const SAMPLES = 2500
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
