// doctor's experiments: after the diagnosed run, the target is started afresh for short phases that alternate a
// baseline with a candidate setting (node flags in NODE_OPTIONS, or environment variables), each warmed up and then
// loaded as doctor loaded it. What to try and how to judge it is src/analysis/experiments.js; this only runs phases.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { load } from '../load/load.js'
import { listeningUrl, TargetProcess, describeExit } from './target-process.js'
import { chooseValue, experimentVerdict, judgeValue, semiSpaceLadder, stopAfter, variantOf } from '../analysis/experiments.js'

const GAUGE = new URL('../probe/experiment-gauge.js', import.meta.url).href
/** Seconds of load before each phase measures: the target was just started, and its first requests compile code. */
export const WARMUP_SECONDS = 1

/**
 * A way to start the target: node flags added to NODE_OPTIONS, environment variables.
 * @typedef {{ flags: string[], env: Record<string, string> }} Variant
 */

/**
 * What one phase measured.
 * @typedef {object} PhaseRecord
 * @property {'baseline' | 'candidate'} arm
 * @property {string} value the candidate's value ('' for the baseline)
 * @property {import('../load/result.js').LoadResult | null} result the measured load (warm-up excluded)
 * @property {Gauge | null} gauge what the target's processes said of themselves during the measured load
 * @property {string | null} failed why the phase measured nothing (the target did not start, the load failed)
 * @property {number} ms the phase's wall time, start of the target to its stop
 */

/**
 * @typedef {object} Gauge
 * @property {number} gcShare GC pause time ÷ the window, mean over the listening processes
 * @property {number} scavengeShare the same for scavenges (young-generation collections)
 * @property {number} rss bytes, the listening processes together, highest reading in the window
 * @property {number} heapUsed bytes, the same
 * @property {number} newSpace bytes the young generation held at most (two semi-spaces): what its size grew to
 */

/**
 * @typedef {object} PhaseOptions
 * @property {string[]} command
 * @property {Omit<import('../load/load.js').LoadOptions, 'url'>} load doctor's load
 * @property {string} path
 * @property {number} [port]
 * @property {number} listenTimeout seconds
 * @property {number} seconds what each phase measures, after its warm-up
 * @property {AbortSignal} signal
 */

/**
 * Phases per value: baseline, candidate, baseline, candidate, baseline — each candidate between two baselines, so that
 * a drift of the machine falls on both arms. The last baseline opens the next value's phases.
 */
const PATTERN = /** @type {const} */ (['baseline', 'candidate', 'baseline', 'candidate', 'baseline'])
/** Seconds a phase costs beyond its load, before one has been timed: starting and stopping the target. */
const START_SECONDS = 2

/**
 * Runs each plan's ladder within the time budget, one value after another, and says what each value did.
 * @param {import('../analysis/experiments.js').ExperimentPlan[]} plans
 * @param {PhaseOptions} o
 * @param {{ budgetMs: number, status: (line: string) => void }} run
 * @returns {Promise<import('../analysis/experiments.js').Experiment[]>}
 */
