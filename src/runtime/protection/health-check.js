// The app's own health check, run every interval on an unref'd timer and never two at once. A check that returns
// false, throws or rejects is a failure; the result goes to `onResult`, which decides what it means for the requests.

export class HealthCheck {
  #check
  #onResult
  #pending = false
  /** @type {ReturnType<typeof setInterval> | null} */
  #timer

  /**
   * Runs the check now, then every `every` ms.
   * @param {() => unknown} check
   * @param {number} every ms
   * @param {(ok: boolean) => void} onResult
   */
  constructor (check, every, onResult) {
    this.#check = check
    this.#onResult = onResult
    this.#timer = setInterval(() => this.#run(), every)
    this.#timer.unref()
    this.#run()
  }

  stop () {
    if (this.#timer !== null) clearInterval(this.#timer)
    this.#timer = null
  }

  #run () {
    if (this.#pending) return
    this.#pending = true
    /** @param {boolean} ok */
    const settle = (ok) => {
      this.#pending = false
      this.#onResult(ok)
    }
    try {
      Promise.resolve(this.#check()).then((r) => settle(r !== false), () => settle(false))
    } catch {
      settle(false)
    }
  }
}
