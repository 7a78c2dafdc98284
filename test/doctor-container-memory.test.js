// The container's memory as the ceiling: a memory cgroup made for the test (160 MB), the target moved into it before
// node starts, and a heap limit above it, so that the container's memory runs out before V8's limit. What happens then
// is the kernel's out-of-memory killer (SIGKILL), not V8's error: doctor must say so, with the container's limit read
// from the target's own cgroup. Skipped where a cgroup cannot be made (not root, cgroups read-only, none mounted).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath, ROOT } from './helpers/cli.js'
import { assertSchema } from './helpers/schema.js'

const LIMIT = 160 * 1048576

/**
 * A child of this process's memory cgroup with a limit, v1 (memory.limit_in_bytes) or v2 (memory.max); a reason
 * when one cannot be made.
 * @returns {{ dir: string } | { skip: string }}
 */
function memoryCgroup () {
  let groups
  try {
    groups = readFileSync('/proc/self/cgroup', 'utf8').split('\n')
  } catch {
    return { skip: 'no /proc/self/cgroup (not Linux)' }
  }
  const v1 = groups.map(l => l.split(':')).find(([, c]) => c?.split(',').includes('memory'))
  const v2 = groups.map(l => l.split(':')).find(([, c]) => c === '')
  const tries = [
    ...(v1 ? [{ parent: `/sys/fs/cgroup/memory${v1[2]}`, file: 'memory.limit_in_bytes' }] : []),
    ...(v2 ? [{ parent: `/sys/fs/cgroup${v2[2]}`, file: 'memory.max' }] : [])
  ]
  const why = []
  for (const { parent, file } of tries) {
    const dir = join(parent, `hotpath-test-${process.pid}`)
    try {
      mkdirSync(dir)
    } catch (err) {
      why.push(`${parent}: ${/** @type {NodeJS.ErrnoException} */ (err).code}`)
      continue
    }
    try {
      writeFileSync(join(dir, file), String(LIMIT))
      return { dir }
    } catch (err) {
      why.push(`${dir}/${file}: ${/** @type {NodeJS.ErrnoException} */ (err).code}`)
      rmdirSync(dir)
    }
  }
  return { skip: `cannot make a memory cgroup with a limit (${why.join('; ') || 'no memory controller'})` }
}

test('a target whose container runs out of memory before its heap limit: killed, and the container named as the ceiling', async (t) => {
  const group = memoryCgroup()
  if ('skip' in group) return t.skip(group.skip)
  t.after(() => { try { rmdirSync(group.dir) } catch {} })
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-container-memory-'))
  // The wrapper moves itself into the group, then becomes node: the target and all it starts live under its limit.
  const wrapper = `echo $$ > ${group.dir}/cgroup.procs && exec "$0" "$@"`
  const server = join(ROOT, 'test', 'fixtures', 'servers', 'heap-kept-forever.js')
  // V8's limit above the container's memory comes from NODE_OPTIONS, where the limit doctor tries next can follow it.
  const run = await hotpath(['doctor', '-d', '3', '-c', '30', '--no-progress', '--save', join(dir, 'run'), '--json', '-', '--',
    'sh', '-c', wrapper, process.execPath, server], { timeout: 120_000, alone: true, env: { NODE_OPTIONS: '--max-old-space-size=512' } })
  assert.equal(run.code, 4, `doctor exited ${run.code}\n${run.stderr}`)
  const d = JSON.parse(run.stdout)
  assertSchema('doctor', d)
  const f = d.failure.facts
  // A heap limit of 512 MB in a 160 MB container: the kernel kills it before V8's limit is near.
  assert.equal(f.kind, 'memory-killed', `${d.summary}\n${JSON.stringify(f)}`)
  assert.equal(f.signal, 'SIGKILL')
  assert.equal(f.oomKill, true)
  assert.equal(f.memoryLimit, LIMIT)
  assert.equal(f.ceiling, 'container')
  assert.ok(f.heapLimit >= 512 * 1048576, `limit ${f.heapLimit}`)
  assert.equal(f.raiseTo, null)
  assert.match(d.summary, /killed on signal SIGKILL at the container's memory limit \(the out-of-memory killer killed it\)/)
  assert.equal(d.facts.recommendations[0].kind, 'memory-killed')
  assert.match(d.recommendations[0], /The kernel's out-of-memory killer killed it \(SIGKILL; its memory group counted the kill\) at the container's 160 MB\./)
  // No larger heap limit is tried — the container is the ceiling — but the one within it that the advice proposes is,
  // in the same container: this server keeps all it is given, so V8's error comes in place of the kill, or the kill
  // again if the rest of the process fills the container first. Either is said first in the advice.
  const r = d.heapRetry
  assert.ok(r, 'a heap limit within the container is tried')
  assert.equal(r.flag, '--max-old-space-size=120')
  assert.equal(r.lowered, true)
  if (r.outcome === 'crashed') {
    assert.match(d.recommendations[0], /V8's heap limit of \d+ MB is above the container's 160 MB, .* set node --max-old-space-size=120 /)
    assert.match(d.recommendations[0], /^Measured: with --max-old-space-size=120 the heap ran out after [\d.]+ s of load .*, with V8's error instead of a kill: the load holds more on the heap than the container's 160 MB has room for\. /)
    assert.match(r.summary, /heap ran out \(V8's error, not a kill\)/)
  } else {
    assert.equal(r.outcome, 'exited', JSON.stringify(r))
    assert.equal(r.exit.signal, 'SIGKILL')
    assert.match(d.recommendations[0], /^Measured: with --max-old-space-size=120 it was killed again after [\d.]+ s of load/)
    assert.doesNotMatch(d.recommendations[0], /set node --max-old-space-size=120/, 'a limit measured not to help is not advised')
  }
  // A process that dies within the gauge's first quarter second has no limit read: the heap it ran out at says it.
  assert.ok((r.heapLimit === null || r.heapLimit < LIMIT) && r.peakHeap !== null && r.peakHeap < LIMIT, JSON.stringify(r))
  assert.match(run.stderr, /Loading it again with --max-old-space-size=120, the lower limit the advice proposes/)
})
