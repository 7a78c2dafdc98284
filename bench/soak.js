// Soak: is hotpath/runtime safe to leave on? A JSON server with the whole runtime on (monitor, overload protection,
// Prometheus metrics, on-demand profiler) and the same server with nothing on take the same steady fixed-rate load for
// --minutes; two scrapers read the runtime server's /metrics every second, half a second apart (an HA pair of
// Prometheus servers); the profiler captures 10 s every minute; both servers stall their loop for 200 ms every 30 s.
// It reports:
//   - memory: RSS and heap-used slopes (MB per minute, least squares over the run after its first fifth) of both;
//   - throughput: the servers' CPU per request over the soak (every cost included: scrapes, captures, stalls), and
//     closed-loop rounds alternated between the two servers after it (stalls paused), median ratio runtime / off;
//   - stalls: how many were injected, and how many each scraper saw (ticks over 100 ms in the delay histogram).
//
//   npm run bench:soak -- --minutes 10 [--rate 500] [--rounds 20] [--capture-every 60 (s; 0: none)]
//
// The servers run in child processes (this file with --serve <variant>); hotpath load drives them from this process.
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { load } from 'hotpath'
import { jsonApiHandler } from './lib/json-api.js'

/** @typedef {'off' | 'runtime'} Variant */

const STALL_EVERY = 30000
const STALL_MS = 200
const CAPTURE_SECONDS = 10

if (process.argv[2] === '--serve') await serve(/** @type {Variant} */ (process.argv[3]), process.argv[4], Number(process.argv[5]))
else await main()

/**
 * @param {Variant} variant
 * @param {string} dir where the runtime server's profiler writes
 * @param {number} captureEvery seconds between captures (0: none)
 */
async function serve (variant, dir, captureEvery) {
  /** @type {http.RequestListener} */
  let handler = jsonApiHandler()
  let stalls = 0
  const captures = { ok: 0, failed: /** @type {string[]} */ ([]) }
  /** @type {(() => Promise<string>) | null} */
  let metrics = null
  if (variant === 'runtime') {
    const { monitor, overloadProtection, profiler, registerMetrics } = await import('hotpath/runtime')
    const { default: client } = await import('prom-client')
    const m = monitor({ interval: 1000 })
    // thresholds a production server would set: never reached here (the injected stall is short of a second's mean)
    const guard = overloadProtection({ monitor: m, maxEventLoopDelay: 1000, maxHeapUsedBytes: 4e9, maxRssBytes: 8e9, maxEventLoopUtilisation: 0.999, exposeStatusRoute: true })
    handler = guard.http(handler)
    const registry = new client.Registry()
    registerMetrics(registry, { monitor: m })
    metrics = () => registry.metrics()
    const p = profiler({ dir, signal: false, duration: CAPTURE_SECONDS })
    const capture = () => {
      p.capture().then((r) => {
        if (r.ok) captures.ok++
        else captures.failed.push(r.reason + (r.error ? `: ${r.error}` : ''))
      }, (err) => captures.failed.push(String(err)))
    }
    if (captureEvery > 0) setTimeout(() => { capture(); setInterval(capture, captureEvery * 1000) }, 20000)
  }
  let quiet = false
  setInterval(() => {
    if (quiet) return
    const end = Date.now() + STALL_MS
    while (Date.now() < end);
    stalls++
  }, STALL_EVERY)
  const app = handler
  const server = http.createServer((req, res) => {
    if (req.url === '/metrics' && metrics !== null) {
      metrics().then((text) => res.end(text), () => { res.statusCode = 500; res.end() })
      return
    }
    if (req.url === '/__stats') {
      const { rss, heapUsed } = process.memoryUsage()
      const { user, system } = process.cpuUsage()
      res.end(JSON.stringify({ rss, heapUsed, cpu: user + system, stalls, captures }))
      return
    }
    if (req.url === '/__quiet') {
      // a 200 ms stall in a 3 s round is 7% of it: the closed-loop rounds compare the servers without them
      quiet = true
      res.end()
      return
    }
    app(req, res)
  })
  server.listen(0, '127.0.0.1', () => {
    const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
    process.stdout.write(JSON.stringify({ port }) + '\n')
  })
}

/**
 * @param {Variant} variant
 * @param {string} dir
 * @param {number} captureEvery
 * @returns {Promise<{ port: number, stop: () => void }>}
 */
function startServer (variant, dir, captureEvery) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', variant, dir, String(captureEvery)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk
      const nl = out.indexOf('\n')
      if (nl !== -1) resolve({ port: JSON.parse(out.slice(0, nl)).port, stop: () => child.kill('SIGTERM') })
    })
    child.once('exit', (code) => reject(new Error(`${variant} server exited with ${code}`)))
  })
}

