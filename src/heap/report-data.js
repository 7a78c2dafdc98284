// The result of `hotpath heap` as data: what --json writes and what heap.json in the run directory keeps (so that
// --analyse can redo the analysis from the snapshots and the phases' request counts).
import { VERSION } from '../version.js'
import { analyseSnapshots } from './analyse.js'

/**
 * @typedef {object} HeapReport
 * @property {'hotpath'} tool
 * @property {string} version
 * @property {'heap'} command
 * @property {string} verdict the first line printed
 * @property {string[]} target the command that was run
 * @property {string} url
 * @property {number} pid the process whose heap was taken (0 before one listened)
 * @property {number[]} otherPorts the other ports the target served HTTP on: the verdict is not about them
 * @property {string} runDir
 * @property {boolean} interrupted
 * @property {{ category: 'target-failed' | 'load-failed', detail: string, stderr: string[] } | null} failure
 * @property {import('./describe-groups.js').Culprit[]} culprits
 * @property {import('./describe-groups.js').Culprit[]} others groups that survived, too few to say they grow
 * @property {{ count: number, bytes: number } | null} survivors
 * @property {{ minCount: number } | null} threshold
 * @property {{ phases: { name: string, requests: number, duration: number, failed: string | null }[], growthRequests: number }} load
 * @property {{ name: string, file: string, bytes: number, ms: number, nodes?: number, edges?: number }[]} snapshots
 * @property {HeapAllocations | null} allocations where what the growth and settle
 *   phases left alive was allocated: the flame graph's files and top lines, or why there are none
 * @property {number | null} parseMs time taken to read the three snapshots
 * @property {number | null} analyseMs time taken by the whole analysis
 * @property {string[]} [warnings] the files among those named whose source map is missing or unreadable, in words
 */

/**
 * @typedef {object} AllocationSite
 * @property {string} function
 * @property {string} file
 * @property {number} line
 * @property {number} share 0..1 of the sampled bytes still alive
 */

/**
 * @typedef {{ flame: string, profile: string, bytes: number, sites: AllocationSite[] } | { error: string }} HeapAllocations
 *   flame: the flame graph page; profile: the .heapprofile (open it in DevTools too); bytes: sampled bytes alive
 */

/**
 * @param {{ command: string[], run: Omit<import('../run/heap-run.js').HeapRunRecord, 'phases'> & { phases: { name: string, requests: number, duration: number, failed: string | null }[] }, sources?: import('../profile/sources.js').SourceCache }} input
 *   sources: the scripts as they ran (the run's copies of what loaders compiled in memory)
 * @returns {Promise<HeapReport>}
 */
export async function buildHeapReport ({ command, run, sources }) {
  const growthRequests = run.phases.find(p => p.name === 'growth')?.requests ?? 0
  /** @type {HeapReport} */
  const report = {
    tool: 'hotpath',
    version: VERSION,
    command: 'heap',
    verdict: '',
    target: command,
    url: run.url,
    pid: run.pid,
    otherPorts: run.otherPorts ?? [],
    runDir: run.runDir,
    interrupted: run.interrupted,
    failure: run.failure,
    culprits: [],
    others: [],
    survivors: null,
    threshold: null,
    load: { phases: run.phases.map(p => ({ name: p.name, requests: p.requests, duration: p.duration, failed: p.failed })), growthRequests },
    snapshots: run.snapshots.map(s => ({ ...s })),
    allocations: null,
    parseMs: null,
    analyseMs: null
  }
  if (run.failure === null && run.snapshots.length === 3) {
    const started = Date.now()
    const files = /** @type {[string, string, string]} */ (run.snapshots.map(s => s.file))
    const analysis = await analyseSnapshots(files, { requests: growthRequests, sources })
    report.culprits = analysis.culprits
    report.others = analysis.others
    report.survivors = analysis.survivors
    report.threshold = analysis.threshold
    report.parseMs = analysis.parseMs
    report.analyseMs = Date.now() - started
    report.snapshots = report.snapshots.map((s, i) => ({ ...s, nodes: analysis.snapshots[i].nodes, edges: analysis.snapshots[i].edges }))
  }
  return report
}
