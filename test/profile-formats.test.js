// Every format hotpath writes, read back: pprof with pprof-format's decoder, collapsed stacks as flamegraph.pl reads
// them, the .cpuprofile through hotpath's own model.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { gunzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { Profile } from 'pprof-format'
import { buildProfile, heapToPprof, parseProfile, startHeapSampling, toCollapsed, toPprof } from 'hotpath'
import { recordCpuProfile } from './fixtures/profiles/record.js'

const script = fileURLToPath(new URL('./fixtures/profiles/etag-server.js', import.meta.url))
/** @type {import('../src/profile/cpuprofile.js').CpuProfile} */
let profile

before(async () => {
  profile = (await recordCpuProfile(script)).profile
})

/** @param {Uint8Array} bytes */
function decode (bytes) {
  const p = Profile.decode(gunzipSync(bytes))
  const str = (/** @type {number | bigint} */ i) => p.stringTable.strings[Number(i)]
  return { p, str }
}

test('pprof: decodes with pprof-format; samples, CPU time, functions and lines match the profile', () => {
  const model = buildProfile(profile)
  const { p, str } = decode(toPprof(profile))
  assert.deepEqual(p.sampleType.map(t => [str(t.type), str(t.unit)]), [['samples', 'count'], ['cpu', 'nanoseconds']])
  assert.equal(str(/** @type {import('pprof-format').ValueType} */ (p.periodType).type), 'cpu')
  assert.ok(Number(p.period) > 0)
  const idleSamples = model.nodes.filter(n => model.frames[n.frame].name === '(idle)').reduce((s, n) => s + n.samples, 0)
  const count = p.sample.reduce((s, x) => s + Number(x.value[0]), 0)
  assert.equal(count, model.samples - idleSamples)
  const ns = p.sample.reduce((s, x) => s + Number(x.value[1]), 0)
  assert.ok(Math.abs(ns / 1e6 - model.total) < model.total * 0.01, `${ns / 1e6} ms vs ${model.total}`)
  const etag = p.function.find(f => str(f.name) === 'etag')
  assert.ok(etag, 'etag is a function')
  assert.equal(str(etag.filename), script)
  // every sample's stack resolves to known locations, leaf first
  const locations = new Map(p.location.map(l => [Number(l.id), l]))
  for (const sample of p.sample) for (const id of sample.locationId) assert.ok(locations.has(Number(id)))
  // the leaf lines of etag are the lines its samples were taken on
  const etagLines = new Set(p.location.filter(l => Number(l.line[0].functionId) === Number(etag.id)).map(l => Number(l.line[0].line)))
  const frame = /** @type {import('../src/profile/model.js').ProfileFrame} */ (model.frames.find(f => f.name === 'etag'))
  for (const [line] of frame.lines) assert.ok(etagLines.has(line), `line ${line} of etag in the pprof`)
})

test('pprof of several processes: each sample carries its thread label', () => {
  const { p, str } = decode(toPprof([{ profile, label: 'pid 1' }, { profile, label: 'pid 2' }]))
  const labels = new Set(p.sample.map(s => s.label.map(l => `${str(l.key)}=${str(l.str)}`).join()))
  assert.deepEqual([...labels].sort(), ['thread=pid 1', 'thread=pid 2'])
  const single = decode(toPprof(profile)).p
  const total = (/** @type {Profile} */ x) => x.sample.reduce((s, y) => s + Number(y.value[0]), 0)
  assert.equal(total(p), 2 * total(single))
})

test('heap pprof: bytes per allocation site', async () => {
  const capture = await startHeapSampling({ interval: 1024 })
  const keep = Array.from({ length: 5000 }, (_, i) => ({ i, s: `value ${i}` }))
  const { p, str } = decode(heapToPprof(await capture.stop()))
  assert.deepEqual(p.sampleType.map(t => [str(t.type), str(t.unit)]), [['space', 'bytes']])
  assert.ok(p.sample.reduce((s, x) => s + Number(x.value[0]), 0) > 0)
  assert.ok(keep.length)
})

test('collapsed stacks: one line per stack, root first, counts add up to the samples', () => {
  const model = buildProfile(profile)
  const text = toCollapsed(profile)
  const lines = text.trimEnd().split('\n')
  let total = 0
  for (const line of lines) {
    const m = /^(.+) (\d+)$/.exec(line)
    assert.ok(m, `line shape: ${line}`)
    total += Number(m[2])
    assert.ok(!m[1].startsWith(';') && !m[1].includes(';;'))
  }
  assert.equal(total, model.samples)
  assert.ok(lines.some(l => /etag \(.*etag-server\.js:\d+\);update \(node:internal\/crypto\/hash:\d+\)/.test(l)))
  assert.ok(new Set(lines.map(l => l.slice(0, l.lastIndexOf(' ')))).size === lines.length, 'each stack once')
})

test('.cpuprofile: the JSON written reads back into the same model', () => {
  const again = parseProfile(JSON.parse(JSON.stringify(profile)))
  assert.equal(again.type, 'cpu')
  const a = buildProfile(profile)
  const b = buildProfile(/** @type {import('../src/profile/cpuprofile.js').CpuProfile} */ (again.profile))
  assert.equal(b.total, a.total)
  assert.equal(b.samples, a.samples)
  assert.deepEqual(b.frames.map(f => [f.name, f.file, f.line, f.self]), a.frames.map(f => [f.name, f.file, f.line, f.self]))
})