/** @param {number} port */
async function stats (port) {
  const res = await fetch(`http://127.0.0.1:${port}/__stats`)
  return /** @type {{ rss: number, heapUsed: number, cpu: number, stalls: number, captures: { ok: number, failed: string[] } }} */ (await res.json())
}

/**
 * Ticks more than 100 ms late so far, from one scrape of the delay histogram.
 * @param {string} text
 */
function stallsIn (text) {
  const count = /^hotpath_eventloop_delay_seconds_count (\S+)$/m.exec(text)
  const under = /^hotpath_eventloop_delay_seconds_bucket\{le="0\.1"\} (\S+)$/m.exec(text)
  if (count === null || under === null) throw new Error('no delay histogram in the scrape')
  return Number(count[1]) - Number(under[1])
}

/**
 * A scraper: reads /metrics every second from `offset` ms on, until stopped; keeps the stall count it saw first and
 * last, and how many scrapes failed.
 * @param {number} port
 * @param {number} offset
 * @param {AbortSignal} signal
 */
async function scraper (port, offset, signal) {
  const seen = { first: NaN, last: NaN, scrapes: 0, failed: 0 }
  await sleep(offset)
  while (!signal.aborted) {
    const started = Date.now()
    try {
      const n = stallsIn(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())
      if (Number.isNaN(seen.first)) seen.first = n
      seen.last = n
      seen.scrapes++
    } catch {
      seen.failed++
    }
    await sleep(Math.max(0, 1000 - (Date.now() - started)))
  }
  return seen
}

/**
 * Least-squares slope, in units per minute.
 * @param {{ t: number, v: number }[]} points t in ms
 */
function slopePerMinute (points) {
  const n = points.length
  if (n < 2) return NaN
  const mt = points.reduce((a, p) => a + p.t, 0) / n
  const mv = points.reduce((a, p) => a + p.v, 0) / n
  let num = 0
  let den = 0
  for (const p of points) {
    num += (p.t - mt) * (p.v - mv)
    den += (p.t - mt) ** 2
  }
  return den === 0 ? 0 : num / den * 60000
}

/** @param {number[]} xs */
function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

