/**
 * An error the user can fix: bad flags, bad input files, a target that cannot be reached.
 * The CLI prints its message on one line and exits with `exitCode` — never a stack trace.
 */
export class UsageError extends Error {
  /**
   * @param {string} message
   * @param {number} [exitCode]
   */
  constructor (message, exitCode = 2) {
    super(message)
    this.name = 'UsageError'
    this.exitCode = exitCode
  }
}

/**
 * The target server misbehaved (crashed, exited early, never listened). What was collected is still reported.
 */
export class TargetError extends Error {
  /**
   * @param {string} message
   * @param {{ exitCode?: number, stderr?: string[] }} [details]
   */
  constructor (message, details = {}) {
    super(message)
    this.name = 'TargetError'
    this.exitCode = details.exitCode ?? 4
    this.stderr = details.stderr ?? []
  }
}
