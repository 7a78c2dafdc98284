/** @typedef {import('../../sampling/listeners.js').ListenerGrowth} ListenerGrowth */

/** Checks in which the count must have risen after its baseline for the growth to count as a leak. */
export const RISES = 3

/**
 * Judges listener growth over time, after start-up: a framework adds dozens of listeners to one emitter while it boots
 * (Fastify's avvio puts every plugin's `preReady` on its `Boot`), once, and a large count that stays put is a design,
 * not a leak. A leak — a listener added per request — keeps adding. So, from the watcher's snapshots taken every
 * check: counts seen before `settle` ms are start-up, and only fix the baseline; after it, an emitter kind and event
 * is growing once its count (most listeners on one emitter, or emitters that reached the threshold) has risen above
 * the previous check's in RISES checks. Nothing here looks at names.
 */
export class ListenerGrowthJudge {
  #watcher
  #settleAt
  /** @type {Map<string, { count: number, emitters: number, rises: number }>} */
  #seen = new Map()
  /** @type {ListenerGrowth[]} */
  #growing = []

  /**
   * @param {import('../../sampling/listeners.js').ListenerWatcher} watcher
   * @param {number} settle ms from now during which growth is start-up
   */
  constructor (watcher, settle) {
    this.#watcher = watcher
    this.#settleAt = Date.now() + settle
  }

  /** One check: reads the watcher and updates each entry's rises. */
  check () {
    const settled = Date.now() >= this.#settleAt
    /** @type {ListenerGrowth[]} */
    const growing = []
    for (const g of this.#watcher.snapshot()) {
      const key = g.emitter + '\0' + g.event
      const seen = this.#seen.get(key)
      if (seen === undefined) {
        this.#seen.set(key, { count: g.count, emitters: g.emitters, rises: 0 })
        continue
      }
      if (settled && (g.count > seen.count || g.emitters > seen.emitters)) seen.rises++
      seen.count = g.count
      seen.emitters = g.emitters
      if (seen.rises >= RISES) growing.push(g)
    }
    this.#growing = growing
  }

  /** The entries judged growing at the last check, most listeners first. @returns {ListenerGrowth[]} */
  growing () {
    return this.#growing
  }
}
