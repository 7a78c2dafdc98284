import { performance } from 'node:perf_hooks'
import { Connection } from './connection.js'
import { OpenLoop } from './open-loop.js'
import { COALESCE_ADJUST_MS, ReadCoalescer } from './read-coalescer.js'
import { Recorder } from './recorder.js'
import { RequestCycle } from './requests.js'

/**
 * What one thread runs. Serialisable, so the same plan runs in the main thread or in a worker.
 * @typedef {object} Plan
 * @property {import('./target.js').Target} target
 * @property {import('./requests.js').WireRequest[]} requests
 * @property {number} connections
 * @property {number} pipelining
 * @property {number} rate requests per second for this thread; 0 for a closed loop
 * @property {number} amount requests to complete in this thread; 0 for no limit
 * @property {number} duration seconds of measurement; Infinity when `amount` bounds the run
 * @property {number} warmup seconds of unrecorded load before measuring
 * @property {number} timeout seconds a request may wait for its response
 * @property {number} startAt epoch ms at which every thread starts, so their seconds line up
 * @property {boolean} busyPoll poll without sleeping while responses keep arriving (see Runner.keepAwake)
 * @property {boolean} coalesce nap between reads to read responses in batches (see read-coalescer.js); off unless asked
 *   for, since a response that arrives during a nap is timed late
 */

/** @returns {number} epoch ms with sub-millisecond precision */
const epochNow = () => performance.timeOrigin + performance.now()

const READ_BUFFER_SIZE = 64 * 1024
/** ms without a response after which a busy-polling generator goes back to sleeping */
const BUSY_POLL_WINDOW = 1

/**
 * Drives the connections of one thread and records what they see.
 *
 * Closed loop (no rate): every connection keeps `pipelining` requests in flight; the responses framed in one read are
 * replaced by one write of as many requests.
 *
 * Open loop (rate): requests go out when the schedule (open-loop.js) says they are due, and their latency is measured
 * from then. The uncorrected latency, from the actual send, is recorded beside it, and so is each send's lateness
 * (actual − intended send time): whatever the generator adds to the corrected latency.
 */
export class Runner {
  /**
   * @param {Plan} plan
   * @param {{ onBin?: (bin: import('./recorder.js').Bin) => void }} [hooks]
   */
  constructor (plan, hooks = {}) {
    this.plan = plan
    this.target = plan.target
    this.pipelining = plan.pipelining
    this.cycle = new RequestCycle(plan.requests, plan.pipelining)
    this.readBuffer = Buffer.allocUnsafe(READ_BUFFER_SIZE)
    this.rateMode = plan.rate > 0
    this.amount = plan.amount
    this.recorder = new Recorder({ rateMode: this.rateMode })
    this.hooks = hooks
    this.running = false
    this.recording = false
    /** perf-clock ms; responses to requests sent before it (during warm-up) are not recorded */
    this.measureStart = Infinity
    /** requests issued since measuring (or warm-up) began: the rate schedule's index and the amount budget */
    this.issued = 0
    /** under --rate, requests lost with a closed connection; they count toward --amount since time moved on */
    this.abandoned = 0
    this.progress = { completed: 0, at: 0 }
    /** @type {Connection[]} */
    this.connections = []
    /** @type {NodeJS.Timeout[]} */
    this.timers = []
    /** the schedule of an open loop; null for a closed one */
    this.openLoop = this.rateMode ? new OpenLoop(this, plan.rate) : null
    /** @type {(shard: import('./recorder.js').Shard) => void} */
    this.resolve = () => {}
    this.busyPoll = plan.busyPoll
    /**
     * Naps between reads so that one wake-up reads many responses: cheaper, but every response that arrives during a
     * nap is timed late, so only when asked (--coalesce). A busy-polling thread never sleeps at all.
     */
    this.coalescer = plan.coalesce && !plan.busyPoll ? new ReadCoalescer() : null
    this.lastRead = 0
    this.spinning = false
    /** epoch ms the load began (sent its first requests), 0 until then */
    this.began = 0
    this.ended = false
    this.spin = () => {
      if (this.running && performance.now() - this.lastRead < BUSY_POLL_WINDOW) setImmediate(this.spin)
      else this.spinning = false
    }
  }

  /**
   * @returns {Promise<import('./recorder.js').Shard>}
   */
  run () {
    return new Promise((resolve) => {
      this.resolve = resolve
      // The open loop starts once its pacer's thread runs, or its first sends would wait for that thread's start.
      Promise.resolve(this.openLoop?.pacer.ready).then(() => {
        if (this.ended) return
        const wait = Math.max(0, this.plan.startAt - epochNow())
        this.timers.push(setTimeout(() => this.begin(), wait))
      })
    })
  }

  begin () {
    this.began = epochNow()
    this.running = true
    const now = performance.now()
    if (this.openLoop) this.openLoop.t0 = now
    this.progress = { completed: 0, at: now }
    for (let i = 0; i < this.plan.connections; i++) this.connections.push(new Connection(this, i))
    const timeoutMs = this.plan.timeout * 1000
    this.timers.push(setInterval(() => this.watchdog(timeoutMs), Math.max(10, Math.min(1000, timeoutMs / 4))))
    const coalescer = this.coalescer
    if (coalescer) this.timers.push(setInterval(() => coalescer.adjust(), COALESCE_ADJUST_MS))
    if (this.plan.warmup > 0) {
      this.timers.push(setTimeout(() => this.startMeasuring(), this.plan.warmup * 1000))
    } else {
      this.startMeasuring()
    }
    for (const conn of this.connections) conn.open()
    this.openLoop?.tick()
  }

