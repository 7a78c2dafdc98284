// What the probe (src/probe/, inside the target) and hotpath (src/run/, src/analysis/) say to each other, defined once
// for both ends: the messages on the probe's channel — a unix socket named in HOTPATH_CHANNEL, newline-delimited JSON
// both ways — and the records of its event log, events-<pid>-<threadId>.ndjson in the run directory, one JSON object a
// line. Each end names a type by its constant here, and the typedefs say what each type carries. docs/architecture.md
// describes the channel and the run directory.

/**
 * Requests a window must have traced for doctor to read its waits from it: the tracer takes four to judge whether
 * requests wait or leave work (src/sampling/wait-tracer.js). Fewer, and doctor traces a short load after the window
 * (src/run/phases/tracing-phase.js) when what it needs to know is in them.
 */
export const TRACED_ENOUGH = 4

/** The commands hotpath sends the probes. `load-start` (and `state`) with `observe: true` opens a window on the traffic
 * the server gets, with no load of hotpath's: the probe then times its requests by route. */
export const COMMAND = /** @type {const} */ ({
  /** to each probe as it connects: whether a load is under way, so that a late thread joins it */
  STATE: 'state',
  LOAD_START: 'load-start',
  LOAD_STOP: 'load-stop',
  HEAP_SNAPSHOT: 'heap-snapshot',
  HEAP_SAMPLING_START: 'heap-sampling-start',
  HEAP_SAMPLING_STOP: 'heap-sampling-stop',
  /** a full collection after the load, to see whether the heap it left is let go a moment later */
  HEAP_SETTLE: 'heap-settle',
  /** after the window, trace every request the wait tracer can, however busy the thread: what work they leave
   * pending as they answer (`trace-stop` ends it, and the probe writes what it traced before it answers) */
  TRACE_START: 'trace-start',
  TRACE_STOP: 'trace-stop',
  /** an attached probe takes out what it put in and leaves the process */
  DETACH: 'detach'
})

/** The messages a probe sends hotpath. */
export const MESSAGE = /** @type {const} */ ({
  HELLO: 'hello',
  /** the probe could not start in this thread (the target runs on without it) */
  PROBE_FAILED: 'probe-failed',
  LISTENING: 'listening',
  /** the load window opened in this thread: its heap settled, its profiler on */
  STARTED: 'started',
  /** the load window closed in this thread: its profiles written, its events flushed */
  STOPPED: 'stopped',
  HEAP_SNAPSHOT_DONE: 'heap-snapshot-done',
  HEAP_SAMPLING_STARTED: 'heap-sampling-started',
  HEAP_SAMPLING_DONE: 'heap-sampling-done',
  /** the heap after the full collection `heap-settle` asked for */
  HEAP_SETTLED: 'heap-settled',
  /** `trace-start` took effect, or `trace-stop` did and the requests traced are in the event log */
  TRACING: 'tracing',
  TRACED: 'traced',
  /** an attached process is exiting (hotpath did not start it, so it cannot wait for it) */
  EXIT: 'exit',
  DETACHED: 'detached'
})

/** The records of a probe's event log. */
export const RECORD = /** @type {const} */ ({
  HELLO: 'hello',
  SAMPLE: 'sample',
  LOAD_START: 'load-start',
  LOAD_STOP: 'load-stop',
  LISTENING: 'listening',
  LISTENERS: 'listeners',
  AGENTS: 'agents',
  ENV_READS: 'env-reads',
  OUTGOING: 'outgoing',
  SOCKETS: 'sockets',
  POOLS: 'pools',
  /** the classes the app constructs and where, for naming a wait's queue (src/sampling/pools.js) */
  CONSTRUCTIONS: 'constructions',
  WAITS: 'waits',
  /** an observing window's requests by method and route, with each one's interval (src/sampling/route-timer.js) */
  ROUTES: 'routes',
  /** the wait tracer or the CPU profiler switched on or off in the window: their cost, told apart from the server's */
  INSTRUMENT: 'instrument',
  PROFILES: 'profiles',
  /** what the app replaced of the runtime as the load began: stack formatter, require hooks, polyfills */
  RUNTIME_HOOKS: 'runtime-hooks',
  /** the code loaders compiled in memory (tsx, ts-node…), copied into the run directory's scripts/ with their maps */
  SCRIPTS: 'scripts',
  GC_TRACE: 'gc-trace',
  HEAP_SETTLED: 'heap-settled',
  THREADS_UNCLOSED: 'threads-unclosed',
  EXIT: 'exit'
})

/** @typedef {{ from: number, to: number }} ProfileWindow epoch ms between which the CPU profiler runs (main threads) */

/**
 * A command from hotpath to the probes.
 * @typedef {{ type: typeof COMMAND.STATE, loading: boolean, port?: number, profile?: ProfileWindow, observe?: boolean }
 *   | { type: typeof COMMAND.LOAD_START, time: number, port: number, profile?: ProfileWindow, observe?: boolean }
 *   | { type: typeof COMMAND.LOAD_STOP, time: number }
 *   | { type: typeof COMMAND.HEAP_SNAPSHOT, name: string }
 *   | { type: typeof COMMAND.HEAP_SAMPLING_START, interval: number, includeCollected?: boolean }
 *   | { type: typeof COMMAND.HEAP_SAMPLING_STOP, name: string, collect?: boolean }
 *   | { type: typeof COMMAND.HEAP_SETTLE }
 *   | { type: typeof COMMAND.TRACE_START }
 *   | { type: typeof COMMAND.TRACE_STOP }
 *   | { type: typeof COMMAND.DETACH }} ProbeCommand
 */

