// What hotpath/runtime costs a real JSON server: its throughput with the runtime on (monitor + overload protection +
// Prometheus metrics scraped every second) and with the probe's sampler at 10 ms (plus the listener and agent
// watchers), each against the same server with nothing on, measured in the same run. Variants are interleaved round by
// round and the ratio of medians is printed: the machine is shared and noisy, and a slow minute hits every variant.
//
//   npm run bench:runtime                   ROUNDS=10 DURATION=1.5 CONNECTIONS=20 VARIANTS=off,runtime,sampler
//
// The server runs in a child process (this file with --serve <variant>); hotpath load drives it from this process.
import { spawn } from 'node:child_process'
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { load } from 'hotpath'
import { jsonApiHandler } from './lib/json-api.js'

const ALL = /** @type {const} */ (['off', 'runtime', 'sampler', 'guard', 'metrics', 'sampler-gc', 'sampler-only', 'listeners', 'agents', 'diagnoser', 'diagnosing'])
/** @typedef {typeof ALL[number]} Variant */
// 'guard' and 'metrics' are the two halves of 'runtime', to tell which one costs what: VARIANTS=off,guard,metrics.
// The probe's parts likewise: VARIANTS=off,sampler-gc,sampler-only,listeners,agents (the sampler with and without its
// GC observer, each watcher alone). On-demand diagnosis: VARIANTS=off,diagnoser,diagnosing — the diagnoser set up with
// its HTTP trigger mounted and never asked (its cost while off), and one diagnosing all along (doctor's probe in the
// process, observing: its cost while on).
const VARIANTS = /** @type {Variant[]} */ ((process.env.VARIANTS ?? 'off,runtime,sampler').split(',').filter(v => ALL.includes(/** @type {Variant} */ (v))))
if (VARIANTS[0] !== 'off') VARIANTS.unshift('off')

if (process.argv[2] === '--serve') await serve(/** @type {Variant} */ (process.argv[3]))
else await main()

/** @param {Variant} variant */
async function serve (variant) {
  /** @type {http.RequestListener} */
  let handler = jsonApiHandler()
  if (variant === 'runtime' || variant === 'guard' || variant === 'metrics') {
    const { monitor, overloadProtection, registerMetrics } = await import('hotpath/runtime')
    const m = monitor({ interval: 1000 })
    if (variant !== 'metrics') {
      // thresholds a production server would set: never reached by this load, so every request pays the check
      const guard = overloadProtection({ monitor: m, maxEventLoopDelay: 1000, maxHeapUsedBytes: 4e9, maxRssBytes: 8e9, maxEventLoopUtilization: 0.999, exposeStatusRoute: true })
      handler = guard.http(handler)
    }
    if (variant !== 'guard') {
      const { default: client } = await import('prom-client')
      const registry = new client.Registry()
      registerMetrics(registry, { monitor: m })
      setInterval(() => { registry.metrics().catch(() => {}) }, 1000).unref() // a Prometheus scraping every second
    }
  } else if (variant === 'sampler-gc' || variant === 'sampler-only') {
    const { Sampler } = await import('hotpath/runtime')
    new Sampler({ interval: 10, gc: variant === 'sampler-gc', onSample: () => {} }).start()
  } else if (variant === 'listeners') {
    const { ListenerWatcher } = await import('hotpath/runtime')
    new ListenerWatcher().start()
  } else if (variant === 'agents') {
    const { AgentWatcher } = await import('hotpath/runtime')
    new AgentWatcher().start()
  } else if (variant === 'diagnoser' || variant === 'diagnosing') {
    const { mkdtempSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { diagnoser } = await import('hotpath/runtime')
    const d = diagnoser({ dir: mkdtempSync(join(tmpdir(), 'hotpath-bench-diagnosis-')), duration: 3600 })
    const trigger = d.httpHandler({ token: 'a-bench-token-of-24-chars' })
    const app = handler
    handler = (req, res) => req.url?.startsWith('/debug/diagnose') ? trigger(req, res) : app(req, res)
    // Diagnosing for the whole benchmark, from once the server listens.
    if (variant === 'diagnosing') setTimeout(() => { d.run().then((/** @type {any} */ r) => { if (!r.ok) console.error(`diagnosis: ${r.reason} ${r.error ?? ''}`) }) }, 200)
  } else if (variant === 'sampler') {
    const { Sampler, ListenerWatcher, AgentWatcher } = await import('hotpath/runtime')
    let n = 0
    new Sampler({ interval: 10, onSample: () => { n++ } }).start()
    new ListenerWatcher().start()
    new AgentWatcher().start()
    process.on('exit', () => { if (n === 0) console.error('the sampler never ran') })
  }
  // CPU time per request is the cost itself, steadier than throughput on a machine shared with other work: the bench
  // reads the server's CPU before and after each load through this route, outside everything measured.
  const app = handler
  const server = http.createServer((req, res) => {
    if (req.url !== '/__cpu') return app(req, res)
    const { user, system } = process.cpuUsage()
    res.end(JSON.stringify({ cpu: user + system }))
  })
  server.listen(0, '127.0.0.1', () => {
    const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
    process.stdout.write(JSON.stringify({ port }) + '\n')
  })
}

/** The server's CPU µs so far. @param {number} port */
async function cpuOf (port) {
  const res = await fetch(`http://127.0.0.1:${port}/__cpu`)
  return /** @type {{ cpu: number }} */ (await res.json()).cpu
}

/**
 * @param {Variant} variant
 * @returns {Promise<{ port: number, stop: () => void }>}
 */
function startServer (variant) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', variant], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk
      const nl = out.indexOf('\n')
      if (nl !== -1) resolve({ port: JSON.parse(out.slice(0, nl)).port, stop: () => child.kill('SIGTERM') })
    })
    child.once('exit', (code) => reject(new Error(`${variant} server exited with ${code}`)))
  })
}

