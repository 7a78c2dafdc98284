/**
 * Every threshold the diagnosis uses, in one place (docs/diagnosis.md explains each).
 */
export const THRESHOLDS = {
  /** seconds of the load window the serving threads' samples must cover */
  minCoverage: 0.5,
  /** ms: a p99 event-loop delay this long means single tasks hold the loop */
  delayP99: 100,
  /** ms of CPU per request that make a request itself a blocking task */
  cpuPerRequest: 2,
  /** event-loop utilisation at which CPU per request is judged */
  busy: 0.7,
  /** share of the load window the event loop spends paused for garbage collection */
  gcShare: 0.15,
  /** t-statistic and fit of the slope of what survives GC */
  leakT: 3,
  leakR2: 0.6,
  /** bytes the heap floor must gain over the window, absolutely and relative to where it started */
  leakBytes: 5 * 1024 * 1024,
  leakRatio: 0.1,
  /** share of V8's heap limit the heap's highest reading in the window must reach for the limit to be near */
  heapNearLimit: 0.7,
  /** event-loop utilisation under which the loop is mostly waiting */
  idle: 0.5,
  /** ms of server time per request for waiting to matter */
  serverTime: 5,
  /** share of server time spent on the CPU under which a request is mostly waiting, without traced waits to say so: a
   * quarter, so that the CPU figure's error (the probe's cost, a machine short of cores) cannot flip a request of
   * seconds — at a tenth, 1.6 s requests of 206 ms of CPU each read healthy, of 180 ms waiting */
  cpuOfServerTime: 0.25,
  /** cores a serving process may use and still be called idle (waiting) */
  waitingCores: 0.5,
  /** cores a process's other threads (V8's compilers and GC helpers, the CPU profiler's sampler) take beside its
   * event loop in a run's first seconds, none of it the app's: a fetch() client warming up took 0.26 */
  runtimeCores: 0.3,
  /** listeners for one event on one emitter */
  listeners: 100,
  /** share of the requests' server time spent waiting on one outgoing call for it to be evidence (and, for io, to blame) */
  waitShare: 0.2,
  /** cores' worth of CPU used by other processes during the run, above which the figures may be distorted */
  otherCores: 0.5,
  /** share of the traced requests' time spent in waits at known lines that shows a server waiting, its loop under busy */
  waitedShare: 0.5,
  /** waits per request at one line, one after another, that make an N+1 */
  sequentialWaits: 3,
  /** how much the CPU per request must climb over the window, at the same load, for a request to cost more than the
   * last: by this factor, and by this many ms, on a line (R², t) through half-second points */
  costRise: 1.5,
  costRiseMs: 0.05,
  costR2: 0.6,
  costT: 3,
  /** ms a request waits for a pooled connection before its round trip for the pool to be evidence */
  poolQueueMs: 1,
  /** share of the serving threads' CPU one avoidable cost (a stack read, a sync call with an async form, require() on
   * the request path) must hold to be the verdict's concern: without it, ~1.25× the requests at the same CPU */
  avoidableShare: 0.2,
  /** share of the serving threads' CPU an avoidable cost or a polyfill's code must take to be advised on */
  adviseShare: 0.05,
  /** the same for require() on the request path: a cached module costs a microsecond or two a call, and hoisting the
   * call costs nothing */
  hoistShare: 0.01,
  /** event-loop utilisation, by the loop's own work, at which a closed-loop load saturates the server */
  saturated: 0.9,
  /** mean latency over the time on the server at which requests mostly wait for those ahead of them */
  queueing: 2
}
