// One capture's worker thread, seen from the capturing thread: start it, tell it to stop (or hand it the profiles),
// hear where the files went. The worker is unref'd: a capture never keeps the app's process alive.
import { Worker } from 'node:worker_threads'

const WORKER = new URL('./profile-worker.js', import.meta.url)

/**
 * @typedef {{ files: string[], startedAt: number, duration: number }} Written
 */

export class ProfileJob {
  /** @param {import('./profile-worker.js').JobData} data */
  constructor (data) {
    const started = deferred()
    /** @type {ReturnType<typeof deferred<Written>>} */
    const done = deferred()
    /** resolves when the directory is checked and, attached, the profilers run */
    this.started = started.promise
    /** resolves when the files are written */
    this.done = done.promise
    /** @param {Error} err */
    const fail = (err) => { started.reject(err); done.reject(err) }
    // Whoever awaits one of them hears the failure; the other must not count as unhandled.
    this.started.catch(() => {})
    this.done.catch(() => {})
    // No execArgv: the app's preloads and loaders have no business in this thread.
    this.worker = new Worker(WORKER, { workerData: data, execArgv: [] })
    this.worker.on('message', (/** @type {any} */ msg) => {
      if (msg?.type === 'started') started.resolve(undefined)
      else if (msg?.type === 'done') done.resolve({ files: msg.files, startedAt: msg.startedAt, duration: msg.duration })
      else if (msg?.type === 'failed') fail(new Error(String(msg.error)))
    })
    this.worker.on('error', (err) => fail(err))
    this.worker.on('exit', (code) => fail(new Error(`the profiling worker exited (code ${code}) before the files were written`)))
    // After the listeners: adding a 'message' listener refs the worker again.
    this.worker.unref()
  }

  /** Attached: stop the profilers now and write. */
  stop () {
    this.worker.postMessage({ type: 'stop' })
  }

  /**
   * Not attached: the profiles this thread took, to be written.
   * @param {Omit<import('./profile-worker.js').JobMessage & { type: 'profiles' }, 'type'>} profiles
   */
  send (profiles) {
    this.worker.postMessage({ type: 'profiles', ...profiles })
  }

  /** Ends the worker, whatever it was doing. */
  end () {
    this.worker.terminate().catch(() => {})
  }
}

/**
 * @template [T=void]
 * @returns {{ promise: Promise<T>, resolve: (value: T) => void, reject: (err: Error) => void }}
 */
function deferred () {
  /** @type {(value: T) => void} */
  let settle = () => {}
  /** @type {(err: Error) => void} */
  let fail = () => {}
  const promise = /** @type {Promise<T>} */ (new Promise((resolve, reject) => { settle = resolve; fail = reject }))
  return { promise, resolve: settle, reject: fail }
}
