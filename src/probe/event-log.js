import { appendFileSync } from 'node:fs'

/**
 * The probe's record of one process or thread: newline-delimited JSON appended to a file in the run directory.
 * Lines are buffered and written synchronously once a second (a few kB, well under a millisecond), on demand, and when
 * the process exits — so a target that is killed loses at most the last second, and one that exits loses nothing.
 */
export class EventLog {
  /** @param {string} file */
  constructor (file) {
    this.file = file
    /** @type {string[]} */
    this.lines = []
    this.failed = false
  }

  /** @param {object} event */
  write (event) {
    if (this.failed) return
    try {
      this.lines.push(JSON.stringify(event))
    } catch {}
  }

  flush () {
    if (this.lines.length === 0 || this.failed) return
    const text = this.lines.join('\n') + '\n'
    this.lines = []
    try {
      appendFileSync(this.file, text)
    } catch {
      // The run directory vanished or the disk is full: stop recording rather than fail the target.
      this.failed = true
    }
  }
}
