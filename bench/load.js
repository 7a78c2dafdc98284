// hotpath load against autocannon and wrk, in one run, alternating tools.
//
//   npm run bench:load [-- --duration 10 --rounds 3 --quick]
//
// A plain node:http hello server is pinned to CPU 1 and each generator to CPU 0, with the same connections.
// 1. Cost: client CPU time per request (user + system of the generator ÷ requests the server served), at -c 100 and at
//    -c 100 -p 10. The goal is ≤ 0.6× autocannon's; wrk (C) is the floor. With the server as the bottleneck, the
//    requests/s each tool got out of it should match the best peer's: on one machine a generator that sleeps between
//    responses makes the server's core pay to wake it, so hotpath --busy-poll (never sleeps under load) is measured
//    too: it trades the generator's CPU for the server's. hotpath --coalesce (naps between reads, off by default since
//    they time responses late) is measured beside the default.
// 2. Rate: asked vs achieved requests/s at rates up to and past the server's saturation, the generator's CPU per
//    request against autocannon -R's, and how late hotpath sent (its pacer polls the last 0.1–1 ms before each send).
// 3. Truth: a server that stalls 200 ms out of every 1000; at a constant arrival rate the true p99 is
//    200 × (1 − 0.01 / 0.2) = 190 ms. Reported: hotpath's p99 (from intended send times), its uncorrected p99,
//    autocannon -R's and wrk's.
import { fileURLToPath } from 'node:url'
import { benchArgs, hasCommand, median, runPinned, startCountingServer } from './lib/measure.js'

const args = benchArgs({ duration: '10', rounds: '3', scenarios: 'cost,rate,truth' })
const quick = args.quick === 'true'
const duration = quick ? 3 : Number(args.duration)
const rounds = quick ? 1 : Number(args.rounds)
const scenarios = new Set(args.scenarios.split(','))
const HOTPATH = fileURLToPath(new URL('../bin/hotpath.js', import.meta.url))
const AUTOCANNON = fileURLToPath(new URL('../node_modules/autocannon/autocannon.js', import.meta.url))
const WRK_PIPELINE = fileURLToPath(new URL('./wrk-pipeline.lua', import.meta.url))
const GENERATOR_CPU = 0
const SERVER_CPU = 1
const haveWrk = hasCommand('wrk')
if (!haveWrk) console.log('wrk not found (apt-get install -y wrk): its figures are skipped\n')

/**
 * @typedef {{ name: string, command: (url: string, o: { c: number, p: number, d: number, rate?: number }) => string[], p99: (output: string) => number }} Tool
 */

/** @type {Tool[]} */
const TOOLS = [
  {
    name: 'hotpath',
    command: (url, o) => [process.execPath, HOTPATH, 'load', '-c', String(o.c), '-p', String(o.p), '-d', String(o.d), ...(o.rate ? ['-R', String(o.rate)] : []), '--json', '--no-progress', url],
    p99: (output) => JSON.parse(output).latency.p99
  },
  {
    name: 'hotpath --coalesce',
    command: (url, o) => [process.execPath, HOTPATH, 'load', '--coalesce', '-c', String(o.c), '-p', String(o.p), '-d', String(o.d), ...(o.rate ? ['-R', String(o.rate)] : []), '--json', '--no-progress', url],
    p99: (output) => JSON.parse(output).latency.p99
  },
  {
    name: 'hotpath --busy-poll',
    command: (url, o) => [process.execPath, HOTPATH, 'load', '--busy-poll', '-c', String(o.c), '-p', String(o.p), '-d', String(o.d), ...(o.rate ? ['-R', String(o.rate)] : []), '--json', '--no-progress', url],
    p99: (output) => JSON.parse(output).latency.p99
  },
  {
    name: 'autocannon',
    command: (url, o) => [process.execPath, AUTOCANNON, '-c', String(o.c), '-p', String(o.p), '-d', String(o.d), ...(o.rate ? ['-R', String(o.rate)] : []), '--json', url],
    p99: (output) => JSON.parse(output.slice(output.indexOf('{'))).latency.p99
  },
  ...(haveWrk
    ? [{
        name: 'wrk',
        command: (/** @type {string} */ url, /** @type {{ c: number, p: number, d: number }} */ o) => ['wrk', '-t', '1', '-c', String(o.c), '-d', `${o.d}s`, '--latency', ...(o.p > 1 ? ['-s', WRK_PIPELINE] : []), url, ...(o.p > 1 ? ['--', String(o.p)] : [])],
        p99: (/** @type {string} */ output) => wrkMs(/\s99%\s+([\d.]+)(us|ms|s)/.exec(output))
      }]
    : [])
]

/** @param {RegExpExecArray | null} m */
function wrkMs (m) {
  if (!m) return NaN
  return Number(m[1]) * ({ us: 0.001, ms: 1, s: 1000 })[/** @type {'us' | 'ms' | 's'} */ (m[2])]
}

const fmt = (/** @type {number} */ n, digits = 2) => Number.isFinite(n) ? n.toFixed(digits) : '–'

