import { formatCount } from './format.js'

/**
 * A one-line progress bar on a terminal's stderr, fed by the per-second bins the load threads report.
 * Does nothing when the stream is not a TTY.
 */
export class Progress {
  /**
   * @param {NodeJS.WriteStream} stream
   * @param {{ duration: number, amount: number, warmup: number }} plan seconds; amount 0 when bounded by duration
   */
  constructor (stream, plan) {
    this.stream = stream
    this.plan = plan
    this.enabled = Boolean(stream.isTTY)
    this.started = Date.now()
    this.completed = 0
    this.errors = 0
    /** @type {Map<number, number>} requests per second index, summed over threads */
    this.perSecond = new Map()
    this.firstBin = Infinity
    /** @type {number | undefined} the latest second heard of */
    this.lastKey = undefined
    /** @type {NodeJS.Timeout | null} */
    this.timer = null
  }

  start () {
    if (!this.enabled) return
    this.started = Date.now()
    this.timer = setInterval(() => this.render(), 200)
    this.timer.unref()
  }

  /** @param {import('../load/recorder.js').Bin} bin */
  onBin (bin) {
    this.completed += bin.requests
    this.errors += bin.errors
    this.firstBin = Math.min(this.firstBin, bin.start)
    const key = Math.round((bin.start - this.firstBin) / 1000)
    this.perSecond.set(key, (this.perSecond.get(key) ?? 0) + (bin.requests * 1000) / Math.max(1, bin.duration))
    this.lastKey = key
  }

  render () {
    const width = 24
    const elapsed = (Date.now() - this.started) / 1000
    const { duration, amount, warmup } = this.plan
    const warming = elapsed < warmup
    const fraction = amount > 0
      ? this.completed / amount
      : Number.isFinite(duration) ? Math.max(0, elapsed - warmup) / duration : 0
    const filled = Math.round(Math.min(1, fraction) * width)
    const rate = this.lastKey === undefined ? 0 : this.perSecond.get(this.lastKey) ?? 0
    const where = amount > 0
      ? `${formatCount(this.completed)}/${formatCount(amount)}`
      : `${Math.min(duration, Math.max(0, elapsed - warmup)).toFixed(0)}/${duration} s`
    const text = warming
      ? `warming up ${elapsed.toFixed(0)}/${warmup} s`
      : `${'█'.repeat(filled)}${'░'.repeat(width - filled)} ${where} · ${formatCount(rate)} req/s · ${formatCount(this.errors)} errors`
    this.stream.write(`\r\x1b[K${text}`)
  }

  stop () {
    if (this.timer) clearInterval(this.timer)
    if (this.enabled) this.stream.write('\r\x1b[K')
  }
}