/**
 * What a listening server is, as the probe sees it: `http` tells a server that speaks HTTP from an app's other
 * listeners (an internal TCP service).
 * @typedef {{ type: typeof MESSAGE.LISTENING, pid: number, threadId: number, port: number, address: string, family: string, tls: boolean, http: boolean }} ListeningMessage
 */

/**
 * A message from a probe to hotpath. `stopped` carries the heap settled after full collections at each end of the
 * window, the GC time the window cost and the requests the wait tracer followed in it, for hotpath to decide at once on
 * the phases after it.
 * `hello` from a main thread carries the heap's limit and the container's memory limit (null: none) with its cgroup's
 * directory (where hotpath reads whether the out-of-memory killer killed it), `started` the heap
 * settled before the load: hotpath keeps them, for a target that dies before its event log is flushed.
 * @typedef {{ type: typeof MESSAGE.HELLO, pid: number, threadId: number, role: string, heapLimit?: number, oldGenerationLimit?: number | null, memoryLimit?: number | null, memoryGroup?: string | null, node?: string }
 *   | { type: typeof MESSAGE.PROBE_FAILED, pid: number, threadId: number, error: string }
 *   | ListeningMessage
 *   | { type: typeof MESSAGE.STARTED, pid: number, threadId: number, heapUsed?: number }
 *   | { type: typeof MESSAGE.STOPPED, pid: number, threadId: number, settled?: { start?: number, end?: number }, gcMs?: number, windowMs?: number, traced?: number, clients?: number }
 *   | { type: typeof MESSAGE.HEAP_SNAPSHOT_DONE, pid: number, name: string, bytes?: number, ms?: number, error?: string }
 *   | { type: typeof MESSAGE.HEAP_SAMPLING_STARTED, pid: number, error?: string }
 *   | { type: typeof MESSAGE.HEAP_SAMPLING_DONE, pid: number, name?: string, error?: string }
 *   | { type: typeof MESSAGE.HEAP_SETTLED, pid: number, heapUsed?: number, error?: string }
 *   | { type: typeof MESSAGE.TRACING, pid: number, error?: string }
 *   | { type: typeof MESSAGE.TRACED, pid: number, traced?: number, error?: string }
 *   | { type: typeof MESSAGE.EXIT, pid: number, code: number }
 *   | { type: typeof MESSAGE.DETACHED, pid: number, threadId: number }} ProbeMessage
 */

/**
 * A line of a probe's event log. Records are read back by src/analysis/run-events.js, which checks each field it
 * uses: a target killed mid-write leaves a line cut short, and a saved run may come from another version.
 * `sample` is the sampler's Sample (src/sampling/sampler.js) with the requests counted since the last; `waits` the
 * traced requests and the sites, resources and kinds they first named (src/sampling/wait-tracer.js); `gc-trace` the main
 * thread's GC pauses as [start µs monotonic, duration µs, kind index]; `load-start` both clocks at one instant;
 * `hello`'s `rawStacks`: the stacks it writes are positions in the code that ran, for the analysis to map;
 * its `oldGenerationLimit`: bytes, the limit set for the old generation (null: none set; V8 sized it).
 * @typedef {{ type: typeof RECORD.HELLO, time: number, pid: number, ppid: number, threadId: number, argv: string[], execArgv: string[], cwd: string, node: string, heapLimit: number, oldGenerationLimit?: number | null, role: string, rawStacks?: boolean, interval: number }
 *   | ({ type: typeof RECORD.SAMPLE, time: number, interval: number } & Record<string, unknown>)
 *   | { type: typeof RECORD.LOAD_START, time: number, monotonic: number }
 *   | { type: typeof RECORD.LOAD_STOP, time: number, exited?: boolean }
 *   | { type: typeof RECORD.LISTENING, time: number, port: number, address: string, http: boolean }
 *   | { type: typeof RECORD.LISTENERS, time: number, listeners: object[] }
 *   | { type: typeof RECORD.AGENTS, time: number, agents: object[] }
 *   | { type: typeof RECORD.ENV_READS, time: number, reads: object[] }
 *   | { type: typeof RECORD.OUTGOING, time: number, outgoing: object[] }
 *   | ({ type: typeof RECORD.SOCKETS, time: number, ops: unknown[], endpoints: unknown[] } & Record<string, unknown>)
 *   | { type: typeof RECORD.POOLS, time: number, pools: object[] }
 *   | { type: typeof RECORD.CONSTRUCTIONS, time: number, constructions: object[] }
 *   | ({ type: typeof RECORD.RUNTIME_HOOKS, time: number } & import('./probe/runtime-hooks.js').RuntimeState)
 *   | { type: typeof RECORD.INSTRUMENT, what: 'trace' | 'profile', on: boolean, time: number }
 *   | ({ type: typeof RECORD.WAITS, time: number, traces: unknown[] } & Record<string, unknown>)
 *   | { type: typeof RECORD.ROUTES, time: number, origin: number, routes: import('./sampling/route-timer.js').RouteFigures[], intervals: number[], dropped: number }
 *   | { type: typeof RECORD.PROFILES, time: number, cpu?: string, heapAllocations?: string, heapRetained?: string }
 *   | { type: typeof RECORD.SCRIPTS, time: number, ms: number, scripts: { url: string, source: string }[] }
 *   | { type: typeof RECORD.GC_TRACE, tid: number, events: number[][] }
 *   | { type: typeof RECORD.HEAP_SETTLED, phase: 'start' | 'end', time: number, heapUsed: number, inflight?: number }
 *   | { type: typeof RECORD.THREADS_UNCLOSED, time: number, threads: number[], waitedMs: number }
 *   | { type: typeof RECORD.EXIT, time: number }} EventRecord
 */
