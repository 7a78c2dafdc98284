// What the pacer (pacer.js) and its thread (pacer-thread.js) share: the layout of their shared memory and the clock.

/** Int32 cells: the deadline's generation, the generation last fired, and the stop flag */
export const ARM = 0
export const FIRED = 1
export const STOP = 2
/** byte offset of the Float64 deadline, in monotonicMs() */
export const DEADLINE_OFFSET = 16
export const BUFFER_SIZE = 24

/**
 * The one clock both threads read alike: each thread's performance.now() counts from its own start.
 * @returns {number} ms
 */
export function monotonicMs () {
  const [s, ns] = process.hrtime()
  return s * 1e3 + ns / 1e6
}