async function cost () {
  const server = await startCountingServer(SERVER_CPU)
  try {
    for (const p of [1, 10]) {
      /** @type {Record<string, { usPerRequest: number[], rps: number[] }>} */
      const by = Object.fromEntries(TOOLS.map(t => [t.name, { usPerRequest: [], rps: [] }]))
      for (let round = 0; round < rounds; round++) {
        // rotate the order every round so no tool always runs first (or last) on a warm or noisy machine
        const order = TOOLS.map((_, i) => TOOLS[(i + round) % TOOLS.length])
        for (const tool of order) {
          await server.count()
          const run = await runPinned(GENERATOR_CPU, tool.command(server.url, { c: 100, p, d: duration }))
          const served = await server.count()
          if (run.code !== 0) throw new Error(`${tool.name} failed:\n${run.output}`)
          by[tool.name].usPerRequest.push((run.cpu * 1e6) / served)
          by[tool.name].rps.push(served / duration)
        }
      }
      const hp = median(by.hotpath.usPerRequest)
      const ac = median(by.autocannon.usPerRequest)
      const bestPeerRps = Math.max(...TOOLS.filter(t => !t.name.startsWith('hotpath')).map(t => median(by[t.name].rps)))
      console.log(`-c 100 -p ${p}, ${duration} s × ${rounds} rounds (medians)`)
      for (const t of TOOLS) {
        const us = by[t.name].usPerRequest
        const spread = rounds > 1 ? ` (${fmt(Math.min(...us))}–${fmt(Math.max(...us))})` : ''
        console.log(`  ${t.name.padEnd(20)} ${fmt(median(us)).padStart(6)} µs CPU/request${spread.padEnd(14)} ${Math.round(median(by[t.name].rps)).toLocaleString('en-US').padStart(8)} req/s served`)
      }
      console.log(`  CPU per request: hotpath/autocannon = ${fmt(hp / ac)} (goal ≤ 0.60), hotpath --coalesce/autocannon = ${fmt(median(by['hotpath --coalesce'].usPerRequest) / ac)}` +
        (haveWrk ? `, hotpath/wrk = ${fmt(hp / median(by.wrk.usPerRequest))}` : ''))
      console.log(`  requests/s served, against the best peer: hotpath ${fmt(median(by.hotpath.rps) / bestPeerRps)}, hotpath --busy-poll ${fmt(median(by['hotpath --busy-poll'].rps) / bestPeerRps)} (goal ≈ 1.00)\n`)
    }
  } finally {
    server.stop()
  }
}

async function rate () {
  const server = await startCountingServer(SERVER_CPU)
  const autocannon = /** @type {Tool} */ (TOOLS.find(t => t.name === 'autocannon'))
  try {
    console.log(`Constant arrival rate, -c 100, ${duration} s each; CPU per request served (µs), hotpath's send lateness and p50s (ms)`)
    console.log('  asked req/s   achieved   served    error   kept up   CPU hotpath   autocannon -R   ratio   late p50     p99   p50 corr / uncorr')
    for (const asked of [100, 1000, 10000, 30000, 200000]) {
      await server.count()
      const run = await runPinned(GENERATOR_CPU, TOOLS[0].command(server.url, { c: 100, p: 1, d: duration, rate: asked }))
      const served = await server.count()
      const r = JSON.parse(run.output)
      const peer = await runPinned(GENERATOR_CPU, autocannon.command(server.url, { c: 100, p: 1, d: duration, rate: asked }))
      const peerServed = await server.count()
      const achieved = r.hotpath.rate.achieved
      const hpUs = (run.cpu * 1e6) / served
      const acUs = (peer.cpu * 1e6) / peerServed
      const late = r.hotpath.sendLateness
      console.log(`  ${asked.toLocaleString('en-US').padStart(11)}   ${Math.round(achieved).toLocaleString('en-US').padStart(8)}   ${Math.round(served / duration).toLocaleString('en-US').padStart(6)}   ${fmt((100 * (achieved - asked)) / asked, 2).padStart(6)}%   ${(r.hotpath.rate.keptUp ? 'yes' : 'no').padEnd(7)}` +
        `   ${fmt(hpUs).padStart(11)}   ${fmt(acUs).padStart(13)}   ${fmt(hpUs / acUs).padStart(5)}   ${fmt(late.p50, 3).padStart(8)}   ${fmt(late.p99, 2).padStart(5)}   ${fmt(r.latency.p50, 3)} / ${fmt(r.hotpath.uncorrectedLatency.p50, 3)}`)
    }
    console.log('')
  } finally {
    server.stop()
  }
}

async function truth () {
  const server = await startCountingServer(SERVER_CPU, { STALL_MS: '200', STALL_EVERY_MS: '1000' })
  const d = Math.max(duration, 5)
  try {
    const truthP99 = 200 * (1 - 0.01 / 0.2)
    console.log(`Server stalling 200 ms every 1000 ms, 1000 req/s asked, -c 10, ${d} s: true p99 ≈ ${truthP99} ms`)
    const hp = JSON.parse((await runPinned(GENERATOR_CPU, TOOLS[0].command(server.url, { c: 10, p: 1, d, rate: 1000 }))).output)
    console.log(`  hotpath -R (intended send times)   p99 ${fmt(hp.latency.p99, 1).padStart(7)} ms   (${fmt(hp.latency.p99 / truthP99)}× the truth)`)
    console.log(`  hotpath -R uncorrected             p99 ${fmt(hp.hotpath.uncorrectedLatency.p99, 1).padStart(7)} ms`)
    for (const tool of TOOLS.filter(t => !t.name.startsWith('hotpath'))) {
      const rate = tool.name === 'autocannon' ? 1000 : undefined
      const run = await runPinned(GENERATOR_CPU, tool.command(server.url, { c: 10, p: 1, d, rate }))
      console.log(`  ${(tool.name + (rate ? ' -R' : ' (closed loop)')).padEnd(35)}p99 ${fmt(tool.p99(run.output), 1).padStart(7)} ms`)
    }
    console.log('')
  } finally {
    server.stop()
  }
}

console.log(`hotpath load benchmark — Node ${process.version}, generator on CPU ${GENERATOR_CPU}, server on CPU ${SERVER_CPU}\n`)
if (scenarios.has('cost')) await cost()
if (scenarios.has('rate')) await rate()
if (scenarios.has('truth')) await truth()
