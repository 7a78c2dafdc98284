// From three heap snapshots to the groups of objects that grow with load, each with what holds it.
import { statSync } from 'node:fs'
import { readHeapSnapshot } from './snapshot-reader.js'
import { HeapGraph } from './snapshot-graph.js'
import { retainerTree } from './retainers.js'
import { groupSurvivors, liftSmallGroups, survivorsOf } from './survivors.js'
import { Places } from './places.js'
import { describeGroups } from './describe-groups.js'

/**
 * A group grows with load when the growth phase left at least this many of its objects per 100 requests: one leaked
 * object per request is 100. Below, what survives is the runtime settling (code compiled late, caches of V8 and Node
 * filled once), which does not grow with more requests.
 */
const MIN_PER_100_REQUESTS = 5
/** …and never fewer than this many, whatever the load. */
const MIN_COUNT = 50
/** Groups reported, the largest first. */
const MAX_CULPRITS = 10

/**
 * @typedef {object} SnapshotInfo
 * @property {string} file
 * @property {number} fileBytes
 * @property {number} nodes
 * @property {number} edges
 * @property {number | null} heapBytes the shallow sizes of all its nodes added up (the last snapshot's; the others
 *   are read for their ids only)
 */

/**
 * @typedef {object} HeapAnalysis
 * @property {import('./describe-groups.js').Culprit[]} culprits groups that grow with load, most bytes first
 * @property {import('./describe-groups.js').Culprit[]} others groups that survived in too small a number to say they grow
 * @property {{ count: number, bytes: number }} survivors every object of the growth phase alive at the end
 * @property {{ minCount: number }} threshold
 * @property {SnapshotInfo[]} snapshots
 * @property {number} parseMs time spent reading the snapshots
 */

/**
 * @param {[string, string, string]} files the snapshots before the growth phase, after it, and after the settle phase
 * @param {{ requests: number, sources?: import('../profile/sources.js').SourceCache }} options requests of the growth
 *   phase; the scripts as they ran, to place functions in the source the user wrote
 * @returns {Promise<HeapAnalysis>}
 */
export async function analyseSnapshots (files, { requests, sources }) {
  const started = Date.now()
  const first = await readHeapSnapshot(files[0], { idsOnly: true })
  const second = await readHeapSnapshot(files[1], { idsOnly: true })
  const third = await readHeapSnapshot(files[2])
  const parseMs = Date.now() - started
  const graph = new HeapGraph(third)
  const tree = retainerTree(graph)
  const survivor = survivorsOf(graph, first.nodes, second.nodes)
  let count = 0
  let bytes = 0
  for (let n = 0; n < graph.nodeCount; n++) {
    if (survivor[n] === 1) {
      count++
      bytes += graph.size(n)
    }
  }
  const minCount = Math.max(MIN_COUNT, Math.ceil(requests * MIN_PER_100_REQUESTS / 100))
  const groups = liftSmallGroups(graph, tree, groupSurvivors(graph, tree, survivor), minCount)
  const growing = groups.filter(g => g.count >= minCount).slice(0, MAX_CULPRITS)
  const others = groups.filter(g => g.count < minCount).slice(0, 3)
  const places = new Places(graph, sources)
  const described = describeGroups(graph, tree, [...growing, ...others], places, requests)
  return {
    culprits: described.slice(0, growing.length),
    others: described.slice(growing.length),
    survivors: { count, bytes },
    threshold: { minCount },
    snapshots: [first, second, third].map((s, i) => ({
      file: files[i],
      fileBytes: statSync(files[i]).size,
      nodes: s.nodeCount,
      edges: s.edgeCount,
      heapBytes: i === 2 ? heapBytes(graph) : null
    })),
    parseMs
  }
}

/** @param {HeapGraph} graph */
function heapBytes (graph) {
  let total = 0
  for (let n = 0; n < graph.nodeCount; n++) total += graph.size(n)
  return total
}
