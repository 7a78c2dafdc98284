// One CPU profile from several taken back to back. V8 builds its answer to Profiler.stop — the whole profile, nodes,
// samples and their encoding — on the profiled thread, in one piece: a minute of a busy app is tens of milliseconds of
// the app's event loop. Stopped and restarted every second, each answer is a second's, and the pieces are joined here,
// off that thread: nodes merged by call path, samples and their time deltas run on.

/** @typedef {import('../profile/cpuprofile.js').CpuProfile} CpuProfile */
/** @typedef {import('../profile/cpuprofile.js').CpuProfileNode} CpuProfileNode */

/**
 * @param {CpuProfile[]} chunks in the order they were taken
 * @returns {CpuProfile}
 */
export function joinCpuProfiles (chunks) {
  if (chunks.length === 1) return chunks[0]
  /** @type {CpuProfileNode[]} */
  const nodes = []
  /** @type {Map<string, CpuProfileNode>} */
  const byPath = new Map()
  /** @type {number[]} */
  const samples = []
  /** @type {number[]} */
  const timeDeltas = []
  let last = NaN
  for (const chunk of chunks) {
    const ids = mergeTree(chunk.nodes, nodes, byPath)
    const chunkSamples = chunk.samples ?? []
    const deltas = chunk.timeDeltas ?? []
    let t = chunk.startTime
    for (let i = 0; i < chunkSamples.length; i++) {
      t += deltas[i] ?? 0
      // The first sample of a piece is placed from the last of the one before: the restart's gap stays a gap.
      timeDeltas.push(Number.isNaN(last) ? t - chunk.startTime : t - last)
      samples.push(/** @type {number} */ (ids.get(chunkSamples[i])))
      last = t
    }
  }
  return { nodes, startTime: chunks[0].startTime, endTime: chunks[chunks.length - 1].endTime, samples, timeDeltas }
}

/**
 * Adds one piece's tree to the merged one: a node is the same node when its parent is and its frame is.
 * @param {CpuProfileNode[]} from
 * @param {CpuProfileNode[]} into
 * @param {Map<string, CpuProfileNode>} byPath
 * @returns {Map<number, number>} the piece's node ids to the merged ones
 */
function mergeTree (from, into, byPath) {
  /** @type {Map<number, CpuProfileNode>} */
  const byId = new Map()
  /** @type {Set<number>} */
  const isChild = new Set()
  for (const n of from) {
    byId.set(n.id, n)
    for (const c of n.children ?? []) isChild.add(c)
  }
  /** @type {Map<number, number>} */
  const ids = new Map()
  /** @type {Array<[CpuProfileNode, CpuProfileNode | null]>} */
  const stack = from.filter(n => !isChild.has(n.id)).map(n => [n, null])
  while (stack.length > 0) {
    const [node, parent] = /** @type {[CpuProfileNode, CpuProfileNode | null]} */ (stack.pop())
    const f = node.callFrame
    const key = `${parent?.id ?? ''}\0${f.scriptId}\0${f.url}\0${f.functionName}\0${f.lineNumber}\0${f.columnNumber}`
    let merged = byPath.get(key)
    if (!merged) {
      merged = { id: into.length + 1, callFrame: f, hitCount: 0, children: [] }
      into.push(merged)
      byPath.set(key, merged)
      parent?.children?.push(merged.id)
    }
    merged.hitCount = (merged.hitCount ?? 0) + (node.hitCount ?? 0)
    if (node.deoptReason) merged.deoptReason = node.deoptReason
    if (node.positionTicks?.length) merged.positionTicks = addTicks(merged.positionTicks ?? [], node.positionTicks)
    ids.set(node.id, merged.id)
    for (const c of node.children ?? []) {
      const child = byId.get(c)
      if (child) stack.push([child, merged])
    }
  }
  return ids
}

/**
 * @param {{ line: number, ticks: number }[]} into
 * @param {{ line: number, ticks: number }[]} add
 */
function addTicks (into, add) {
  for (const t of add) {
    const same = into.find(x => x.line === t.line)
    if (same) same.ticks += t.ticks
    else into.push({ line: t.line, ticks: t.ticks })
  }
  return into
}
