// The probe composes the samplers, the wait tracer's duty cycle and the event log of one thread: they share its
// clock and its sample timer, so it stays one module (the load window's profiles are in load-profiles.js).
import { join } from 'node:path'
import cluster from 'node:cluster'
import v8 from 'node:v8'
import { performance } from 'node:perf_hooks'
import { isMainThread, threadId } from 'node:worker_threads'
import { Sampler } from '../sampling/sampler.js'
import { ListenerWatcher } from '../sampling/listeners.js'
import { AgentWatcher } from '../sampling/agents.js'
import { OutgoingWatcher } from '../sampling/outgoing.js'
import { SocketWatcher } from '../sampling/sockets.js'
import { WaitTracer } from '../sampling/wait-tracer.js'
import { PoolWatcher } from '../sampling/pools.js'
import { DriverOps } from '../sampling/driver-ops.js'
import { EnvWatcher } from '../sampling/env-reads.js'
import { RouteTimer } from '../sampling/route-timer.js'
import { RequestTracker, isHttpServer } from './request-tracker.js'
import { EventLog } from './event-log.js'
import { LoadProfiles } from './load-profiles.js'
import { ThreadWindows, WAIT_MS } from './thread-windows.js'
import { TransformedScripts } from './transformed-scripts.js'
import { RuntimeHooks } from './runtime-hooks.js'
import { heapAfterFullGc } from '../profile/capture.js'
import { memoryGroup } from '../memory-cgroup.js'
import { oldGenerationLimit } from './old-generation-limit.js'
import { COMMAND, MESSAGE, RECORD } from '../probe-protocol.js'

/** A sample's GC tally when its thread's observer saw none. */
const NO_GC = Object.freeze({ count: 0, duration: 0 })

/**
 * The wait tracer costs every promise and callback of the process while it is on (async_hooks), so the probe spends
 * that where the thread has CPU to spare: all the time while it is at most this busy (a server that waits idles)…
 */
const TRACE_ALWAYS_BELOW = 0.3
/** …a fifth of the time up to this busy: the `busy` threshold above which no verdict blames waits (rules.js)… */
const TRACE_SOME_BELOW = 0.7
const SOME = 0.2
/** …and never above it: a busy server computes, and would pay for the hooks in throughput. Decided every slot of this
 * many intervals. */
const SLOT_INTERVALS = 10
/** Traced requests that waited less than this part of their time on the server… */
const WAITS_WORTH = 0.1
/** …are traced in no more than this share of the slots. */
const RARELY = 0.02
/** Runnable this share of a sample or more: the thread is busy, whatever share of a CPU it was given… */
const SATURATED = 0.95
/** …unless it ran less than this share of it: then the machine's other processes took the cores. */
const STARVED_BELOW = 0.4
/**
 * A thread runnable all the time that ran less than TRACE_SOME_BELOW of it, whose requests stay in flight this many
 * times longer than their CPU (by Little's law, requests in flight ÷ the share of the time the thread ran), has time
 * its requests spend elsewhere than on its CPU: a RealWorld backend on Sequelize, 120 queries a request, ran 50% of
 * the time and queued for a CPU 45% on a 2-core machine that also ran its MariaDB; its requests took 1.85 s for 206 ms
 * of CPU, and none was traced.
 */
const IN_FLIGHT_OVER_CPU = 4
/** A request being traced is dropped this many times its expected time on the server after tracing pauses… */
const GRACE_REQUESTS = 3
/** …and never before this many ms: a request that never ends must not keep every promise of the process paying. */
const GRACE_MS = 2000
/**
 * The sampler's pace while the thread is busy — on a CPU or queued for one at least TRACE_SOME_BELOW of the time: a
 * sample every tenth interval (100 ms at the default 10 ms). That is as often as its CPU and its own time are read
 * anyway, so the first reading with time to spare puts the cadence back. A busy thread has no time to spare for its
 * samples: each cost ~100 µs of its core on a 2-core VM, caches cold, which a saturated server held to half a core paid
 * in throughput, 100 of them a second; and what a sample says of a busy loop changes little from 10 ms to the next.
 */
const BUSY_PACE = 10
/** ms traceAllStop follows the work the traced requests left pending, after the load stopped */
const TRACE_LINGER_MS = 1000
/** ms the probe lets requests in flight finish after the load stops, before it reads what the heap keeps… */
const SETTLE_MS = 100
/** …and at most this long, while handlers of requests the load abandoned still run (polled every SETTLE_MS) */
const SETTLE_MAX_MS = 3000
/** ms of a flush counted as the probe's own work at most: one writes a second's samples, a few ms at most */
const FLUSH_CAP_MS = 20
/** ms into the load the environment's reads are watched: clients made for the first requests read their settings */
const ENV_WATCH_MS = 1000