  startMeasuring () {
    const now = performance.now()
    this.recorder.reset(epochNow())
    this.recording = true
    this.measureStart = now
    this.issued = 0
    this.abandoned = 0
    if (this.openLoop) this.openLoop.t0 = now
    this.timers.push(setInterval(() => {
      const bin = this.recorder.roll(epochNow())
      this.hooks.onBin?.(bin)
    }, 1000))
    if (Number.isFinite(this.plan.duration)) {
      this.timers.push(setTimeout(() => this.finish(), this.plan.duration * 1000))
    }
    // The warm-up may have used some of the connections' room; a fresh schedule needs every idle one.
    for (const conn of this.connections) this.refill(conn)
  }

  /** Intended send time of the next request in the open-loop schedule; advances the schedule. */
  nextIntended () {
    return /** @type {OpenLoop} */ (this.openLoop).nextIntended()
  }

  /**
   * Gives a connection as many requests as it may send now.
   * @param {Connection} conn
   * @param {number} [now] perf-clock ms, when the caller has just read the clock
   */
  refill (conn, now = performance.now()) {
    if (!this.running) return
    let k = conn.capacity
    if (k === 0) return
    if (this.amount > 0) {
      const left = this.amount - this.issued
      if (left <= 0) return
      if (left < k) k = left
    }
    if (this.openLoop !== null) {
      this.openLoop.fill(conn, k, now)
      return
    }
    this.issued += k
    conn.send(k, now)
  }

  /**
   * --busy-poll: after a read, keep the event loop polling without sleeping (a pending setImmediate makes libuv poll
   * with a zero timeout) for as long as responses keep coming. On one machine, every time the generator sleeps, the
   * server's core pays to wake it (the loopback delivers in the sender's softirq): about 12–20% of a Node server's
   * throughput at -c 100, measured in bench/load.js. Staying awake costs the generator its whole core instead, so it
   * is an option, not the default; with the generator on another machine the server pays nothing to wake it.
   * @param {number} now
   */
  keepAwake (now) {
    this.lastRead = now
    if (this.spinning) return
    this.spinning = true
    setImmediate(this.spin)
  }

  onResponse () {
    if (this.amount > 0 && this.recorder.completed + this.abandoned >= this.amount) this.finish()
  }

  /**
   * @param {string} kind
   * @param {{ timeout?: boolean, reset?: boolean }} [flags]
   */
  fail (kind, flags) {
    if (this.recording) this.recorder.error(kind, flags)
  }

  /**
   * @param {Connection} conn
   * @param {number} lost requests that were in flight and will never be answered
   * @param {boolean} wasConnected
   */
  onConnectionClosed (conn, lost, wasConnected) {
    if (!this.running) return
    if (lost > 0) {
      // A closed loop sends lost requests again (the budget returns); an open loop has moved on in time.
      if (this.rateMode) this.abandoned += lost
      else this.issued = Math.max(0, this.issued - lost)
    }
    if (this.recording) this.recorder.reconnects++
    conn.failedOpens = wasConnected ? 0 : conn.failedOpens + 1
    // Reopen at once after a close; back off when the server refuses, so a dead port does not spin the CPU.
    const delay = conn.failedOpens === 0 ? 0 : Math.min(1000, 25 * 2 ** conn.failedOpens)
    // Unref'd: finish() may come first, and a pending reopen must not hold the process open.
    setTimeout(() => {
      if (this.running) conn.open()
    }, delay).unref()
    if (this.amount > 0) this.onResponse()
  }

  /** @param {number} timeoutMs */
  watchdog (timeoutMs) {
    const now = performance.now()
    for (const conn of this.connections) conn.checkTimeout(now, timeoutMs)
    // A run bounded only by --amount must still end when the server stops answering altogether.
    if (this.recorder.completed !== this.progress.completed) {
      this.progress = { completed: this.recorder.completed, at: now }
    } else if (!Number.isFinite(this.plan.duration) && now - this.progress.at > Math.max(3 * timeoutMs, 10_000)) {
      this.fail('no response for too long; run stopped')
      this.finish()
    }
  }

  /** Ends the run now (duration reached, amount done, or aborted) and resolves with what was measured. */
  finish () {
    if (!this.running) {
      // Stopped while waiting for the start instant (--start-at): nothing was sent, and nothing is left to wait for.
      if (this.began === 0 && !this.ended) {
        this.ended = true
        for (const t of this.timers) clearTimeout(t)
        this.openLoop?.stop()
        this.resolve(this.recorder.finish(epochNow()))
      }
      return
    }
    this.ended = true
    const now = performance.now()
    if (this.openLoop !== null && this.recording) this.recorder.missed = this.openLoop.missed(now)
    this.running = false
    for (const t of this.timers) clearTimeout(t)
    this.openLoop?.stop()
    const shard = this.recorder.finish(epochNow())
    shard.maxNapUs = Math.round((this.coalescer?.maxNapMs ?? 0) * 1000)
    shard.began = this.began
    this.recording = false
    for (const conn of this.connections) conn.socket?.destroy()
    this.resolve(shard)
  }
}