/** @param {number[]} xs */
function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/**
 * What one sample() costs, in µs, as the probe takes them: every 10 ms, with a 1 ms delay histogram holding that
 * interval's ticks, and the slow measures (resources, heap spaces) once a second.
 */
async function samplerCost () {
  const { Sampler } = await import('hotpath/runtime')
  // the sampler's own timer is pushed out of the way; this loop calls sample() on the probe's schedule and times it
  const sampler = new Sampler({ interval: 60000, resolution: 1, slowInterval: 1000 })
  sampler.start()
  /** @type {number[]} */
  const times = []
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const t0 = performance.now()
      sampler.sample()
      times.push(performance.now() - t0)
      if (times.length === 300) { clearInterval(timer); resolve(undefined) }
    }, 10)
  })
  sampler.stop()
  return { median: median(times) * 1000, mean: times.reduce((a, b) => a + b, 0) / times.length * 1000 }
}

async function main () {
  const rounds = Number(process.env.ROUNDS ?? 10)
  const duration = Number(process.env.DURATION ?? 1.5)
  const connections = Number(process.env.CONNECTIONS ?? 20)
  /** @type {Record<Variant, number[]>} */
  const rps = /** @type {Record<Variant, number[]>} */ (Object.fromEntries(ALL.map(v => [v, /** @type {number[]} */ ([])])))
  /** @type {Record<Variant, number[]>} CPU µs the server spent per request */
  const cpu = /** @type {Record<Variant, number[]>} */ (Object.fromEntries(ALL.map(v => [v, /** @type {number[]} */ ([])])))
  console.log(`hotpath/runtime overhead: ${rounds} rounds × ${VARIANTS.length} servers, ${duration} s of load each, ${connections} connections`)
  // All servers run for the whole benchmark, so that rounds can alternate quickly between them; each ratio compares
  // a variant with the 'off' server loaded moments apart in the same round.
  const servers = await Promise.all(VARIANTS.map(startServer))
  try {
    for (const server of servers) {
      await load({ url: `http://127.0.0.1:${server.port}/`, connections, duration: 1 }) // warm-up: JIT, pools
    }
    for (let round = 1; round <= rounds; round++) {
      // rotate the order each round so that no variant always runs first (or last)
      const order = VARIANTS.map((_, i) => (i + round) % VARIANTS.length)
      const line = []
      for (const i of order) {
        const before = await cpuOf(servers[i].port)
        const r = await load({ url: `http://127.0.0.1:${servers[i].port}/`, connections, duration })
        const used = await cpuOf(servers[i].port) - before
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`${VARIANTS[i]}: ${r.non2xx} non-2xx, ${r.errors} errors`)
        rps[VARIANTS[i]].push(r.requests.total / r.duration)
        cpu[VARIANTS[i]].push(used / r.requests.total)
        line.push(`${VARIANTS[i]} ${Math.round(r.requests.total / r.duration)} (${(used / r.requests.total).toFixed(1)} µs)`)
      }
      console.log(`  round ${String(round).padStart(2)}: ${line.join(', ')}`)
    }
  } finally {
    for (const server of servers) server.stop()
  }
  /**
   * Median over rounds of variant / off, each pair measured seconds apart.
   * @param {Record<Variant, number[]>} m
   * @param {Variant} v
   */
  const ratio = (m, v) => median(m[v].map((x, round) => x / m.off[round]))
  /**
   * The middle half of the per-round ratios: how far apart two identical runs land on this machine now.
   * @param {Record<Variant, number[]>} m
   * @param {Variant} v
   */
  const spread = (m, v) => {
    const r = m[v].map((x, round) => x / m.off[round]).sort((a, b) => a - b)
    return `${r[Math.floor(r.length / 4)].toFixed(2)}–${r[Math.floor(r.length * 3 / 4)].toFixed(2)}`
  }
  /** @param {number} r */
  const pct = (r) => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)}%`
  console.log('')
  console.log('  medians of per-round ratios to "off" [middle half]:   throughput                 CPU per request')
  console.log(`  off (nothing on)                             ${Math.round(median(rps.off))} req/s                ${median(cpu.off).toFixed(1)} µs`)
  /** @type {Record<Variant, [string, string]>} */
  const labels = {
    off: ['', ''],
    runtime: ['runtime: monitor+protection+metrics', 'budget 2%'],
    sampler: ['probe: sampler at 10 ms + watchers ', 'budget 3%'],
    guard: ['monitor + protection only          ', ''],
    metrics: ['monitor + metrics only             ', ''],
    'sampler-gc': ['sampler at 10 ms, GC observer on    ', ''],
    'sampler-only': ['sampler at 10 ms, no GC observer    ', ''],
    listeners: ['listener watcher alone             ', ''],
    agents: ['agent watcher alone                ', ''],
    diagnoser: ['diagnoser set up, never asked      ', 'nothing'],
    diagnosing: ['diagnosing: doctor\'s probe observing', '']
  }
  for (const v of VARIANTS.slice(1)) {
    const [label, budget] = labels[v]
    const t = ratio(rps, v)
    const c = ratio(cpu, v)
    console.log(`  ${label}         ${t.toFixed(3)} (${pct(t)}) [${spread(rps, v)}]   ${c.toFixed(3)} (${pct(c)}) [${spread(cpu, v)}]   ${budget}`)
  }
  const cost = await samplerCost()
  console.log(`  one Sampler.sample() every 10 ms: median ${cost.median.toFixed(1)} µs, mean ${cost.mean.toFixed(1)} µs → ${(cost.mean / 100).toFixed(2)}% of one core`)
}
