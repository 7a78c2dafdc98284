// hotpath/runtime: what an operator keeps on in production — cheap enough to leave on, safe by default.
// Nothing here throws into the host app or keeps its process alive (every timer is unref'd).

// Watch: the event loop, memory and GC, sampled by the same code as the doctor's probe.
export { Monitor, monitor } from './monitor.js'

// Protect: 503 + Retry-After before doing the work, while a threshold is passed.
export { OverloadProtection, overloadProtection } from './protection/protection.js'
export {
  TYPE_EVENT_LOOP_DELAY,
  TYPE_EVENT_LOOP_UTILIZATION,
  TYPE_HEAP_USED_BYTES,
  TYPE_RSS_BYTES,
  TYPE_HEALTH_CHECK
} from './protection/pressure.js'

// Profile on demand: a CPU and heap profile of the live process, on a signal, a call or a token-guarded HTTP trigger.
export { Profiler, profiler } from './profiling.js'

// Diagnose on demand: doctor's probe in this process for N seconds of its real traffic, a run directory for
// `hotpath doctor --analyse`, on a signal, a call or the same token-guarded HTTP trigger.
export { Diagnoser, diagnoser } from './diagnoser.js'

// The building blocks, shared with the probe.
export { Sampler } from '../sampling/sampler.js'
export { ListenerWatcher } from '../sampling/listeners.js'
export { AgentWatcher } from '../sampling/agents.js'

// Export: prom-client collectors, registered into the registry the app passes; or the same instruments on an
// OpenTelemetry meter.
export { registerMetrics } from './metrics/index.js'
export { registerOtelMetrics } from './metrics/otel.js'

// The shapes, for TypeScript users.
/** @typedef {import('../sampling/sampler.js').Sample} Sample */
/** @typedef {import('../sampling/sampler.js').SamplerOptions} SamplerOptions */
/** @typedef {import('../sampling/delay.js').DelayStats} DelayStats */
/** @typedef {import('../sampling/gc.js').GcStats} GcStats */
/** @typedef {import('../sampling/gc.js').GcKind} GcKind */
/** @typedef {import('../sampling/listeners.js').ListenerGrowth} ListenerGrowth */
/** @typedef {import('../sampling/stack.js').Site} Site */
/** @typedef {import('../sampling/agents.js').AgentPool} AgentPool */
/** @typedef {import('./monitor.js').MonitorOptions} MonitorOptions */
/** @typedef {import('./monitor.js').MonitorSnapshot} MonitorSnapshot */
/** @typedef {import('./monitor.js').MonitorTotals} MonitorTotals */
/** @typedef {import('./protection/overload-options.js').OverloadOptions} OverloadOptions */
/** @typedef {import('./protection/protection.js').OverloadStatus} OverloadStatus */
/** @typedef {import('./protection/pressure.js').Pressure} Pressure */
/** @typedef {import('./protection/pressure.js').PressureType} PressureType */
/** @typedef {import('./metrics/index.js').MetricsOptions} MetricsOptions */
/** @typedef {import('./metrics/index.js').RuntimeMetrics} RuntimeMetrics */
/** @typedef {import('./metrics/otel.js').OtelMetricsOptions} OtelMetricsOptions */
/** @typedef {import('./metrics/otel.js').OtelMeter} OtelMeter */
/** @typedef {import('./profiling.js').ProfilerOptions} ProfilerOptions */
/** @typedef {import('./profiling.js').CaptureOptions} CaptureOptions */
/** @typedef {import('./profiling.js').CaptureResult} CaptureResult */
/** @typedef {import('./profile-trigger.js').HttpTriggerOptions} HttpTriggerOptions */
/** @typedef {import('./diagnoser.js').DiagnoserOptions} DiagnoserOptions */
/** @typedef {import('./diagnoser.js').DiagnosisResult} DiagnosisResult */
