// One load split over N processes as the pods of `hotpath kube`'s Job run it, merged back from their logs.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import hdr from 'hdr-histogram-js'
import { parseAllDocuments } from 'yaml'
import { BIN, ROOT, hotpath } from './helpers/cli.js'
import { assertSchema } from './helpers/schema.js'
import { httpServer } from './helpers/servers.js'

/**
 * Runs a command to its end, feeding it `input` on stdin.
 * @param {string[]} argv
 * @param {{ env?: Record<string, string>, input?: string, timeout?: number }} [opts]
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
function run (argv, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: ROOT, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c })
    child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c })
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${argv.join(' ')} did not finish\n${stderr}`)) }, opts.timeout ?? 60_000)
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }) })
    child.stdin.end(opts.input ?? '')
  })
}

/**
 * @param {string} log
 * @param {...string} flags
 */
const merge = (log, ...flags) => run([process.execPath, BIN, 'merge', ...flags, '-'], { input: log })

/**
 * The result blocks of a log, one string each (markers included), in order.
 * @param {string} log
 */
function blocks (log) {
  return [...log.matchAll(/----- hotpath result begin[^\n]*\n[\s\S]*?----- hotpath result end -----\n/g)].map(m => m[0])
}

/**
 * @param {string} block
 * @returns {any}
 */
const resultOf = (block) => JSON.parse(block.split('\n').slice(1, -2).join('\n'))

/** @param {any} result */
const frame = (result) => `----- hotpath result begin: segment ${result.hotpath.segment.index}/4 of run ${result.hotpath.segment.run} -----\n${JSON.stringify(result, null, 2)}\n----- hotpath result end -----\n`

/** @type {Awaited<ReturnType<typeof httpServer>>} */
let server
/** @type {any} the load run by one process */
let whole
/** @type {string[]} each pod's log: its stderr, then its stdout, as kubectl logs prints one pod after another */
let podLogs = []
/** @type {any} */
let job
/** @type {number} */
let startAt

before(async () => {
  server = await httpServer((req, res) => { res.end('ok') })
  const flags = ['-c', '8', '-R', '400', '-d', '3']
  const one = await hotpath(['load', ...flags, '--json', '--no-progress', server.url])
  assert.equal(one.code, 0, one.stderr)
  whole = JSON.parse(one.stdout)

  const kube = await hotpath(['kube', ...flags, '--parallel', '4', '--start-in', '3s', server.url])
  assert.equal(kube.code, 0, kube.stderr)
  job = parseAllDocuments(kube.stdout).map(d => d.toJS()).find(d => d.kind === 'Job')
  const container = job.spec.template.spec.containers[0]
  // The pods' command line, with this checkout standing in for `npx --yes hotpath@<version>`.
  assert.deepEqual(container.command.slice(0, 2), ['npx', '--yes'])
  const argv = [process.execPath, BIN, ...container.command.slice(3)]
  startAt = Date.parse(argv[argv.indexOf('--start-at') + 1])
  const env = Object.fromEntries(container.env.map((/** @type {{ name: string, value: string }} */ e) => [e.name, e.value]))
  const pods = await Promise.all([0, 1, 2, 3].map(i => run(argv, { env: { ...env, JOB_COMPLETION_INDEX: String(i) } })))
  for (const pod of pods) assert.equal(pod.code, 0, pod.stderr)
  podLogs = pods.map(p => p.stderr + p.stdout)
})

after(() => server?.close())

