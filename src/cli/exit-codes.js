// The exit codes every command keeps (docs/exit-codes.md): CI pipelines act on them, so one place decides them.

/** The load did not measure the server: no connection, no HTTP, most responses not 2xx, an --on-port command failed. */
export const LOAD_FAILED = 3
/** The target failed: it crashed, exited early, never listened, or serving processes died during the load. */
export const TARGET_FAILED = 4

/**
 * @param {NodeJS.Signals} signal the signal that stopped the run
 * @returns {number} 130 for Ctrl-C (SIGINT), 143 for SIGTERM, as shells report them
 */
export function signalExit (signal) {
  return signal === 'SIGTERM' ? 143 : 130
}

/**
 * The code of a run that did not measure what was asked, or 0: its failure first, then an interruption.
 * @param {{ failure: { category: 'target-failed' | 'load-failed' } | null, interruptedBy: NodeJS.Signals | null }} outcome
 * @returns {number}
 */
export function outcomeExit ({ failure, interruptedBy }) {
  if (failure?.category === 'target-failed') return TARGET_FAILED
  if (failure?.category === 'load-failed') return LOAD_FAILED
  if (interruptedBy !== null) return signalExit(interruptedBy)
  return 0
}
