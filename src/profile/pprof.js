// pprof, the format of `go tool pprof`, Grafana Pyroscope, speedscope and most continuous profilers: a gzipped
// protobuf of samples (stacks of locations) with their values. Encoded with pprof-format.
import { gzipSync } from 'node:zlib'
import { Function as PprofFunction, Label, Line, Location, Profile, Sample, StringTable, ValueType } from 'pprof-format'
import { buildHeapProfile, buildProfile } from './model.js'

/**
 * A CPU profile (or one per process/thread, labelled) as gzipped pprof. Values: sample count and CPU nanoseconds;
 * idle samples are left out (they are not CPU). Processes and threads become a `thread` label on their samples.
 * Frames point at the original source when the scripts ship source maps.
 * @param {import('./cpuprofile.js').CpuProfile | import('./model.js').LabelledProfile[]} cpuProfile
 * @param {import('./model.js').ModelOptions} [opts]
 * @returns {Uint8Array}
 */
export function toPprof (cpuProfile, opts = {}) {
  return modelToPprof(buildProfile(cpuProfile, opts))
}

/**
 * A sampling heap profile as gzipped pprof, with one value: bytes (`space`).
 * @param {import('./cpuprofile.js').SamplingHeapProfile} heapProfile
 * @param {import('./model.js').ModelOptions} [opts]
 * @returns {Uint8Array}
 */
export function heapToPprof (heapProfile, opts = {}) {
  return modelToPprof(buildHeapProfile(heapProfile, opts))
}

/**
 * @param {import('./model.js').ProfileModel} model
 * @returns {Uint8Array}
 */
export function modelToPprof (model) {
  const strings = new StringTable()
  const s = (/** @type {string} */ text) => strings.dedup(text)
  const cpu = model.type === 'cpu'
  const table = locationTable(model, s)
  // The samples before the value types: the string table keeps the order of the files hotpath wrote before.
  const samples = pprofSamples(model, table.location, s)
  const profile = new Profile({
    sampleType: cpu
      ? [new ValueType({ type: s('samples'), unit: s('count') }), new ValueType({ type: s('cpu'), unit: s('nanoseconds') })]
      : [new ValueType({ type: s('space'), unit: s('bytes') })],
    sample: samples,
    location: table.locations,
    function: table.functions,
    stringTable: strings,
    ...(cpu
      ? {
          periodType: new ValueType({ type: s('cpu'), unit: s('nanoseconds') }),
          period: Math.round(model.intervalUs * 1000),
          timeNanos: BigInt(Date.now()) * 1_000_000n,
          durationNanos: Math.round(model.durationMs * 1e6)
        }
      : { periodType: new ValueType({ type: s('space'), unit: s('bytes') }) })
  })
  return gzipSync(profile.encode())
}

/**
 * pprof's functions and locations (a function at a line), each added on first use.
 * @param {import('./model.js').ProfileModel} model
 * @param {(text: string) => number} s the string table
 * @returns {{ location: (f: number, line: number) => number, functions: PprofFunction[], locations: Location[] }}
 *   location: the id of a frame's location at a line
 */
function locationTable (model, s) {
  /** @type {PprofFunction[]} */
  const functions = []
  /** @type {Map<number, number>} frame → function id */
  const functionOf = new Map()
  /** @type {Location[]} */
  const locations = []
  /** @type {Map<string, number>} */
  const locationOf = new Map()
  /** @param {number} f @param {number} line */
  const location = (f, line) => {
    const key = `${f}:${line}`
    let id = locationOf.get(key)
    if (id !== undefined) return id
    let fid = functionOf.get(f)
    if (fid === undefined) {
      const frame = model.frames[f]
      fid = functions.length + 1
      functions.push(new PprofFunction({ id: fid, name: s(frame.name), systemName: s(frame.name), filename: s(frame.file), startLine: frame.line }))
      functionOf.set(f, fid)
    }
    id = locations.length + 1
    locations.push(new Location({ id, line: [new Line({ functionId: fid, line })] }))
    locationOf.set(key, id)
    return id
  }
  return { location, functions, locations }
}

/**
 * One sample per node with samples (per line it was sampled on), its stack up to the process or thread it is in, which
 * becomes a `thread` label.
 * @param {import('./model.js').ProfileModel} model
 * @param {(f: number, line: number) => number} location
 * @param {(text: string) => number} s the string table
 * @returns {Sample[]}
 */
function pprofSamples (model, location, s) {
  const cpu = model.type === 'cpu'
  const threadOf = new Map((model.threads ?? []).map(t => [t.node, t.label]))
  /** @type {Sample[]} */
  const samples = []
  const { nodes, frames } = model
  for (const node of nodes) {
    // A sample can carry no time (two samples at one timestamp): it is still a sample.
    if ((node.self <= 0 && node.samples <= 0) || node.id === 0 || threadOf.has(node.id)) continue
    if (cpu && frames[node.frame].name === '(idle)' && frames[node.frame].kind === 'v8') continue
    /** @type {number[]} */
    const stack = []
    /** @type {Label[]} */
    const labels = []
    for (let p = node.parent; p > 0; p = nodes[p].parent) {
      const thread = threadOf.get(p)
      if (thread !== undefined) {
        labels.push(new Label({ key: s('thread'), str: s(thread) }))
        break
      }
      stack.push(location(nodes[p].frame, frames[nodes[p].frame].line))
    }
    // The leaf's samples, split over the lines they were taken on (positionTicks), so `pprof -lines` is exact.
    const parts = node.lines.length > 0 ? node.lines : [[frames[node.frame].line, node.self]]
    let countLeft = node.samples
    parts.forEach(([line, value], i) => {
      const count = i === parts.length - 1 ? countLeft : node.self > 0 ? Math.round(node.samples * value / node.self) : 0
      countLeft -= count
      const values = cpu ? [count, Math.round(value * 1e6)] : [Math.round(value)]
      samples.push(new Sample({ locationId: [location(node.frame, line), ...stack], value: values, label: labels }))
    })
  }
  return samples
}