test('four processes run as the Job\'s pods run them merge into the load one process gives', async () => {
  const segments = podLogs.map(log => resultOf(blocks(log)[0]))
  assert.deepEqual(segments.map(s => s.hotpath.segment.index), [1, 2, 3, 4])
  assert.deepEqual(segments.map(s => s.connections), [2, 2, 2, 2])
  assert.deepEqual(segments.map(s => s.hotpath.options.rate), [100, 100, 100, 100])
  for (const s of segments) {
    assert.equal(s.hotpath.segment.startAt, startAt, 'each records the start it was asked for')
    assert.ok(Math.abs(s.hotpath.segment.started - startAt) < 1000, `and when it began: ${s.hotpath.segment.started - startAt} ms after`)
  }
  assert.match(podLogs[0], /segment 1\/4 of run \w+ waits until .* to start/)

  const out = await merge(podLogs.join(''), '--json')
  assert.equal(out.code, 0, out.stderr)
  const merged = JSON.parse(out.stdout)
  assertSchema('load', merged)
  assert.equal(merged.failed, null)
  assert.equal(merged.connections, whole.connections)
  assert.equal(merged.hotpath.options.rate, whole.hotpath.options.rate)
  assert.equal(merged.hotpath.rate.asked, 400)
  const counts = Math.abs(merged.requests.total - whole.requests.total) / whole.requests.total
  assert.ok(counts <= 0.01, `merged ${merged.requests.total} requests, one process ${whole.requests.total}`)
  assert.equal(merged.merged.segments.count, 4)
  assert.equal(merged.merged.segments.run, job.metadata.labels['hotpath/run'])
  assert.ok(merged.merged.segments.startSkew < 1)
  assert.deepEqual(merged.merged.segments.rate, { intended: 400, achieved: merged.hotpath.rate.achieved })
  assert.match(out.stderr, /Segments: all 4 of run \w+, began within [\d.]+ s of each other.*of 400 intended/)

  // Percentiles come from the segments' histograms added, not from their percentiles.
  const sum = hdr.build({ bitBucketSize: 32, autoResize: true })
  for (const s of segments) sum.add(hdr.decodeFromCompressedBase64(s.hotpath.shard.histogram, 32, false))
  assert.equal(merged.latency.totalCount, segments.reduce((a, s) => a + s.requests.total, 0))
  assert.equal(merged.latency.p99, Math.round(sum.getValueAtPercentile(99)) / 1000)
  assert.equal(merged.latency.p50, Math.round(sum.getValueAtPercentile(50)) / 1000)
})

test('merge names a missing segment and exits non-zero', async () => {
  const log = podLogs.filter((_, i) => i !== 2).join('')
  const out = await merge(log)
  assert.equal(out.code, 2)
  assert.equal(out.stdout, '')
  assert.match(out.stderr, /^hotpath merge: segment 3\/4 of run \w+ is missing \(got 3 of 4\)/)
  assert.equal(out.stderr.trim().split('\n').length, 1)
})

test('merge - says which result a log cut short, and when a log holds none', async () => {
  const log = podLogs.join('')
  const cut = await merge(log.slice(0, log.lastIndexOf('----- hotpath result end')))
  assert.equal(cut.code, 2)
  assert.match(cut.stderr, /^hotpath merge: segment 4\/4 of run \w+ \(log line \d+\) is cut short: the log ends before its end marker/)
  const none = await merge('hotpath load: segment 1/4 of run x waits until …\n')
  assert.equal(none.code, 2)
  assert.match(none.stderr, /no hotpath result in the log read from stdin.*--tail=-1/)
})