async function main () {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      minutes: { type: 'string', default: '10' },
      rate: { type: 'string', default: '500' },
      rounds: { type: 'string' },
      'capture-every': { type: 'string', default: '60' }
    }
  })
  const minutes = Number(values.minutes)
  const rate = Number(values.rate)
  const rounds = values.rounds === undefined ? Math.max(10, minutes * 2) : Number(values.rounds)
  const captureEvery = Number(values['capture-every'])
  if (!(minutes > 0) || !(rate > 0) || !(rounds > 0) || !(captureEvery >= 0)) {
    console.error('soak: --minutes, --rate and --rounds take positive numbers, --capture-every seconds (0: none)')
    process.exit(2)
  }
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-soak-'))
  console.log(`hotpath/runtime soak: ${minutes} min at ${rate} req/s on each server, two scrapers every second, ${captureEvery > 0 ? `a ${CAPTURE_SECONDS} s capture every ${captureEvery} s` : 'no capture'}, a ${STALL_MS} ms stall every ${STALL_EVERY / 1000} s`)
  const [on, off] = await Promise.all([startServer('runtime', dir, captureEvery), startServer('off', dir, 0)])
  const stop = new AbortController()
  try {
    for (const s of [on, off]) await load({ url: `http://127.0.0.1:${s.port}/`, connections: 10, duration: 2 }) // warm-up
    const scrapers = [scraper(on.port, 0, stop.signal), scraper(on.port, 500, stop.signal)]
    const [before, offBefore] = await Promise.all([stats(on.port), stats(off.port)])
    const stallsBefore = before.stalls
    /** @type {Record<Variant, { t: number, rss: number, heap: number }[]>} */
    const memory = { runtime: [], off: [] }
    const t0 = Date.now()
    const steady = Promise.all([on, off].map(s => load({ url: `http://127.0.0.1:${s.port}/`, rate, connections: 20, duration: minutes * 60 })))
    const state = { done: false }
    steady.then(() => { state.done = true }, () => { state.done = true })
    let lastPrint = t0
    while (!state.done) {
      await sleep(1000)
      for (const [variant, s] of /** @type {const} */ ([['runtime', on], ['off', off]])) {
        const st = await stats(s.port)
        memory[variant].push({ t: Date.now() - t0, rss: st.rss, heap: st.heapUsed })
      }
      if (Date.now() - lastPrint >= 60000) {
        lastPrint = Date.now()
        const r = memory.runtime.at(-1)
        const o = memory.off.at(-1)
        console.log(`  ${Math.round((lastPrint - t0) / 60000)} min: runtime rss ${mb(r?.rss)} heap ${mb(r?.heap)}, off rss ${mb(o?.rss)} heap ${mb(o?.heap)}`)
      }
    }
    const [ron, roff] = await steady
    // give a stall in the last second its scrape
    await sleep(1500)
    const [end, offEnd] = await Promise.all([stats(on.port), stats(off.port)])
    const injected = end.stalls - stallsBefore
    stop.abort()
    const seen = await Promise.all(scrapers)
    // µs of CPU per request served by the steady load (the scrapes' and stats' own requests are a few hundred)
    const cpuOn = (end.cpu - before.cpu) / ron.requests.total
    const cpuOff = (offEnd.cpu - offBefore.cpu) / roff.requests.total
    await Promise.all([on, off].map(s => fetch(`http://127.0.0.1:${s.port}/__quiet`)))

    /** @type {number[]} */
    const ratios = []
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [on, off] : [off, on]
      /** @type {Map<number, number>} */
      const rps = new Map()
      for (const s of order) {
        const r = await load({ url: `http://127.0.0.1:${s.port}/`, connections: 20, duration: 3 })
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`${s === on ? 'runtime' : 'off'}: ${r.non2xx} non-2xx, ${r.errors} errors`)
        rps.set(s.port, r.requests.total / r.duration)
      }
      ratios.push(/** @type {number} */ (rps.get(on.port)) / /** @type {number} */ (rps.get(off.port)))
    }
    const sorted = [...ratios].sort((a, b) => a - b)

    const settled = (/** @type {Variant} */ v) => memory[v].filter(p => p.t >= minutes * 60000 / 5)
    const slope = (/** @type {Variant} */ v, /** @type {'rss' | 'heap'} */ k) => slopePerMinute(settled(v).map(p => ({ t: p.t, v: p[k] / 1e6 })))
    console.log('')
    console.log(`  steady load: runtime ${(ron.requests.total / ron.duration).toFixed(0)} req/s (${ron.non2xx} non-2xx, ${ron.errors} errors), off ${(roff.requests.total / roff.duration).toFixed(0)} req/s (${roff.non2xx} non-2xx, ${roff.errors} errors)`)
    console.log(`  memory slope, MB/min (after the first fifth):  runtime rss ${fmt(slope('runtime', 'rss'))}, heap ${fmt(slope('runtime', 'heap'))};  off rss ${fmt(slope('off', 'rss'))}, heap ${fmt(slope('off', 'heap'))}`)
    console.log(`  memory at the end: runtime rss ${mb(memory.runtime.at(-1)?.rss)} heap ${mb(memory.runtime.at(-1)?.heap)}; off rss ${mb(memory.off.at(-1)?.rss)} heap ${mb(memory.off.at(-1)?.heap)}`)
    const pct = (/** @type {number} */ r) => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)}%`
    console.log(`  CPU per request over the soak: runtime ${cpuOn.toFixed(1)} µs, off ${cpuOff.toFixed(1)} µs: ratio ${(cpuOn / cpuOff).toFixed(3)} (${pct(cpuOn / cpuOff)})`)
    console.log(`  throughput runtime / off: median ${median(ratios).toFixed(3)} (${pct(median(ratios))}) over ${rounds} alternated closed-loop rounds of 3 s [middle half ${sorted[Math.floor(rounds / 4)].toFixed(3)}–${sorted[Math.floor(rounds * 3 / 4)].toFixed(3)}]`)
    const [a, b] = seen.map(s => s.last - s.first)
    const all = a >= injected && b >= injected
    console.log(`  stalls: ${injected} injected; scraper A saw ${a} (${seen[0].scrapes} scrapes, ${seen[0].failed} failed), scraper B saw ${b} (${seen[1].scrapes} scrapes, ${seen[1].failed} failed): ${all ? 'every stall seen by both' : 'SOME STALLS MISSED'}${a > injected || b > injected ? ' (ticks over 100 ms beyond the injected stalls: the machine or a capture)' : ''}`)
    console.log(`  captures: ${end.captures.ok} written, ${end.captures.failed.length} failed${end.captures.failed.length ? ` (${end.captures.failed.join('; ')})` : ''}; ${readdirSync(dir).length} files`)
    if (!all) process.exitCode = 1
  } finally {
    stop.abort()
    on.stop()
    off.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** @param {number | undefined} bytes */
function mb (bytes) {
  return bytes === undefined ? '?' : `${(bytes / 1e6).toFixed(1)} MB`
}

/** @param {number} x */
function fmt (x) {
  return `${x >= 0 ? '+' : ''}${x.toFixed(2)}`
}