/**
 * @typedef {object} ProbeOptions
 * @property {string} runDir where this process/thread writes its events and profiles
 * @property {number} interval ms between runtime samples
 * @property {boolean} [runtime] sample the runtime and watch requests, listeners and agents (default true); without,
 *   the probe only records profiles, and costs the target nothing between them
 * @property {number} profileInterval µs between CPU profile samples; 0 turns CPU profiling off
 * @property {{ send: (message: import('../probe-protocol.js').ProbeMessage) => void }} channel
 */

/** @typedef {{ stop: () => Promise<object>, stopSync?: () => object | null }} ProfileHandle */

/**
 * How the probe samples a thread's runtime every `interval` ms (the sample handler aside): what bench:profiler weighs
 * too.
 * @param {number} interval
 * @returns {import('../sampling/sampler.js').SamplerOptions}
 */
export function samplerOptions (interval) {
  return {
    interval,
    // Node's delay monitor ticks every `resolution` ms, waking an idle loop each time: at 1 ms that cost a half-loaded
    // hello server ~10% more CPU per request — and the rules judge delays of 100 ms and more. At the default 10 ms
    // interval the resolution is the interval: the sampler's own timer is the tick, and no monitor runs (Sampler.start).
    resolution: Math.min(10, interval),
    // The main thread's GCs come from V8's trace events over the load window (see startGcTrace), which cost nothing
    // per GC; trace events are per process, so worker threads keep the observer.
    gc: !isMainThread,
    // The process's CPU every 100 ms at the default interval: a getrusage() was ~30 µs of each sample in a busy
    // server, and the analysis judges CPU over the whole load (run-data.js spreads each read over its samples).
    cpuEvery: Math.max(1, Math.round(100 / interval)),
    // The rules judge delays of a millisecond and more: below, the percentiles need not be walked out of the histogram.
    exactDelay: false
  }
}

/**
 * The doctor's probe in one process or thread: samples the runtime from start to exit, records per-port request
 * stats, listener growth, agent pools and the environment variables the app reads, and CPU-profiles exactly the load
 * window that hotpath announces over the channel (load-profiles.js; doctor samples the heap after it). Everything is
 * written to this thread's event log in the run directory.
 */
export class Probe {
  /** @param {ProbeOptions} options */
  constructor (options) {
    this.options = options
    this.tid = isMainThread ? 0 : threadId
    this.name = `${process.pid}-${this.tid}`
    this.log = new EventLog(join(options.runDir, `events-${this.name}.ndjson`))
    this.requests = new RequestTracker()
    /** times each request of the loaded port by route, in a window that observes real traffic (no load of hotpath's) */
    this.routes = new RouteTimer()
    this.listeners = new ListenerWatcher()
    this.agents = new AgentWatcher()
    this.outgoing = new OutgoingWatcher()
    this.sockets = new SocketWatcher()
    this.waits = new WaitTracer()
    // What costs the thread while on — the tracer's hooks, the CPU profiler — is logged as it goes on and off: the
    // analysis takes the server's own figures (CPU per request, utilisation, delay) from the part of the window where
    // neither ran (src/analysis/signals-quiet.js).
    this.waits.onToggle = (on) => this.log.write({ type: RECORD.INSTRUMENT, what: 'trace', on, time: Date.now() })
    this.sockets.trace = this.waits.socketHooks
    this.drivers = new DriverOps()
    this.drivers.onOp = (op) => this.sockets.named(op)
    this.sockets.drivers = this.drivers
    this.pools = new PoolWatcher()
    this.env = new EnvWatcher()
    /** @type {NodeJS.Timeout | null} */
    this.envTimer = null
    /** the thread's recent business, 0..1, smoothed over ~200 ms of samples: arms the wait tracer */
    this.busy = 1
    /** the share of the recent time the thread ran on a CPU, smoothed alike */
    this.ran = 1
    /** requests of the loaded port in flight at the recent counts, and finished per ms, smoothed alike: by Little's law
     * their ratio is a request's time on the server */
    this.inflight = 0
    this.finishing = 0
    /** requests the tracer had picked up when it was last armed: an armed slot stays armed until it picks one up */
    this.pickedAt = -1
    /** requests the tracer had picked up when the window opened */
    this.tracedBefore = 0
    /** intervals of the current wait-tracing slot so far */
    this.slot = 0
    this.credit = 0
    /** @type {number | null} the port hotpath loads, when it said */
    this.loadedPort = null
    /** the window watches the traffic the server gets, with no load of hotpath's: its requests are timed by route */
    this.observing = false
    /**
     * @param {any} res
     * @param {number} port
     */
    this.onRequest = (res, port) => this.waits.onRequest(res, this.loadedPort === null || port === this.loadedPort)
    this.sampler = new Sampler({ ...samplerOptions(options.interval), onSample: (sample) => this.writeSample(sample) })
    this.loading = false
    /** epoch ms the load window began, as this probe saw it */
    this.loadStartedAt = 0
    /** @type {{ start?: number, end?: number }} bytes of heap after the full collections around the load */
    this.settled = {}
    this.profiles = new LoadProfiles(options, this.name)
    this.profiles.onToggle = (on) => this.log.write({ type: RECORD.INSTRUMENT, what: 'profile', on, time: Date.now() })
    /** @type {{ from: number, to: number } | null} epoch ms of the part of the load window that is looked into (the CPU
     * profile's slice): the wait tracer is armed there only, so that the rest measures the server alone */
    this.look = null
    this.scripts = new TransformedScripts()
    // What the runtime holds before the app's code runs: what the app replaces of it is read as the load begins.
    this.runtimeHooks = options.runtime !== false ? new RuntimeHooks() : null
    /** whether the scripts were copied once: the heap phases' snapshots copy them only if not (each copy makes a few
     * hundred objects of the debugger's, which a snapshot after it would count as grown) */
    this.scriptsRecorded = false
    /** @type {Promise<object> | null} the window's closing, once it began: what the 'stopped' ack carries */
    this.closing = null
    // A worker thread's window is closed by its main thread too, which waits for it (see thread-windows.js).
    this.threads = new ThreadWindows(() => { if (this.loading) this.closing = this.closeWindow() })
    /** @type {NodeJS.Timeout | null} */
    this.flushTimer = null
    this.lastListeners = ''
    this.lastAgents = ''
    this.lastOutgoing = ''
    this.lastSockets = ''
    this.lastPools = ''
  }

