// One phase of doctor's experiments: the target started afresh with a variant (node flags in NODE_OPTIONS,
// environment variables) and the gauge preloaded, warmed up, loaded as doctor loaded it, and stopped.
import { load } from '../../load/load.js'
import { gaugedTarget } from './gauged-target.js'
import { listeningUrl, describeExit } from '../target/target-process.js'

/** Seconds of load before each phase measures: the target was just started, and its first requests compile code. */
export const WARMUP_SECONDS = 1

/** @typedef {import('./gauged-target.js').Variant} Variant */

/**
 * What one phase measured.
 * @typedef {object} PhaseRecord
 * @property {'baseline' | 'candidate'} arm
 * @property {string} value the candidate's value ('' for the baseline)
 * @property {import('../../load/result.js').LoadResult | null} result the measured load (warm-up excluded)
 * @property {Gauge | null} gauge what the target's processes said of themselves during the measured load
 * @property {string | null} failed why the phase measured nothing (the target did not start, the load failed)
 * @property {number} ms the phase's wall time, start of the target to its stop
 */

/** @typedef {import('./gauge-readings.js').Gauge} Gauge */

/**
 * @typedef {object} PhaseOptions
 * @property {string[]} command
 * @property {Omit<import('../../load/load.js').LoadOptions, 'url'>} load doctor's load
 * @property {string} path
 * @property {number} [port]
 * @property {number} listenTimeout seconds
 * @property {number} seconds what each phase measures, after its warm-up
 * @property {AbortSignal} signal
 */

/**
 * Starts the target with a variant, warms it up, measures one load and stops it.
 * @param {Variant} variant
 * @param {PhaseOptions} o
 * @param {{ arm: PhaseRecord['arm'], value: string }} label
 * @param {{ warmup: number, seconds: number }} [timing] seconds of warm-up and of measured load (else doctor's)
 * @returns {Promise<PhaseRecord>}
 */
export async function runPhase (variant, o, label, timing = { warmup: WARMUP_SECONDS, seconds: o.seconds }) {
  const started = Date.now()
  const { target, gauge, stop } = gaugedTarget(o.command, variant, 'hotpath-experiment-')
  /** @type {PhaseRecord} */
  const record = { ...label, result: null, gauge: null, failed: null, ms: 0 }
  try {
    await target.start()
    const listening = await target.waitForListening({ timeout: o.listenTimeout, port: o.port })
    const url = listeningUrl(listening, o.path)
    const result = await load({ ...o.load, duration: timing.seconds, warmup: timing.warmup, amount: undefined, url, signal: o.signal, onBin: undefined })
    if (target.exitInfo && !target.exitInfo.stoppedByUs) {
      record.failed = `the target exited ${describeExit(target.exitInfo)} during the phase${lastError(target.tail())}`
    } else if (result.failed) {
      record.failed = result.failed.detail
      // What the target said of itself still counts where the responses do not (an agent's limit, read at a start).
      record.gauge = await gauge(listening.port, started)
    } else {
      record.result = result
      record.gauge = await gauge(listening.port, result.hotpath.shard.start, result.hotpath.shard.finish)
    }
  } catch (err) {
    const e = /** @type {Error & { stderr?: string[] }} */ (err)
    record.failed = `${e.message}${lastError(e.stderr ?? target.tail())}`
  } finally {
    await stop()
    record.ms = Date.now() - started
  }
  return record
}

/**
 * The last line of a target's stderr that says what went wrong (node refusing a flag says it there).
 * @param {string[]} lines
 */
function lastError (lines) {
  const line = [...lines].reverse().find(l => /error|not allowed|bad option|invalid/i.test(l))
  return line ? `: ${line.trim()}` : ''
}
