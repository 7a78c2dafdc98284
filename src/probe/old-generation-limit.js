// The limit V8 holds this thread's old generation to, when it can be known. V8's heap_size_limit adds the young
// generation's reservation to it — 48 MB on Node 20 by default, so `--max-old-space-size=48` reads as a 96 MB heap —
// and a heap compared with that figure reads half full when its old generation is at its limit.
import { isMainThread, resourceLimits } from 'node:worker_threads'

const MB = 1048576

/**
 * Bytes, or null when no limit was set: V8 then sizes the old generation from the machine's memory, and its
 * heap_size_limit, far larger than the young generation's reservation, is near enough.
 * @param {string[]} execArgv
 * @param {string | undefined} nodeOptions
 * @returns {number | null}
 */
export function oldGenerationLimit (execArgv, nodeOptions) {
  // A worker thread has limits of its own, given to its constructor or sized by V8, and says what they are.
  if (!isMainThread) return resourceLimits.maxOldGenerationSizeMb ? resourceLimits.maxOldGenerationSizeMb * MB : null
  // Node reads NODE_OPTIONS before its command line, and V8 keeps the last value a flag is given.
  const words = [...(nodeOptions ?? '').split(/\s+/).filter(Boolean), ...execArgv]
  /** @type {number | null} */
  let mb = null
  for (const word of words) {
    const m = /^--max[-_]old[-_]space[-_]size([-_]percentage)?=(.*)$/.exec(word)
    // A share of the machine's memory (Node 22 and 24): the megabytes are V8's to work out.
    if (m) mb = m[1] ? null : Number(m[2]) > 0 ? Number(m[2]) : mb
  }
  return mb === null ? null : mb * MB
}
