// The target started afresh for a phase after doctor's run — an experiment's variant, a larger heap limit after a
// crash — with node flags and variables of its own and the experiments' gauge preloaded in place of the probe: what
// its processes say of themselves is read from the gauge's folder, which goes when the target is stopped.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readGauge } from './gauge-readings.js'
import { TargetProcess } from '../target/target-process.js'

const GAUGE = new URL('../../probe/experiment-gauge.js', import.meta.url).href

/**
 * A way to start the target: node flags added to NODE_OPTIONS, environment variables.
 * @typedef {{ flags: string[], env: Record<string, string> }} Variant
 */

/**
 * @typedef {object} GaugedTarget
 * @property {TargetProcess} target not started yet
 * @property {(port: number, from: number, to?: number) => Promise<import('./gauge-readings.js').Gauge | null>} gauge
 *   what the processes listening on `port` said between two epoch ms (`to`: now), once the gauge wrote again
 * @property {() => Promise<import('../target/target-process.js').ExitInfo>} stop stops the target, removes the folder
 */

/**
 * @param {string[]} command the user's command
 * @param {Variant} variant
 * @param {string} prefix the temporary folder's name
 * @returns {GaugedTarget}
 */
export function gaugedTarget (command, variant, prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const placed = withFlags(command, variant.flags)
  const target = new TargetProcess(placed.command, {
    env: { ...variant.env, HOTPATH_EXPERIMENT_DIR: dir },
    nodeOptions: [...placed.flags, `--import=${GAUGE}`].join(' ')
  })
  return {
    target,
    async gauge (port, from, to) {
      // The gauge writes four times a second: one more line closes the window.
      if (target.exitInfo === null) await new Promise(resolve => setTimeout(resolve, 300))
      const pids = new Set(target.listening.filter(l => l.port === port).map(l => l.pid))
      return readGauge(dir, pids, from, to ?? Date.now())
    },
    async stop () {
      try {
        return await target.stop()
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
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
