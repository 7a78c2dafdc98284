// A saved run is untrusted input (a file copied from elsewhere, cut short by a crash, edited by hand): the report
// must render from whatever of it parses, never throw, and never balloon. Seeded random damage to a real run.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, readdir, writeFile, cp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { diagnose } from '../src/analysis/diagnose.js'
import { readRun } from '../src/analysis/run-data.js'
import { renderReport } from '../src/report/html/index.js'
import { hotpath } from './helpers/cli.js'

const work = await mkdtemp(join(tmpdir(), 'hotpath-report-fuzz-'))
const good = join(work, 'good')
/** @type {import('../src/analysis/diagnose.js').Diagnosis} */
let diagnosis

before(async () => {
  const r = await hotpath(['doctor', '-d', '1', '--no-progress', '--save', good, '--', process.execPath, 'examples/hello/server.js'], { env: { PORT: '0' } })
  assert.equal(r.code, 0, r.stderr)
  diagnosis = diagnose(readRun(good))
})

let seed = 20261122
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
const pick = (/** @type {any[]} */ xs) => xs[Math.floor(rand() * xs.length)]
const JUNK = [null, -1, 0, 1e300, -1e300, 'x', '', [], [1, 2], {}, { p99: 'a' }, true, 2 ** 53]

/**
 * Replaces a random value somewhere inside `value` with junk.
 * @param {any} value
 */
function damage (value) {
  if (value === null || typeof value !== 'object') return pick(JUNK)
  const keys = Object.keys(value)
  if (keys.length === 0) return pick(JUNK)
  const k = pick(keys)
  value[k] = rand() < 0.4 ? pick(JUNK) : damage(value[k])
  return value
}

/**
 * @param {string} html
 */
function embedded (html) {
  const m = /<script type="application\/json" id="hotpath-report-data">([\s\S]*?)<\/script>/.exec(html)
  assert.ok(m)
  return JSON.parse(m[1])
}

test('damaged samples, bins, times and cut lines: the report still renders, small and parseable', async () => {
  const files = (await readdir(good)).filter(f => f.startsWith('events-'))
  const run = JSON.parse(await readFile(join(good, 'run.json'), 'utf8'))
  for (let round = 0; round < 60; round++) {
    const dir = join(work, `r${round}`)
    await cp(good, dir, { recursive: true })
    for (const f of files) {
      const lines = (await readFile(join(good, f), 'utf8')).split('\n')
      const out = lines.map(line => {
        if (!line || rand() > 0.08) return line
        const r = rand()
        if (r < 0.25) return line.slice(0, Math.floor(rand() * line.length)) // cut mid-write
        try {
          const e = JSON.parse(line)
          if (r < 0.5 && e.type === 'sample') e.time = pick([1e300, -1e300, e.time + 1e12, 0])
          else if (r < 0.6 && e.type === 'sample') e.interval = pick([1e300, -5, 0])
          else damage(e)
          return JSON.stringify(e)
        } catch {
          return line
        }
      })
      await writeFile(join(dir, f), out.join('\n'))
    }
    const r = structuredClone(run)
    if (round % 3 === 0 && r.load) damage(r.load.hotpath.shard.series)
    if (round % 5 === 0 && r.load) r.load.hotpath.shard.series.push({ start: 1e300, duration: 1e300, requests: 5, errors: 0, bytes: 0, histogram: 'not base64' })
    await writeFile(join(dir, 'run.json'), JSON.stringify(r))
    const html = renderReport(diagnosis, readRun(dir))
    assert.ok(html.length < 2e6, `round ${round}: ${html.length} bytes`)
    const data = embedded(html)
    const [from, to] = data.runs[0].series.range
    assert.ok(to - from < 3600, `round ${round}: the charts span ${to - from} s, not the damaged times`)
    for (const t of data.runs[0].series.threads) {
      assert.equal(t.delay.max.length, data.runs[0].series.fine.x.length, `round ${round}: series on the grid`)
    }
  }
})

test('a run whose profiles are missing or not profiles renders without a flame graph', async () => {
  const dir = join(work, 'no-profiles')
  await cp(good, dir, { recursive: true })
  for (const f of await readdir(dir)) {
    if (f.endsWith('.cpuprofile') || f.endsWith('.heapprofile')) await writeFile(join(dir, f), '{"nodes": "nope"}')
  }
  const html = renderReport(diagnosis, readRun(dir))
  assert.equal(embedded(html).flame.cpu, null)
  assert.match(html, /No CPU profile was recorded in this run/)
})
