// The load window across the threads of one process. A worker thread busy from its first task can read hotpath's
// channel only after the load ends, or not connect to it before then at all: hotpath, told by every probe it knew that
// the window had closed, stopped the target while that worker was still writing its profile — the pool's hot code was
// lost (Node handles a port's queued messages in a batch, and the load keeps queueing more). So the main
// thread closes the window of its worker threads itself, and says its own is closed only once theirs are. The threads
// of a process speak over a BroadcastChannel, which needs no connection and is there from a thread's first line.
import process from 'node:process'
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads'

const NAME = 'hotpath:load-window'
/**
 * ms the main thread waits for its worker threads to close their windows: a worker works off what the load queued for
 * it first (a thousand tasks of a few ms), and one that never returns to its event loop must not hold the run up.
 */
export const WAIT_MS = 5000

/**
 * @typedef {{ type: 'open' | 'closed', threadId: number } | { type: 'close' }} WindowMessage
 */

export class ThreadWindows {
  /** @type {Set<number>} worker threads whose window is open (main thread only) */
  open = new Set()
  /** @type {(() => void) | null} resolves the main thread's wait once no window is open */
  settled = null
  closing = false

  /**
   * @param {() => void} onClose a worker thread's: the main thread closed the window, close this thread's
   */
  constructor (onClose) {
    /** @type {BroadcastChannel | null} */
    this.channel = null
    try {
      const channel = new BroadcastChannel(NAME)
      channel.onmessage = (event) => this.onMessage(/** @type {WindowMessage} */ (event.data), onClose)
      // It must never keep a thread alive.
      channel.unref()
      this.channel = channel
    } catch {}
    if (isMainThread) {
      // A thread the app ends (a pool that shrinks) closes no window: its end is its answer.
      process.on('worker', (worker) => worker.once('exit', () => this.forget(worker.threadId)))
    }
  }

  /**
   * @param {WindowMessage} message
   * @param {() => void} onClose
   */
  onMessage (message, onClose) {
    try {
      if (message?.type === 'close') {
        if (!isMainThread) onClose()
      } else if (isMainThread && message?.type === 'open') {
        this.open.add(message.threadId)
        // A worker made just before the window closed opens its own after the word to close it went out.
        if (this.closing) this.post({ type: 'close' })
      } else if (isMainThread && message?.type === 'closed') {
        this.forget(message.threadId)
      }
    } catch {}
  }

  /** @param {number} id */
  forget (id) {
    if (this.open.delete(id) && this.open.size === 0) this.settled?.()
  }

  /** @param {WindowMessage} message */
  post (message) {
    try {
      this.channel?.postMessage(message)
    } catch {}
  }

  /** The window opened (the main thread's, or a worker thread's that tells the main thread). */
  opened () {
    this.closing = false
    if (!isMainThread) this.post({ type: 'open', threadId })
  }

  /**
   * The main thread tells its worker threads the window closed; the promise settles when each of them has closed its
   * own (profiles written), or has ended, or after WAIT_MS — with the threads still open then, whose profiles are not
   * written. In a worker thread, nothing to wait for.
   * @returns {Promise<number[]>}
   */
  close () {
    if (!isMainThread) return Promise.resolve([])
    this.closing = true
    this.post({ type: 'close' })
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.settled = null
        resolve([...this.open])
      }
      const timer = setTimeout(done, WAIT_MS)
      timer.unref()
      this.settled = done
      if (this.open.size === 0) done()
    })
  }

  /** A worker thread's window closed: its profiles and events are written. */
  closed () {
    if (!isMainThread) this.post({ type: 'closed', threadId })
  }
}