test('merge refuses a segment given twice, and segments of different flags', async () => {
  const twice = await merge(podLogs.join('') + blocks(podLogs[1])[0])
  assert.equal(twice.code, 2)
  assert.match(twice.stderr, /segment 2\/4 of run \w+ is there twice/)

  const other = resultOf(blocks(podLogs[3])[0])
  other.hotpath.options.timeout = 5
  const differs = await merge(podLogs.slice(0, 3).join('') + frame(other))
  assert.equal(differs.code, 2)
  assert.match(differs.stderr, /segment 4\/4 of run \w+ \(log line \d+\)' ran with timeout 5 and .* with 10: the segments of one load share every flag/)
})

test('a segment that began more than a second late: merged, marked failed, named first, exit 3', async () => {
  const late = resultOf(blocks(podLogs[1])[0])
  const shift = 2500
  late.hotpath.segment.started += shift
  late.hotpath.shard.start += shift
  late.hotpath.shard.finish += shift
  for (const bin of late.hotpath.shard.series) bin.start += shift
  const out = await merge([podLogs[0], frame(late), podLogs[2], podLogs[3]].join(''), '--json')
  assert.equal(out.code, 3)
  const merged = JSON.parse(out.stdout)
  assert.equal(merged.failed.reason, 'out-of-step')
  assert.deepEqual(merged.merged.segments.outOfStep, [2])
  assert.match(out.stderr.split('\n')[0], /^hotpath merge: the segments did not load together: segment 2\/4 began 2\.\d s after segment \d\/4/)
  assert.equal(merged.requests.total, [0, 1, 2, 3].reduce((a, i) => a + resultOf(blocks(podLogs[i])[0]).requests.total, 0), 'the counts still add up')
})

test('merge reads logs whose lines carry kubectl\'s --prefix, interleaved', async () => {
  const lines = podLogs.map((log, i) => log.trimEnd().split('\n').map(l => `[pod/job-${i}-x/hotpath] ${l}`))
  /** @type {string[]} */
  const mixed = []
  for (let k = 0; k < Math.max(...lines.map(l => l.length)); k++) for (const l of lines) if (k < l.length) mixed.push(l[k])
  const out = await merge(mixed.join('\n') + '\n', '--json')
  assert.equal(out.code, 0, out.stderr)
  assert.equal(JSON.parse(out.stdout).connections, 8)
})

test('--amount and --requests split exactly: the parts send the whole amount, each path of the list', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-segment-'))
  try {
    const requests = join(dir, 'requests.json')
    await writeFile(requests, JSON.stringify([{ path: '/a' }, { path: '/b' }, { path: '/c' }]))
    const before = server.seen.requests
    const at = String(Date.now() + 2000)
    const parts = await Promise.all([1, 2, 3, 4].map(k => run([process.execPath, BIN, 'load', '--segment', `${k}/4`, '--start-at', at,
      '-c', '4', '-a', '402', '--requests', requests, '--json', '--no-progress', server.url])))
    for (const p of parts) assert.equal(p.code, 0, p.stderr)
    const results = parts.map(p => JSON.parse(p.stdout))
    assert.deepEqual(results.map(r => r.hotpath.options.amount), [101, 101, 100, 100])
    assert.deepEqual(results.map(r => r.requests.total), [101, 101, 100, 100])
    assert.equal(server.seen.requests - before, 402)
    for (const path of ['/a', '/b', '/c']) assert.ok((server.seen.paths[path] ?? 0) > 0, `${path} was sent`)
    assert.equal(new Set(results.map(r => r.hotpath.options.requestsHash)).size, 1, 'each part records the whole list')

    const files = await Promise.all(results.map(async (r, i) => {
      const file = join(dir, `part-${i + 1}.json`)
      await writeFile(file, JSON.stringify(r))
      return file
    }))
    const out = await hotpath(['merge', '--json', ...files])
    assert.equal(out.code, 0, out.stderr)
    assert.equal(JSON.parse(out.stdout).requests.total, 402)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('remainders go to the first segments, and the parts add up to the flags exactly', async () => {
  const at = String(Date.now() + 1500)
  const parts = await Promise.all([1, 2, 3, 4].map(k => run([process.execPath, BIN, 'load', '--segment', `${k}/4`, '--start-at', at,
    '-c', '10', '-R', '1001', '-d', '0.5', '--markers', '--no-progress', server.url])))
  for (const p of parts) assert.equal(p.code, 0, p.stderr)
  const results = parts.map(p => resultOf(blocks(p.stdout)[0]))
  assert.deepEqual(results.map(r => r.connections), [3, 3, 2, 2])
  assert.deepEqual(results.map(r => r.hotpath.options.rate), [250.25, 250.25, 250.25, 250.25])
  const out = await merge(parts.map(p => p.stdout).join(''), '--json')
  assert.equal(out.code, 0, out.stderr)
  const merged = JSON.parse(out.stdout)
  assert.equal(merged.connections, 10)
  assert.equal(merged.hotpath.options.rate, 1001)
})

test('segment and start flags: a bad value is one line and exit 2', async () => {
  const cases = [
    [['--segment', 'auto/4'], /JOB_COMPLETION_INDEX .* which is not set/],
    [['--segment', '5/4'], /--segment K\/N needs 1 <= K <= N/],
    [['--segment', '1/4', '-c', '2'], /split in 4 segments needs --connections of at least 4/],
    [['--start-at', 'tomorrow'], /--start-at must be an ISO time/],
    [['--run-id', 'x'], /give --segment too/]
  ]
  for (const [flags, message] of /** @type {[string[], RegExp][]} */ (cases)) {
    const out = await hotpath(['load', ...flags, 'http://127.0.0.1:9/'], { env: { JOB_COMPLETION_INDEX: '' } })
    assert.equal(out.code, 2, flags.join(' '))
    assert.match(out.stderr, message)
    assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr)
  }
})

test('Ctrl-C while waiting for --start-at stops at once, exit 130, the result marked interrupted', async () => {
  const child = spawn(process.execPath, [BIN, 'load', '--segment', '1/2', '--start-at', String(Date.now() + 60_000), '-c', '2', '-d', '2', '--json', server.url],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  let sent = false
  child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c })
  child.stderr.setEncoding('utf8').on('data', (c) => {
    stderr += c
    // One Ctrl-C: a second one leaves at once, by design.
    if (!sent && /waits until/.test(stderr)) child.kill('SIGINT')
    sent ||= /waits until/.test(stderr)
  })
  const code = await new Promise(resolve => child.on('close', resolve))
  assert.equal(code, 130, stderr)
  const result = JSON.parse(stdout)
  assert.equal(result.interrupted, true)
  assert.equal(result.requests.sent, 0)
})
