import { appendFileSync } from 'node:fs'

/**
 * The probe's record of one process or thread: newline-delimited JSON appended to a file in the run directory.
 * Events are kept as objects and written synchronously once a second (a few kB, well under a millisecond), on demand,
 * and when the process exits — so a target that is killed loses at most the last second, and one that exits loses
 * nothing. They are serialised at the flush, not as they come: JSON.stringify of one sample in a busy server costs
 * ~25 µs (its code and the sample are out of the cache by the next sample), a hundred in a row ~3 µs each.
 * So an event must not be changed after it is written.
 */
export class EventLog {
  /** @param {string} file */
  constructor (file) {
    this.file = file
    /** @type {import('../probe-protocol.js').EventRecord[]} */
    this.events = []
    this.failed = false
  }

  /** @param {import('../probe-protocol.js').EventRecord} event */
  write (event) {
    if (!this.failed) this.events.push(event)
  }

  flush () {
    const events = this.events
    if (events.length === 0 || this.failed) return
    this.events = []
    let text = ''
    for (const event of events) {
      try {
        text += JSON.stringify(event) + '\n'
      } catch {}
    }
    try {
      appendFileSync(this.file, text)
    } catch {
      // The run directory vanished or the disk is full: stop recording rather than fail the target.
      this.failed = true
    }
  }
}
