// Profiles come from disk: whatever a file holds, reading it either works or fails with one UsageError — never a
// crash, a hang or a stack trace — and whatever reads successfully can be modelled, blamed and written in every format.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildHeapProfile, buildProfile, findCulprits, parseProfile, readProfileFile, startCpuProfile, startHeapSampling, toCollapsed, toPprof } from 'hotpath'
import { modelToCollapsed } from '../src/profile/collapsed.js'
import { modelToPprof } from '../src/profile/pprof.js'
import { UsageError } from '../src/errors.js'

/** A small seeded PRNG (mulberry32), so a failure replays. @param {number} seed */
function prng (seed) {
  return () => {
    seed = (seed + 0x6D2B79F5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WEIRD = [undefined, null, -1, 0, 1, 2 ** 53, -(2 ** 31), 1.5, NaN, Infinity, '', 'x', '1', [], [1, 2], {}, { id: 1 }, true, '(root)', 'node:fs', 'file:///x.js', '%E0%A4%A']

/**
 * @param {any} value
 * @param {() => number} rand
 * @param {number} depth
 */
function mutate (value, rand, depth = 0) {
  const pick = (/** @type {any[]} */ a) => a[Math.floor(rand() * a.length)]
  if (depth > 6 || rand() < 0.15) return pick(WEIRD)
  if (Array.isArray(value)) {
    const copy = value.slice()
    if (copy.length > 0) {
      const i = Math.floor(rand() * copy.length)
      const r = rand()
      if (r < 0.3) copy.splice(i, 1)
      else if (r < 0.5) copy.push(copy[i])
      else copy[i] = mutate(copy[i], rand, depth + 1)
    } else {
      copy.push(pick(WEIRD))
    }
    return copy
  }
  if (value && typeof value === 'object') {
    const copy = { ...value }
    const keys = Object.keys(copy)
    const key = pick(keys)
    const r = rand()
    if (r < 0.2) delete copy[key]
    else copy[key] = mutate(copy[key], rand, depth + 1)
    return copy
  }
  return pick(WEIRD)
}

/** @param {any} data */
function exercise (data) {
  let parsed
  try {
    parsed = parseProfile(data)
  } catch (err) {
    assert.ok(err instanceof UsageError, `not a UsageError: ${/** @type {Error} */ (err)?.stack}`)
    assert.ok(!/\n/.test(err.message), 'one line')
    return false
  }
  const model = parsed.type === 'cpu' ? buildProfile(parsed.profile) : buildHeapProfile(parsed.profile)
  assert.ok(Number.isFinite(model.total))
  for (const node of model.nodes) assert.ok(node.total >= node.self - 1e-9 && Number.isFinite(node.total))
  findCulprits(model, { minShare: 0 })
  modelToPprof(model)
  modelToCollapsed(model)
  return true
}

test('mutated CPU profiles: each one reads or fails with a UsageError; what reads is usable', async () => {
  const capture = await startCpuProfile({ interval: 100 })
  const end = Date.now() + 50
  while (Date.now() < end) JSON.stringify({ a: [1, 2, 3] })
  const base = await capture.stop()
  assert.ok(exercise(base))
  const rand = prng(42)
  let ok = 0
  for (let i = 0; i < 1500; i++) {
    let data = /** @type {any} */ (base)
    const rounds = 1 + Math.floor(rand() * 3)
    for (let r = 0; r < rounds; r++) data = mutate(data, rand)
    if (exercise(data)) ok++
  }
  assert.ok(ok > 50 && ok < 1500, `${ok} of 1500 read: both outcomes are exercised`)
})

test('mutated heap profiles: each one reads or fails with a UsageError', async () => {
  const capture = await startHeapSampling({ interval: 512 })
  const keep = Array.from({ length: 2000 }, (_, i) => ({ i }))
  const base = await capture.stop()
  assert.ok(keep.length && exercise(base))
  const rand = prng(7)
  for (let i = 0; i < 800; i++) exercise(mutate(base, rand))
})

test('hostile shapes: cycles, shared children, deep chains, unknown sample ids, wrong types', () => {
  const frame = (/** @type {string} */ name) => ({ functionName: name, url: 'file:///app.js', scriptId: '1', lineNumber: 1, columnNumber: 1 })
  const cases = [
    { nodes: [{ id: 1, callFrame: frame('(root)'), children: [2] }, { id: 2, callFrame: frame('a'), children: [1] }] },
    { nodes: [{ id: 1, callFrame: frame('(root)'), children: [2, 3] }, { id: 2, callFrame: frame('a'), children: [3] }, { id: 3, callFrame: frame('b') }] },
    { nodes: [{ id: 1, callFrame: frame('(root)'), children: [1] }] },
    { nodes: [{ id: 1, callFrame: frame('(root)') }, { id: 2, callFrame: frame('a'), children: [3] }, { id: 3, callFrame: frame('b'), children: [2] }] },
    { nodes: [{ id: 1, callFrame: frame('(root)') }], samples: [1, 99], timeDeltas: [1, 1] },
    { nodes: [{ id: 1, callFrame: frame('(root)') }], samples: [1], timeDeltas: [1, 2] },
    { nodes: [{ id: 1, callFrame: frame('(root)') }, { id: 1, callFrame: frame('a') }] },
    { nodes: 'nodes' },
    { nodes: [] },
    [],
    'profile',
    null,
    { head: { callFrame: frame('(root)'), children: 'x' } },
    { head: { callFrame: null } }
  ]
  for (const c of cases) assert.throws(() => parseProfile(c), UsageError, JSON.stringify(c).slice(0, 80))

  // A chain 50 000 deep is a valid (if odd) profile: it must be modelled without blowing the stack.
  const deep = [{ id: 1, callFrame: frame('(root)'), children: [2] }]
  for (let i = 2; i <= 50_000; i++) deep.push({ id: i, callFrame: frame(`f${i % 7}`), children: i < 50_000 ? [i + 1] : [] })
  const profile = { nodes: deep, startTime: 0, endTime: 1000, samples: [50_000, 25_000], timeDeltas: [10, 10] }
  assert.ok(exercise(profile))
  assert.ok(toPprof(profile).length > 0)
  assert.ok(toCollapsed(profile).length > 0)
})

test('files that are not profiles: one clear UsageError', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-fuzz-'))
  const rand = prng(3)
  const valid = JSON.stringify({ nodes: [{ id: 1, callFrame: { functionName: '(root)', url: '', scriptId: '0', lineNumber: -1, columnNumber: -1 } }], startTime: 0, endTime: 1 })
  for (let i = 0; i < 30; i++) {
    const file = join(dir, `p${i}.cpuprofile`)
    await writeFile(file, valid.slice(0, Math.floor(rand() * (valid.length - 1))))
    await assert.rejects(readProfileFile(file), (err) => err instanceof UsageError && err.message.includes(file))
  }
  await assert.rejects(readProfileFile(join(dir, 'missing.cpuprofile')), /cannot read .*ENOENT/)
  await writeFile(join(dir, 'ok.cpuprofile'), valid)
  assert.equal((await readProfileFile(join(dir, 'ok.cpuprofile'))).type, 'cpu')
})