  /**
   * @param {import('../sampling/sampler.js').Sample} sample
   * @param {boolean} [last] the last sample of a window: counts exactly what the cadence would only estimate
   */
  writeSample (sample, last = false) {
    // The sample itself becomes the line: a spread copy of it cost ~10 µs a sample in a busy server.
    const line = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (sample))
    line.type = RECORD.SAMPLE
    // Intervals, not samples, time the cadences below: the sampler's pace stretches a sample over several.
    const intervals = Math.max(1, Math.round(sample.interval / this.options.interval))
    const requests = this.requests.take(last, intervals)
    line.requests = requests
    // The main thread's GCs come from the trace: its observer's tallies are all zero and not worth writing.
    if (sample.gc.count === 0) line.gc = NO_GC
    this.log.write(/** @type {import('../probe-protocol.js').EventRecord} */ (line))
    // Every reading of the thread's time sets the pace, with requests or without: a thread gone idle between a load's
    // bursts gets its usual cadence back at once (the wait tracer below skips samples that served nothing).
    const thread = sample.thread
    if (this.loading && thread !== undefined && thread.span > 0) this.paceFor(thread)
    if (this.loading && this.options.runtime !== false) this.armWaits(sample, requests, intervals)
  }

  /**
   * Samples less often while the thread's own time says it is busy, at the usual cadence again from the first reading
   * that says it is not (readings come every 100 ms at either pace). Runnable time, not CPU time: a saturated server
   * held to half a core runs half the time and queues the other half, and has no more time to spare than on a core.
   * @param {{ cpu: number, wait: number, span: number }} thread a reading of the thread's own time
   */
  paceFor (thread) {
    this.sampler.pace = thread.cpu + thread.wait >= TRACE_SOME_BELOW * thread.span ? BUSY_PACE : 1
  }

  /**
   * Traces waits in slots of SLOT_INTERVALS intervals, more of them the less busy the thread: a server that waits is
   * mostly idle, and one that computes needs no wait tracing (and would pay for its hooks in throughput).
   * @param {import('../sampling/sampler.js').Sample} sample
   * @param {import('./request-tracker.js').RequestStats[]} requests the sample's, by port: none when no request started,
   *   finished or was in flight in it
   * @param {number} intervals sampling intervals the sample spans
   */
  armWaits (sample, requests, intervals) {
    const serving = requests.length > 0
    // A loop with no request says nothing of how the server serves, and has none to trace: the moments before a
    // load's first request reached it read idle, and armed the tracer on a server that then saturated. Its hooks
    // leave the process slower after they are off (V8's promise-hook protector does not come back; the resources
    // they marked keep a second shape): a saturated hello server on half a core served 0.909 of its neighbour with
    // that one early slot, 0.938 without (bench:overhead, paired, 6 rounds).
    if (!serving) return
    // Outside the slice the window looks into, the server is measured alone: the tracer's hooks would cost every
    // promise there, and at a few dozen requests a second they were half the CPU a request read.
    const look = this.look
    if (look !== null) {
      const now = Date.now()
      // Past the slice, a slot armed that has picked no request up, in a window that has traced none, stays armed until
      // it does: at a request every few seconds, none may begin within the slice (a listing of 1.5–3.7 s at -c 1 had
      // none begin in its 2.6 s armed), and the window would have no line to tell.
      if (now >= look.to && this.waits.armed && this.waits.traced === this.pickedAt && this.pickedAt === this.tracedBefore) return
      if (now < look.from || now >= look.to) {
        this.slot = 0
        this.pauseWaits()
        return
      }
    }
    // The time the thread ran, where it is measured: libuv's utilisation reads high while the CPU profiler runs, and
    // counts the time the thread waited for a CPU — on a machine short of cores (one that also runs the database the
    // server waits on) a waiting server's loop read 90% busy while it ran 30% of the time, and no request was traced.
    // A thread runnable — on a CPU or queued for one — for the whole sample never waited for its events: it is busy,
    // whatever share of a core it was given (a container's CPU limit, a neighbour). The one that ran 30% and queued 59%
    // still waited for its events a tenth of the time.
    // The thread's time is read every 100 ms (with the CPU): a reading weighs what the intervals it spans would have,
    // each 0.05 of the smoothed figure; the samples between keep it.
    const thread = sample.thread
    if (thread !== undefined && thread.span > 0) {
      const busy = thread.cpu + thread.wait >= SATURATED * thread.span ? 1 : Math.min(1, thread.cpu / thread.span)
      const weight = 1 - 0.95 ** Math.max(1, thread.span / this.options.interval)
      this.busy += weight * (busy - this.busy)
      this.ran += weight * (Math.min(1, thread.cpu / thread.span) - this.ran)
    } else if (!this.sampler.threadTime) {
      this.busy += (1 - 0.95 ** intervals) * (sample.utilization - this.busy)
    }
    const port = this.loadedPort
    let inflight = 0
    let finished = 0
    for (const r of requests) {
      if (port !== null && r.port !== port) continue
      inflight += r.inflight
      finished += r.finished
    }
    const w = 1 - 0.95 ** intervals
    this.inflight += w * (inflight - this.inflight)
    this.finishing += w * (finished / Math.max(1, sample.interval) - this.finishing)
    this.slot += intervals
    if (this.slot < SLOT_INTERVALS) return
    this.slot = 0
    // A request can wait only while it is in flight between two turns of the loop: a half-busy server whose requests
    // all end in the turn they began (the last count of its connections, made between turns, found none) has nothing
    // to trace, however idle its loop reads. Under TRACE_ALWAYS_BELOW the hooks take CPU the server had to spare, and
    // a server whose requests seldom wait (rarely in flight at a count) is traced all along.
    // A thread runnable all the time that runs little of it (a waiting server on a machine whose other processes take
    // the cores: it ran 16% of the time and queued 76%) is not busy by its own work: with requests in flight between
    // turns it is traced a fifth of the time too — without it, no wait was traced and the figures it queued for read
    // `event-loop`.
    // A thread runnable all along that ran under TRACE_SOME_BELOW of the time, with its requests in flight far longer
    // than their CPU, is busy by the machine's queue rather than by its own work: traced a fifth of the time too.
    const starved = this.busy >= TRACE_SOME_BELOW && (this.ran < STARVED_BELOW || (this.ran < TRACE_SOME_BELOW && this.inflight >= IN_FLIGHT_OVER_CPU * this.ran))
    let duty = this.busy < TRACE_ALWAYS_BELOW ? 1 : (this.busy < TRACE_SOME_BELOW || starved) && this.requests.inflightAt(this.loadedPort) ? SOME : 0
    // Requests that hardly wait pay the hooks for nothing. A saturated hello server held to half a core ran 43% of the
    // time and queued for a CPU 43%: it read half busy, and was traced a fifth of the time (33 requests in 8 s) for
    // waits it never had. Tracing then goes on rarely, to see the requests start waiting.
    // Real traffic on a thread with time to spare is traced all along, whatever the requests traced so far waited: its
    // routes differ, and the one that waits may be a tenth of them.
    const share = this.waits.waitShare
    // Unless they leave promises pending as they answer: work fired and not awaited is found only by tracing.
    if (share !== null && share < WAITS_WORTH && !(this.observing && this.busy < TRACE_ALWAYS_BELOW) && !this.waits.leavesWork) duty = Math.min(duty, RARELY)
    // A slot armed that has not picked a request up yet stays armed, while tracing is due at all: requests of seconds
    // begin a few a second, and a tenth of a second armed in five caught one in a run, or none.
    if (duty > 0 && this.waits.armed && this.waits.traced === this.pickedAt) return
    this.credit = Math.min(1, this.credit + duty)
    if (this.credit >= 1 - 1e-9) {
      this.credit -= 1
      this.pickedAt = this.waits.traced
      this.armTracer()
    } else {
      this.pauseWaits()
    }
  }

  /** ms a request is expected to take on the server, by Little's law over the recent samples (0: not known) */
  serverTime () {
    return this.finishing > 0 ? this.inflight / this.finishing : 0
  }

  /** Traces requests from now on, with the drivers' events that name what they wait on. */
  armTracer () {
    this.waits.arm()
    this.drivers.subscribe()
    this.requests.onRequest = this.onRequest
  }

  /** Traces no new request; the hooks go off once those traced have finished. */
  pauseWaits () {
    // Requests being traced are let finish for a few times what one takes: a listing of 3.5 s was dropped unfinished
    // two seconds after its slot, and no wait of it was told.
    this.waits.pause(Math.max(GRACE_MS, GRACE_REQUESTS * this.serverTime()))
    // While requests traced earlier finish, each new one must still clear the context its connection carries.
    if (!this.waits.active) {
      this.requests.onRequest = null
      this.drivers.unsubscribe()
    }
  }

  disarmWaits () {
    this.waits.disarm()
    this.drivers.unsubscribe()
    this.requests.onRequest = null
  }

  start () {
    const oldLimit = oldGenerationLimit(process.execArgv, process.env.NODE_OPTIONS)
    this.log.write({
      type: RECORD.HELLO,
      time: Date.now(),
      pid: process.pid,
      ppid: process.ppid,
      threadId: this.tid,
      // Copies: the event is serialised at the next flush, and some apps rewrite process.argv in place.
      argv: [...process.argv],
      execArgv: [...process.execArgv],
      cwd: process.cwd(),
      node: process.version,
      heapLimit: v8.getHeapStatistics().heap_size_limit,
      oldGenerationLimit: oldLimit,
      role: !isMainThread ? 'worker-thread' : cluster.isWorker ? 'cluster-worker' : 'main',
      // The stacks it writes give positions in the code that ran, unmapped (sampling/stack.js): the analysis maps them.
      rawStacks: true,
      interval: this.options.interval
    })
    if (this.options.runtime !== false) {
      // First: the app's modules read their settings as they load, right after this preload.
      this.env.start()
      this.requests.start()
      this.listeners.start()
      this.agents.start()
      this.outgoing.start()
      this.sockets.start()
      this.pools.start()
      this.sampler.start()
    }
    this.flushTimer = setInterval(() => this.flush(), 1000)
    this.flushTimer.unref()
    // The limits the heap lives under, on the channel at once: a target that dies of them may die before its first
    // flush (a heap thrashing at its limit from the load's first second never runs the flush timer).
    const group = isMainThread ? memoryGroup() : null
    const limits = isMainThread ? { heapLimit: v8.getHeapStatistics().heap_size_limit, oldGenerationLimit: oldLimit, memoryLimit: group?.limit ?? null, memoryGroup: group?.dir ?? null, node: process.version } : {}
    this.options.channel.send({ type: MESSAGE.HELLO, pid: process.pid, threadId: this.tid, role: isMainThread ? 'main' : 'worker-thread', ...limits })
  }

  /**
   * @param {number} port
   * @param {string} address
   * @param {object} server
   */
  onListening (port, address, server) {
    this.log.write({ type: RECORD.LISTENING, time: Date.now(), port, address, http: isHttpServer(server) })
    this.requests.watch(server, port)
    // By now the app has set its listener limits (the post-mortem's `defaultMaxListeners = Infinity` included).
    this.listeners.refresh()
  }

  /** Writes what changed since the last flush, then the buffered lines. */
  flush () {
    const t0 = performance.now()
    try {
      this.snapshotWatchers()
      this.log.flush()
    } catch {}
    // The probe's own work, which the thread's figures would otherwise charge to the app (capped: a busy machine may
    // preempt it midway).
    this.sampler.addOwn(Math.min(FLUSH_CAP_MS, performance.now() - t0))
  }

  snapshotWatchers () {
    const listeners = this.listeners.snapshot()
    const l = JSON.stringify(listeners)
    if (listeners.length > 0 && l !== this.lastListeners) {
      this.lastListeners = l
      this.log.write({ type: RECORD.LISTENERS, time: Date.now(), listeners })
    }
    const agents = this.agents.snapshot()
    if (agents.length > 0) {
      const a = JSON.stringify(agents)
      if (a !== this.lastAgents) {
        this.lastAgents = a
        this.log.write({ type: RECORD.AGENTS, time: Date.now(), agents })
      }
    }
    const outgoing = this.outgoing.snapshot()
    if (outgoing.length > 0) {
      const o = JSON.stringify(outgoing)
      if (o !== this.lastOutgoing) {
        this.lastOutgoing = o
        this.log.write({ type: RECORD.OUTGOING, time: Date.now(), outgoing })
      }
    }
    const sockets = this.sockets.snapshot()
    if (sockets.endpoints.length > 0) {
      const s = JSON.stringify(sockets)
      if (s !== this.lastSockets) {
        this.lastSockets = s
        this.log.write({ type: RECORD.SOCKETS, time: Date.now(), ...sockets })
      }
      // The pools behind the connections: where the app created each, and its limit.
      const pools = sockets.endpoints.map(e => ({ endpoint: e.endpoint, pool: this.pools.find(e.owners) })).filter(p => p.pool !== null)
      if (pools.length > 0) {
        const p = JSON.stringify(pools)
        if (p !== this.lastPools) {
          this.lastPools = p
          this.log.write({ type: RECORD.POOLS, time: Date.now(), pools })
        }
      }
    }
    const reads = this.env.take()
    if (reads.length > 0) this.log.write({ type: RECORD.ENV_READS, time: Date.now(), reads })
    const waits = this.waits.take()
    if (waits.traces.length > 0 || waits.sites.length > 0) this.log.write({ type: RECORD.WAITS, time: Date.now(), ...waits })
  }

  /** @param {import('../probe-protocol.js').ProbeCommand} command from hotpath */
  async onCommand (command) {
    try {
      if (command.type === COMMAND.LOAD_START || (command.type === COMMAND.STATE && command.loading)) {
        // Only the loaded port's requests are traced for waits: an upstream the app serves in the same process is not
        // what the load waits on.
        const port = Number(/** @type {any} */ (command).port)
        this.loadedPort = Number.isInteger(port) && port > 0 ? port : null
        this.observing = /** @type {any} */ (command).observe === true
        await this.loadStart(command.type === COMMAND.STATE, sliceOf(/** @type {any} */ (command).profile))
      } else if (command.type === COMMAND.LOAD_STOP || (command.type === COMMAND.STATE && this.loading)) {
        // A probe that opened its window from the environment and connects after the load stopped hears 'state' only.
        await this.loadStop()
      } else if (command.type === COMMAND.HEAP_SETTLE) {
        const heapUsed = await heapAfterFullGc().catch(() => null)
        this.options.channel.send(heapUsed === null
          ? { type: MESSAGE.HEAP_SETTLED, pid: process.pid, error: 'no full collection' }
          : { type: MESSAGE.HEAP_SETTLED, pid: process.pid, heapUsed })
      } else if (command.type === COMMAND.TRACE_START) {
        this.options.channel.send({ type: MESSAGE.TRACING, pid: process.pid, ...this.traceAll() })
      } else if (command.type === COMMAND.TRACE_STOP) {
        this.options.channel.send({ type: MESSAGE.TRACED, pid: process.pid, ...await this.traceAllStop() })
      } else if (command.type === COMMAND.HEAP_SNAPSHOT) {
        if (!this.scriptsRecorded) this.recordScripts()
        await (await import('./heap-snapshot.js')).onHeapSnapshotCommand(command, this.options, this.name)
      } else if (command.type === COMMAND.HEAP_SAMPLING_START || command.type === COMMAND.HEAP_SAMPLING_STOP) {
        if (command.type === COMMAND.HEAP_SAMPLING_STOP && !this.scriptsRecorded) this.recordScripts()
        await (await import('./heap-snapshot.js')).onHeapSamplingCommand(command, this.options)
      }
    } catch {}
  }

  /**
   * @param {boolean} [late] the load was on when this thread began (a worker a lazy pool made for it): its heap is not
   *   settled first — a full GC in the middle of the load would move what the load measures, and the heap the thread
   *   began with is no baseline for the load's
   * @param {{ from: number, to: number } | null} [slice] epoch ms between which the CPU profiler runs (main threads);
   *   null: all the window
   */
  async loadStart (late = false, slice = null) {
    if (this.loading) return
    this.loading = true
    this.closing = null
    this.threads.opened()
    // Pools are made at start-up: watching constructions any longer would cost every emitter of the load a call.
    this.pools.stop()
    const constructions = this.options.runtime !== false ? this.pools.constructions() : []
    if (constructions.length > 0) this.log.write({ type: RECORD.CONSTRUCTIONS, time: Date.now(), constructions })
    // The formatter every stack read runs, the require hooks, the polyfills: what the app replaced of the runtime.
    if (this.runtimeHooks !== null) this.log.write({ type: RECORD.RUNTIME_HOOKS, time: Date.now(), ...this.runtimeHooks.record() })
    // Settings are read at start-up too, or by a client made for the first requests: a read through the watched
    // environment costs ~1 µs more than a plain one, so it is watched only until the load's first second is over.
    this.envTimer = setTimeout(() => this.stopEnv(), ENV_WATCH_MS)
    this.envTimer.unref()
    this.busy = 1
    this.ran = 1
    this.inflight = 0
    this.finishing = 0
    this.pickedAt = -1
    this.tracedBefore = this.waits.traced
    this.slot = 0
    this.credit = 0
    this.look = slice
    this.waits.forget()
    this.waits.byPath = this.observing ? new Map() : null
    if (this.observing && this.options.runtime !== false) {
      this.routes.start()
      const routes = this.routes
      this.requests.onObserved = (req, res, port) => { if (this.loadedPort === null || port === this.loadedPort) routes.onRequest(req, res) }
    }
    // The thread's own CPU and run-queue time, over the window only (a system call a sample): it arms the wait tracer,
    // and corrects the utilisation libuv misreads while the CPU profiler runs (profile-utilization.js).
    if (this.options.runtime !== false) this.sampler.threadTime = true
    // Both clocks at one instant: CPU profiles are stamped on the monotonic one, samples on the wall clock.
    const monotonic = Number(process.hrtime.bigint() / 1000n)
    if (!late) await this.settleHeap('start')
    this.loadStartedAt = Date.now()
    this.log.write({ type: RECORD.LOAD_START, time: this.loadStartedAt, monotonic })
    await this.profiles.start(slice)
    this.options.channel.send({ type: MESSAGE.STARTED, pid: process.pid, threadId: this.tid, heapUsed: this.settled.start })
  }

  /**
   * After the window, traces every request the tracer takes (25 a second, 4 at once), however busy the thread: the
   * window traces a busy thread never, as the hooks would cost its throughput, and only tracing finds the work a
   * request fires and does not await. doctor asks for it in a short load of its own when the window left megabytes
   * alive and traced too few requests to tell what holds them.
   * @returns {{ error?: string }}
   */
  traceAll () {
    if (this.loading) return { error: 'a load window is open' }
    if (this.options.runtime === false) return { error: 'the runtime instruments are off' }
    this.waits.forget()
    this.tracedBefore = this.waits.traced
    this.armTracer()
    return {}
  }

  /**
   * Ends traceAll: no new request is traced, and what those traced left pending is followed for a moment longer
   * before they are written (a write of 800 ms fired per request lived on after the last response).
   * @returns {Promise<{ traced: number }>}
   */
  async traceAllStop () {
    // onRequest stays: while the hooks are on, a new request must still clear the context its connection carries.
    this.waits.hold()
    await new Promise(resolve => setTimeout(resolve, TRACE_LINGER_MS))
    this.flush()
    this.disarmWaits()
    return { traced: this.waits.traced - this.tracedBefore }
  }

  /** Puts the real process.env back (what was read is kept for the next flush). */
  stopEnv () {
    if (this.envTimer !== null) clearTimeout(this.envTimer)
    this.envTimer = null
    this.env.stop()
  }

  async loadStop () {
    if (this.loading) this.closing = this.closeWindow()
    const ack = this.closing === null ? {} : await this.closing
    this.options.channel.send({ type: MESSAGE.STOPPED, pid: process.pid, threadId: this.tid, ...ack })
  }

  /**
   * Closes the load window: its profiles are written and its events flushed when the promise settles, with those of
   * the main thread's worker threads.
   * @returns {Promise<object>} what the thread's 'stopped' ack carries
   */
  async closeWindow () {
    this.loading = false
    const threads = this.threads.close()
    // No request is traced from now on; those being traced may finish while the heap settles (their handlers are
    // waited for there): a request begun in the window is the window's, however late it ends.
    this.pauseWaits()
    this.stopEnv()
    const stoppedAt = Date.now()
    if (this.routes.active) {
      this.requests.onObserved = null
      this.routes.stop()
      this.log.write({ type: RECORD.ROUTES, time: stoppedAt, ...this.routes.take() })
    }
    this.log.write({ type: RECORD.LOAD_STOP, time: stoppedAt })
    // The window closes on a sample boundary, with everything measured up to it.
    if (this.sampler.running) this.writeSample(this.sampler.sample(), true)
    this.sampler.threadTime = false
    this.sampler.pace = 1
    await this.profiles.stop(this.log)
    // The requests traced are written out before the heap is read: what the tracer holds of them (their spans and
    // stacks, megabytes for listings of 120 queries) is the probe's, not what the load kept.
    await this.settleHeap('end', () => {
      this.disarmWaits()
      this.flush()
    })
    this.disarmWaits()
    // After the heap's reading: the debugger domain makes objects of its own (once), which the load did not leave.
    this.recordScripts()
    this.flush()
    const unclosed = await threads
    if (unclosed.length > 0) {
      // Their profiles will not be written: the analysis says so rather than leave their CPU unexplained.
      this.log.write({ type: RECORD.THREADS_UNCLOSED, time: Date.now(), threads: unclosed, waitedMs: WAIT_MS })
      this.log.flush()
    }
    this.threads.closed()
    // What the load left alive and the GC time it cost, for hotpath to decide at once whether to look at what keeps
    // it (doctor's retainers) and who allocates (its allocation phase).
    const gc = this.profiles.gcMs === null ? {} : { gcMs: this.profiles.gcMs, windowMs: stoppedAt - this.loadStartedAt }
    // With the servers it holds connections to: a server too busy to trace its requests may still spend its CPU on
    // its calls to them (an ORM's N+1), which doctor then counts in a traced load of their own.
    return { settled: this.settled, ...gc, traced: this.waits.traced - this.tracedBefore, clients: this.sockets.openEndpoints() }
  }

  /**
   * What the heap holds after a full collection, at each end of the load window (before hotpath starts the load, after
   * it stopped): the difference is what the load left alive, whatever the run's length and however many full
   * collections V8 chose to run within it — the trend inside the window alone flipped a leak's verdict with them.
   * @param {'start' | 'end'} phase
   * @param {() => void} [before] called once the requests in flight have finished (or the wait for them ended), just
   *   before the collection
   */
  async settleHeap (phase, before) {
    if (this.options.runtime === false) return
    try {
      // Requests the load left in flight finish first: what they hold is not what the load kept. A load that stops
      // closes its connections, but the server goes on with the requests they carried (a Sequelize listing of 1.8 s
      // held 14 MB across the reading, which read a leak): their handlers are waited for, within a bound.
      let inflight = 0
      if (phase === 'end') {
        const until = Date.now() + SETTLE_MAX_MS
        do {
          await new Promise(resolve => setTimeout(resolve, SETTLE_MS))
          inflight = this.requests.handling(null)
        } while (inflight > 0 && Date.now() < until)
      }
      before?.()
      const heapUsed = await heapAfterFullGc()
      // A reading with handlers still running is not what the load kept: the analysis sets it aside.
      if (inflight === 0) this.settled[phase] = heapUsed
      this.log.write({ type: RECORD.HEAP_SETTLED, phase, time: Date.now(), heapUsed, ...(inflight > 0 ? { inflight } : {}) })
    } catch {}
  }

  /** Stops the profilers at once and writes what they hold, with the window's end: the process is exiting. */
  saveProfilesSync () {
    this.loading = false
    this.log.write({ type: RECORD.LOAD_STOP, time: Date.now(), exited: true })
    this.profiles.stopSync(this.log)
    this.recordScripts()
    this.threads.closed()
  }

  /**
   * Copies the code of the scripts a loader transformed in memory (TypeScript through tsx…) into the run directory, for
   * the analysis to read the profiles' positions against: between loads only (transformed-scripts.js says why).
   */
  recordScripts () {
    this.scriptsRecorded = true
    const scripts = this.scripts.record(this.options.runDir)
    if (scripts.length > 0) this.log.write({ type: RECORD.SCRIPTS, time: Date.now(), ms: Math.round(this.scripts.ms * 10) / 10, scripts })
  }

  /** Last words: called on exit (and on SIGINT/SIGTERM before the default action). Synchronous. */
  final () {
    try {
      if (this.sampler.running) this.writeSample(this.sampler.sample(), true)
      // Exiting during the load (a crash, a cluster worker that dies): the profiles until now are what is left of it.
      if (this.loading) this.saveProfilesSync()
      this.snapshotWatchers()
      this.log.write({ type: RECORD.EXIT, time: Date.now() })
      this.log.flush()
      this.sampler.stop()
      this.requests.stop()
    } catch {}
  }
}

/**
 * The CPU profile's slice hotpath sent, when it is one.
 * @param {any} profile
 * @returns {{ from: number, to: number } | null}
 */
function sliceOf (profile) {
  if (profile === null || typeof profile !== 'object') return null
  const from = Number(profile.from)
  const to = Number(profile.to)
  return Number.isFinite(from) && Number.isFinite(to) && to > from ? { from, to } : null
}