export async function runExperiments (plans, o, run) {
  const began = Date.now()
  /** @type {import('../analysis/experiments.js').Experiment[]} */
  const out = []
  let phaseMs = (o.seconds + WARMUP_SECONDS + START_SECONDS) * 1000
  const fixedRate = (o.load.rate ?? 0) > 0
  const baseline = { flags: [], env: {} }
  for (const plan of plans) {
    const started = Date.now()
    /** @type {import('../analysis/experiments.js').TriedValue[]} */
    const tried = []
    /** @type {import('../analysis/experiments.js').Experiment['stopped']} */
    let stopped = 'ladder-end'
    let current = plan.current
    let ladder = plan.ladder
    /** @type {PhaseRecord | null} the baseline phase that ended the previous value's, and opens the next one's */
    let carried = null
    for (let i = 0; i < ladder.length; i++) {
      let value = ladder[i]
      if (o.signal.aborted) { stopped = 'interrupted'; break }
      const needed = PATTERN.length - (carried ? 1 : 0)
      if (run.budgetMs - (Date.now() - began) < phaseMs * needed) { stopped = 'budget'; break }
      /** @type {PhaseRecord[]} */
      const phases = carried ? [carried] : []
      while (phases.length < PATTERN.length && !o.signal.aborted) {
        const k = phases.length
        const arm = PATTERN[k]
        const name = plan.kind === 'try' ? value : `${plan.kind === 'flag' ? '--' : ''}${plan.setting}=${value}`
        const used = Math.round((Date.now() - began) / 1000)
        const what = current === null && plan.setting === 'max-semi-space-size'
          ? `${plan.setting}: phase ${k + 1}/${PATTERN.length}, baseline, reading the young generation's size in effect`
          : `${name} against ${plan.kind === 'try' ? 'none' : current ?? 'the default'}: phase ${k + 1}/${PATTERN.length}, ${arm}`
        run.status(`Experiment ${what} (${used} s of ${Math.round(run.budgetMs / 1000)} s; --no-experiments skips)…`)
        const phase = await runPhase(arm === 'baseline' ? baseline : variantOf(plan, value), o, { arm, value: arm === 'baseline' ? '' : value })
        phases.push(phase)
        if (phase.failed !== null) break
        // The young generation's size in effect is what V8 grew it to under this load: the ladder starts above it,
        // and this baseline phase is the first of its first value's.
        if (plan.setting === 'max-semi-space-size' && current === null && phase.gauge && phase.gauge.newSpace > 0) {
          const mb = Math.round(phase.gauge.newSpace / 2 / 1048576)
          current = String(mb)
          ladder = semiSpaceLadder(mb)
          if (ladder.length === 0) break
          if (!ladder.includes(value)) {
            i = 0
            value = ladder[0]
          }
        }
      }
      if (ladder.length === 0) break
      if (o.signal.aborted && phases.length < PATTERN.length) { stopped = 'interrupted'; break }
      const measured = phases.filter(p => p.failed === null && p !== carried)
      if (measured.length > 0) phaseMs = Math.max(...measured.map(p => p.ms))
      tried.push(judgeValue(phases, value, fixedRate))
      const last = /** @type {PhaseRecord} */ (phases.at(-1))
      carried = last.arm === 'baseline' && last.failed === null ? last : null
      const why = stopAfter(tried)
      if (why !== null) { stopped = why; break }
    }
    const chosen = chooseValue(tried)
    out.push({
      setting: plan.setting,
      kind: plan.kind,
      why: plan.why,
      current,
      tried,
      chosen,
      verdict: experimentVerdict(tried, chosen),
      stopped,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      phaseSeconds: o.seconds,
      ...(plan.facts ? { facts: plan.facts } : {})
    })
  }
  return out
}

/**
 * Starts the target with a variant, warms it up, measures one load and stops it.
 * @param {Variant} variant
 * @param {PhaseOptions} o
 * @param {{ arm: PhaseRecord['arm'], value: string }} label
 * @returns {Promise<PhaseRecord>}
 */
