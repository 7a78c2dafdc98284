// How long hotpath heap takes to read the snapshot of a big heap, and in how much memory: a child builds a heap of
// --size MB (objects, arrays and strings, like a server's caches), writes its snapshot through the probe's own
// snapshot code, and another child parses it — reading the whole graph, then ids only (what the first two snapshots of
// a run need), then the retainer tree. The peer is reading the same file with nothing done to its bytes, measured in
// the same run: the ratio says what the parsing itself costs over the disk.
// Usage: node bench/heap.js [--size 1024] [--keep]
import { spawn } from 'node:child_process'
import { createReadStream } from 'node:fs'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const SELF = fileURLToPath(import.meta.url)
const { values } = parseArgs({ options: { size: { type: 'string', default: '1024' }, keep: { type: 'boolean' }, role: { type: 'string' }, file: { type: 'string' } } })

if (values.role === 'build') await build(Number(values.size), /** @type {string} */ (values.file))
else if (values.role === 'parse') await parse(/** @type {string} */ (values.file))
else await main()

async function main () {
  const size = Number(values.size)
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-bench-heap-'))
  const file = join(dir, 'big.heapsnapshot')
  console.log(`hotpath heap benchmark: a ${size} MB heap, Node ${process.version}\n`)
  try {
    const built = JSON.parse(await child(['--max-old-space-size=16384', SELF, '--role', 'build', '--size', String(size), '--file', file]))
    const bytes = (await stat(file)).size
    console.log(`heap      ${mb(built.heapUsed)} used, snapshot written in ${s(built.snapshotMs)}: ${mb(bytes)} of JSON`)
    const peer = await rawRead(file)
    const parsed = JSON.parse(await child([SELF, '--role', 'parse', '--file', file]))
    console.log(`read      the file, bytes untouched: ${s(peer)} (${mbps(bytes, peer)})`)
    console.log(`parse     whole graph: ${s(parsed.fullMs)} (${mbps(bytes, parsed.fullMs)}), ${parsed.nodes.toLocaleString('en-US')} nodes, ${parsed.edges.toLocaleString('en-US')} edges, ${parsed.strings.toLocaleString('en-US')} strings`)
    console.log(`          ids only:    ${s(parsed.idsMs)}`)
    console.log(`retainers shortest paths of every node: ${s(parsed.treeMs)}`)
    console.log(`memory    parser's peak RSS ${mb(parsed.maxRss)} (${(parsed.maxRss / bytes).toFixed(2)}× the file)`)
    console.log(`\nparsing takes ${(parsed.fullMs / peer).toFixed(1)}× the time of reading the file; a run's analysis (ids of two snapshots, the third whole, the tree) ≈ ${s(2 * parsed.idsMs + parsed.fullMs + parsed.treeMs)}`)
  } finally {
    if (values.keep) console.log(`\nkept ${file}`)
    else await rm(dir, { recursive: true, force: true })
  }
}

/**
 * The child that builds the heap: records of a few shapes, in arrays and Maps, until `size` MB are in use.
 * @param {number} size
 * @param {string} file
 */
async function build (size, file) {
  /** @type {unknown[]} */
  const keep = []
  const byName = new Map()
  let i = 0
  while (process.memoryUsage().heapUsed < size * 1e6) {
    for (let k = 0; k < 10000; k++, i++) {
      const record = { id: i, name: `item ${i}`, tags: [i % 7, i % 11], owner: { id: i >> 4, role: i % 3 ? 'user' : 'admin' } }
      if (i % 4 === 0) byName.set(record.name, record)
      else keep.push(record)
    }
  }
  const { onHeapSnapshotCommand } = await import('../src/probe/heap-snapshot.js')
  const started = Date.now()
  /** @type {any} */
  let done = null
  await onHeapSnapshotCommand({ type: 'heap-snapshot', name: 'big.heapsnapshot' }, { runDir: join(file, '..'), channel: { send: (m) => { done = m } } }, 'bench')
  if (done?.error) throw new Error(done.error)
  process.stdout.write(JSON.stringify({ heapUsed: process.memoryUsage().heapUsed, snapshotMs: Date.now() - started, kept: keep.length + byName.size }))
}

/**
 * The child that parses: alone in its process, so that its peak RSS is the parser's.
 * @param {string} file
 */
async function parse (file) {
  const { readHeapSnapshot } = await import('../src/heap/snapshot-reader.js')
  const { HeapGraph } = await import('../src/heap/snapshot-graph.js')
  const { retainerTree } = await import('../src/heap/retainers.js')
  let t = Date.now()
  const ids = await readHeapSnapshot(file, { idsOnly: true })
  const idsMs = Date.now() - t
  if (ids.nodes.length === 0) throw new Error('no nodes')
  t = Date.now()
  const raw = await readHeapSnapshot(file)
  const fullMs = Date.now() - t
  t = Date.now()
  const graph = new HeapGraph(raw)
  const tree = retainerTree(graph)
  const treeMs = Date.now() - t
  process.stdout.write(JSON.stringify({ idsMs, fullMs, treeMs, nodes: raw.nodeCount, edges: raw.edgeCount, strings: raw.strings.length, reached: tree.reached, maxRss: process.resourceUsage().maxRSS * 1024 }))
}

/**
 * Reads a file through a stream, touching nothing: the floor any streaming parser stands on.
 * @param {string} file
 */
async function rawRead (file) {
  const t = Date.now()
  let n = 0
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) n += chunk.length
  if (n === 0) throw new Error('empty snapshot')
  return Date.now() - t
}

/**
 * @param {string[]} args
 * @returns {Promise<string>} its stdout
 */
function child (args) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    c.stdout.setEncoding('utf8').on('data', (d) => { out += d })
    c.on('error', reject)
    c.on('close', (code) => code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}`)))
  })
}

/** @param {number} bytes */
function mb (bytes) { return `${Math.round(bytes / 1e6).toLocaleString('en-US')} MB` }
/** @param {number} ms */
function s (ms) { return `${(ms / 1000).toFixed(1)} s` }
/**
 * @param {number} bytes
 * @param {number} ms
 */
function mbps (bytes, ms) { return `${Math.round(bytes / 1e6 / (ms / 1000))} MB/s` }
