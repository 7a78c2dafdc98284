// What V8's CPU profiler costs a server per sample, measured inside one process: a hello server turns the profiler on
// and off a second at a time and counts its own CPU per request in each state, under a fixed arrival rate. Separate
// server processes differ by several percent with what their JIT happened to do and with a shared machine's moods;
// one process switching back and forth cancels both, and leaves the profiler. Phases are stepped through the
// intervals (none, 1 ms, … 10 ms), so each interval's cost is its CPU per request against the off phases around it.
// `sampler` among the intervals adds phases with the probe's runtime sampler on instead (10 ms, its samples kept and
// serialised once a second, as the probe's event log does), to weigh the two against each other.
//
//   npm run bench:profiler [-- --rate 30000 --duration 30 --intervals 1000,4000,10000,sampler]
//
// The server is pinned to CPU 1 (with V8's profiler threads, as a server on a busy machine shares its core with them)
// and hotpath load (--busy-poll) to CPU 0. The doctor's interval is chosen from this: src/run/profile-interval.js.
import { spawn } from 'node:child_process'
import http from 'node:http'
import inspector from 'node:inspector'
import { fileURLToPath } from 'node:url'
import { Sampler } from 'hotpath/runtime'
import { samplerOptions } from '../src/probe/probe.js'
import { benchArgs, median, startBenchServer } from './lib/measure.js'

const PHASE_MS = 1000
/** ms after each switch not counted: starting the profiler logs every compiled function, stopping it builds a profile */
const SETTLE_MS = 200

/** The phases' names for the sampler, which has no interval in µs. */
const SAMPLER = -1

if (process.argv[2] === '--serve') await serve(process.argv[3].split(',').map(Number))
else await main()

async function main () {
  const args = benchArgs({ rate: '30000', duration: '30', intervals: '1000,2000,4000,10000' })
  if (args.quick === 'true') args.duration = '12'
  const intervals = args.intervals.split(',').map(i => i === 'sampler' ? SAMPLER : Number(i))
  const { child: server, port } = await startBenchServer(['taskset', '-c', '1', process.execPath, fileURLToPath(import.meta.url), '--serve', intervals.join(',')])
  const hotpath = fileURLToPath(new URL('../bin/hotpath.js', import.meta.url))
  console.log(`hello server at ${args.rate} requests/s for ${args.duration} s, each part on and off a second at a time…`)
  const code = await new Promise(resolve => {
    spawn('taskset', ['-c', '0', process.execPath, hotpath, 'load', '-R', args.rate, '-c', '50', '--busy-poll', '-d', args.duration, '--no-progress', '-o', '/dev/null', `http://127.0.0.1:${port}/`], { stdio: ['ignore', 'ignore', 'inherit'] })
      .on('exit', resolve)
  })
  server.send('report')
  /** @type {{ phases: { interval: number, us: number, requests: number }[] }} */
  const report = await new Promise(resolve => server.once('message', resolve))
  server.kill()
  if (code !== 0) throw new Error(`the load exited with ${code}`)
  const off = median(report.phases.filter(p => p.interval === 0).map(p => p.us))
  console.log(`off: ${off.toFixed(2)} µs of CPU a request (median of ${report.phases.filter(p => p.interval === 0).length} phases)`)
  console.log('| on | samples/s | µs a request | cost | µs a sample |')
  console.log('| --- | --- | --- | --- | --- |')
  for (const interval of intervals) {
    const phases = report.phases.filter(p => p.interval === interval)
    if (phases.length === 0) continue
    const us = median(phases.map(p => p.us))
    const perSecond = interval === SAMPLER ? 100 : 1e6 / interval
    const rate = median(phases.map(p => p.requests)) / ((PHASE_MS - SETTLE_MS) / 1000)
    const perSample = (us - off) * rate / perSecond
    console.log(`| ${interval === SAMPLER ? 'the probe\'s sampler' : `the profiler, ${interval / 1000} ms`} | ${perSecond} | ${us.toFixed(2)} | ${((us / off - 1) * 100).toFixed(1)}% | ${perSample.toFixed(0)} |`)
  }
}

/** @param {number[]} intervals */
async function serve (intervals) {
  let served = 0
  const body = JSON.stringify({ hello: 'world' })
  const server = http.createServer((req, res) => {
    served++
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
    res.end(body)
  })
  const session = new inspector.Session()
  session.connect()
  const post = (/** @type {string} */ method, /** @type {object} */ params = {}) => new Promise((resolve, reject) => {
    session.post(method, params, (err, result) => err ? reject(err) : resolve(result))
  })
  /** @type {{ interval: number, us: number, requests: number }[]} */
  const phases = []
  // off, 1 ms, off, 2 ms, …: every profiled phase has an off phase on each side
  const cycle = intervals.flatMap(i => [0, i])
  let step = -1
  let profiling = false
  /** @type {Sampler | null} */
  let sampler = null
  /** @type {object[]} */
  let kept = []
  let serialised = 0
  setInterval(() => {
    for (const sample of kept) serialised += JSON.stringify(sample).length + 1
    kept = []
  }, 1000).unref()
  async function next () {
    step++
    const interval = cycle[step % cycle.length]
    if (profiling) {
      await post('Profiler.stop')
      profiling = false
    }
    sampler?.stop()
    sampler = null
    if (interval === SAMPLER) {
      sampler = new Sampler({ ...samplerOptions(10), onSample: (sample) => { kept.push(sample) } })
      sampler.start()
    } else if (interval > 0) {
      await post('Profiler.enable')
      await post('Profiler.setSamplingInterval', { interval })
      await post('Profiler.start')
      profiling = true
    }
    setTimeout(() => {
      const cpu = process.cpuUsage()
      const from = { cpu: cpu.user + cpu.system, served }
      setTimeout(() => {
        const end = process.cpuUsage()
        const requests = served - from.served
        if (requests > 0) phases.push({ interval, us: (end.user + end.system - from.cpu) / requests, requests })
        next().catch(() => {})
      }, PHASE_MS - SETTLE_MS)
    }, SETTLE_MS)
  }
  // The first two seconds warm the JIT up.
  server.once('request', () => setTimeout(() => { next().catch(() => {}) }, 2000))
  server.listen(0, '127.0.0.1', () => process.send?.({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }))
  process.on('message', () => process.send?.({ phases, serialised }))
}