export async function runPhase (variant, o, label) {
  const started = Date.now()
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-experiment-'))
  const { command, flags } = withFlags(o.command, variant.flags)
  const target = new TargetProcess(command, {
    env: { ...variant.env, HOTPATH_EXPERIMENT_DIR: dir },
    nodeOptions: [...flags, `--import=${GAUGE}`].join(' ')
  })
  /** @type {PhaseRecord} */
  const record = { ...label, result: null, gauge: null, failed: null, ms: 0 }
  try {
    await target.start()
    const listening = await target.waitForListening({ timeout: o.listenTimeout, port: o.port })
    const url = listeningUrl(listening, o.path)
    const result = await load({ ...o.load, duration: o.seconds, warmup: WARMUP_SECONDS, amount: undefined, url, signal: o.signal, onBin: undefined })
    // The gauge writes four times a second: one more line closes the window.
    await new Promise(resolve => setTimeout(resolve, 300))
    if (target.exitInfo && !target.exitInfo.stoppedByUs) {
      record.failed = `the target exited ${describeExit(target.exitInfo)} during the phase${lastError(target.tail())}`
    } else if (result.failed) {
      record.failed = result.failed.detail
    } else {
      record.result = result
      const pids = new Set(target.listening.filter(l => l.port === listening.port).map(l => l.pid))
      record.gauge = readGauge(dir, pids, result.hotpath.shard.start, result.hotpath.shard.finish)
    }
  } catch (err) {
    const e = /** @type {Error & { stderr?: string[] }} */ (err)
    record.failed = `${e.message}${lastError(e.stderr ?? target.tail())}`
  } finally {
    await target.stop()
    rmSync(dir, { recursive: true, force: true })
    record.ms = Date.now() - started
  }
  return record
}

/**
 * Puts a variant's flags where they take effect: node reads NODE_OPTIONS before its command line, so a flag the
 * command already gives before its script (`node --max-old-space-size=512 app.js`) is changed there; the others go in
 * NODE_OPTIONS.
 * @param {string[]} command
 * @param {string[]} flags
 */
export function withFlags (command, flags) {
  const out = [...command]
  // node's own options come before the script: what follows it is the app's.
  const script = out.findIndex((w, k) => k > 0 && !w.startsWith('-'))
  const own = script === -1 ? out.length : script
  const rest = []
  for (const flag of flags) {
    const name = flag.split('=')[0].replaceAll('_', '-')
    const at = name.startsWith('--') && flag.includes('=') ? out.findIndex((w, k) => k > 0 && k < own && w.replaceAll('_', '-').startsWith(`${name}=`)) : -1
    if (at > 0) out[at] = flag
    else rest.push(flag)
  }
  return { command: out, flags: rest }
}

/**
 * The last line of a target's stderr that says what went wrong (node refusing a flag says it there).
 * @param {string[]} lines
 */
function lastError (lines) {
  const line = [...lines].reverse().find(l => /error|not allowed|bad option|invalid/i.test(l))
  return line ? `: ${line.trim()}` : ''
}

/**
 * The gauge's lines of the processes that listened, read over the window: GC time by difference from the last line
 * before the window to the last line in it, memory at its highest.
 * @param {string} dir
 * @param {Set<number>} pids
 * @param {number} start epoch ms
 * @param {number} end epoch ms
 * @returns {Gauge | null}
 */
export function readGauge (dir, pids, start, end) {
  const shares = []
  const scavenges = []
  let rss = 0
  let heapUsed = 0
  let newSpace = 0
  for (const file of readdirSync(dir)) {
    const pid = Number(/^gauge-(\d+)\.ndjson$/.exec(file)?.[1])
    if (!pids.has(pid)) continue
    const lines = readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).flatMap((l) => {
      try { return [JSON.parse(l)] } catch { return [] }
    })
    const before = lines.filter(l => l.t <= start).at(-1) ?? lines[0]
    const inside = lines.filter(l => l.t > start && l.t <= end + 300)
    const last = inside.at(-1)
    if (!before || !last || last.t <= before.t) continue
    shares.push((last.gcMs - before.gcMs) / (last.t - before.t))
    scavenges.push((last.scavengeMs - before.scavengeMs) / (last.t - before.t))
    rss += Math.max(...inside.map(l => l.rss))
    heapUsed += Math.max(...inside.map(l => l.heapUsed))
    newSpace = Math.max(newSpace, ...lines.map(l => l.newSpace))
  }
  if (shares.length === 0) return null
  const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length
  return { gcShare: mean(shares), scavengeShare: mean(scavenges), rss, heapUsed, newSpace }
}
