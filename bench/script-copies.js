// What the probe's copy of the code loaders compiled in memory (src/probe/transformed-scripts.js) costs a server: the
// copy's own time, once, and the server's throughput and CPU per request after it, against the same server that never
// copied, measured in the same run. The copy enables the debugger domain and disables it again: nothing of it may stay
// on the requests' path. Rounds alternate between the two servers and the ratio of medians is printed.
//
//   npm run bench:script-copies            ROUNDS=8 DURATION=1.5 CONNECTIONS=20 TSX=1 (serve TypeScript through tsx)
//
// The servers run in child processes (this file with --serve <variant>); hotpath load drives them from this process.
import { spawn } from 'node:child_process'
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { load } from 'hotpath'
import { jsonApiHandler } from './lib/json-api.js'

/** @typedef {'plain' | 'copied'} Variant */
const VARIANTS = /** @type {Variant[]} */ (['plain', 'copied'])

if (process.argv[2] === '--serve') await serve(/** @type {Variant} */ (process.argv[3]))
else await main()

/** @param {Variant} variant */
async function serve (variant) {
  const app = jsonApiHandler()
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-bench-scripts-'))
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  const { TransformedScripts } = await import('../src/probe/transformed-scripts.js')
  const scripts = new TransformedScripts()
  // Outside what is measured: the bench reads the server's CPU before and after each load, and asks for the copy once.
  const server = http.createServer((req, res) => {
    if (req.url === '/__copy') {
      const copied = variant === 'copied' ? scripts.record(dir).length : 0
      return res.end(JSON.stringify({ copied, ms: variant === 'copied' ? scripts.ms : 0 }))
    }
    if (req.url !== '/__cpu') return app(req, res)
    const { user, system } = process.cpuUsage()
    res.end(JSON.stringify({ cpu: user + system }))
  })
  server.listen(0, '127.0.0.1', () => {
    const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
    process.stdout.write(JSON.stringify({ port }) + '\n')
  })
}

/**
 * @param {number} port
 * @param {string} path
 */
async function ask (port, path) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`)
  return /** @type {any} */ (await res.json())
}

/**
 * @param {Variant} variant
 * @returns {Promise<{ port: number, stop: () => void }>}
 */
function startServer (variant) {
  // Under tsx, the bench's own modules are compiled in memory: there is something to copy.
  const args = process.env.TSX === '1' ? ['--import', 'tsx'] : []
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args, fileURLToPath(import.meta.url), '--serve', variant], { stdio: ['ignore', 'pipe', 'inherit'] })
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

async function main () {
  const rounds = Number(process.env.ROUNDS ?? 8)
  const duration = Number(process.env.DURATION ?? 1.5)
  const connections = Number(process.env.CONNECTIONS ?? 20)
  console.log(`the probe's copy of transformed scripts: ${rounds} rounds × 2 servers, ${duration} s of load each, ${connections} connections${process.env.TSX === '1' ? ', under tsx' : ''}`)
  const servers = await Promise.all(VARIANTS.map(startServer))
  /** @type {Record<Variant, number[]>} */
  const rps = { plain: [], copied: [] }
  /** @type {Record<Variant, number[]>} */
  const cpu = { plain: [], copied: [] }
  try {
    for (const server of servers) await load({ url: `http://127.0.0.1:${server.port}/`, connections, duration: 1 })
    // After the warm-up, as the probe does after the load window: once.
    const copy = await ask(servers[1].port, '/__copy')
    console.log(`  the copy: ${copy.ms.toFixed(1)} ms, ${copy.copied} script(s) copied`)
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 ? [0, 1] : [1, 0]
      const line = []
      for (const i of order) {
        const before = (await ask(servers[i].port, '/__cpu')).cpu
        const r = await load({ url: `http://127.0.0.1:${servers[i].port}/`, connections, duration })
        const used = (await ask(servers[i].port, '/__cpu')).cpu - before
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
  const ratio = (/** @type {Record<Variant, number[]>} */ m) => median(m.copied.map((x, round) => x / m.plain[round]))
  console.log('')
  console.log('  after the copy, against the server that never copied (median of per-round ratios):')
  console.log(`    throughput       ${ratio(rps).toFixed(3)}   (plain ${Math.round(median(rps.plain))} req/s)`)
  console.log(`    CPU per request  ${ratio(cpu).toFixed(3)}   (plain ${median(cpu.plain).toFixed(1)} µs)`)
}
