// Benchmarks of hotpath flame, each against 0x measured in the same run on the same server and load:
// - processing: from the end of the load to the files written (hotpath: stop the profiler, move the profile out of
//   the target, model it, write .html, .pb.gz and .txt; 0x: its tick-log processing and HTML);
// - the size of the flame graph page;
// - how long the page takes to open in headless Chromium (when it is installed).
// Usage: node bench/flame.js [--duration 10] [--long] [--no-0x]
//   --long also records a 60-second profile and measures how long its page takes to open.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, readFile, readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { load } from '../src/index.js'
import { writeProfileFiles } from '../src/cli/flame-files.js'
import { browserSkip, launchBrowser } from '../test/helpers/browser.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const RESULTS = join(ROOT, 'bench', 'results', 'flame')
const SERVER = join(ROOT, 'bench', 'flame-server.js')
const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, long: { type: 'boolean' }, 'no-0x': { type: 'boolean' } } })
const duration = Number(values.duration)
const requests = JSON.parse(await readFile(join(ROOT, 'bench', 'flame-requests.json'), 'utf8'))

await rm(RESULTS, { recursive: true, force: true })
await mkdir(RESULTS, { recursive: true })
console.log(`hotpath flame benchmark: ${duration} s of load on bench/flame-server.js (Express), Node ${process.version}\n`)

const ours = await hotpathRun(duration, join(RESULTS, 'hotpath'))
console.log(`hotpath   processing ${ms(ours.processing)} (stop + transfer ${ms(ours.transfer)}, model and files ${ms(ours.write)}), ` +
  `${ours.samples} samples, ${ours.nodes} nodes, html ${kb(ours.htmlBytes)}, ${Math.round(ours.rate)} req/s`)

/** @type {{ processing: number, htmlBytes: number, html: string, rate: string } | null} */
let peer = null
if (!values['no-0x']) {
  peer = await zeroXRun(duration, join(RESULTS, '0x'))
  console.log(`0x        processing ${ms(peer.processing)}, html ${kb(peer.htmlBytes)}, ${peer.rate}`)
  console.log(`\nprocessing: hotpath takes ${ratio(ours.processing, peer.processing)} of 0x's time (${(peer.processing / ours.processing).toFixed(1)}× faster)`)
  console.log(`html size:  hotpath's page is ${ratio(ours.htmlBytes, peer.htmlBytes)} of 0x's`)
}

if (browserSkip) {
  console.log(`\nopen time: skipped (${browserSkip})`)
} else {
  const browser = await launchBrowser()
  try {
    const open = await openTime(browser, ours.html)
    console.log(`\nopen time (Chromium, navigation → graph drawn): hotpath ${ms(open.drawn)} (load event ${ms(open.load)})`)
    if (peer) {
      const theirs = await openTime(browser, peer.html)
      console.log(`                                                0x load event ${ms(theirs.load)} — hotpath ${ratio(open.drawn, theirs.load)} of it`)
    }
    // A profile far wider than the server's: 50 000 distinct call paths, as a large app with many routes can have.
    const wide = syntheticProfile(50_000, 60)
    const t0 = performance.now()
    const written = await writeProfileFiles({ type: 'cpu', profiles: [{ profile: wide, label: 'synthetic' }] }, { output: join(RESULTS, 'synthetic-50k'), title: 'synthetic' })
    const wideProcessing = performance.now() - t0
    const wideHtml = /** @type {string} */ (written.files.find(f => f.format === 'html')?.path)
    const wideOpen = await openTime(browser, wideHtml)
    console.log(`synthetic 60 s profile with ${written.model.nodes.length} nodes: processing ${ms(wideProcessing)}, html ${kb((await stat(wideHtml)).size)}, ` +
      `opens in ${ms(wideOpen.drawn)} (load event ${ms(wideOpen.load)})`)
    if (values.long) {
      console.log('\nrecording 60 s for the long-profile open time…')
      const long = await hotpathRun(60, join(RESULTS, 'hotpath-60s'))
      const longOpen = await openTime(browser, long.html)
      console.log(`60-second profile: ${long.samples} samples, ${long.nodes} nodes, html ${kb(long.htmlBytes)}, processing ${ms(long.processing)}, ` +
        `opens in ${ms(longOpen.drawn)} (load event ${ms(longOpen.load)})`)
    }
  } finally {
    await browser.close()
  }
}

/**
 * Profiles the server through the in-process capture (as the probe does), loads it, and times the processing.
 * @param {number} seconds
 * @param {string} output
 */
async function hotpathRun (seconds, output) {
  const child = spawn(process.execPath, ['--import', new URL('./flame-preload.js', import.meta.url).href, SERVER], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc']
  })
  try {
    const port = await listeningPort(child)
    child.send('start')
    await nextMessage(child)
    const result = await load({ url: `http://127.0.0.1:${port}/`, duration: seconds, connections: 10, requests })
    const t0 = performance.now()
    child.send('stop')
    const { profile } = /** @type {{ profile: import('../src/profile/cpuprofile.js').CpuProfile }} */ (await nextMessage(child))
    const t1 = performance.now()
    const written = await writeProfileFiles({ type: 'cpu', profiles: [{ profile, label: `pid ${child.pid}` }] }, { output, title: 'bench', saveProfiles: true })
    const t2 = performance.now()
    const html = /** @type {string} */ (written.files.find(f => f.format === 'html')?.path)
    return {
      processing: t2 - t0,
      transfer: t1 - t0,
      write: t2 - t1,
      html,
      htmlBytes: (await stat(html)).size,
      samples: written.model.samples,
      nodes: written.model.nodes.length,
      rate: result.requests.mean
    }
  } finally {
    child.kill('SIGKILL')
  }
}

/**
 * Runs 0x on the same server with the same load, and times from the end of the load to 0x's exit (its files written).
 * @param {number} seconds
 * @param {string} dir
 */
async function zeroXRun (seconds, dir) {
  const stampFile = join(RESULTS, '0x-load-ended')
  const loadCommand = `${process.execPath} ${join(ROOT, 'bench', 'flame-load.js')} $PORT ${seconds} ${stampFile}`
  const child = spawn(process.execPath, [join(ROOT, 'node_modules', '0x', 'cmd.js'), '--output-dir', dir, '-P', loadCommand, '--', process.execPath, SERVER], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: RESULTS
  })
  let log = ''
  child.stdout.setEncoding('utf8').on('data', (c) => { log += c })
  child.stderr.setEncoding('utf8').on('data', (c) => { log += c })
  const [code] = await once(child, 'exit')
  const exited = Date.now()
  if (code !== 0) throw new Error(`0x exited with ${code}:\n${log}`)
  const ended = Number(await readFile(stampFile, 'utf8'))
  const html = join(dir, (await readdir(dir)).find(f => f.endsWith('.html')) ?? 'flamegraph.html')
  return { processing: exited - ended, html, htmlBytes: (await stat(html)).size, rate: /load: .*/.exec(log)?.[0] ?? '' }
}

/**
 * @param {Awaited<ReturnType<typeof launchBrowser>>} browser
 * @param {string} file
 */
async function openTime (browser, file) {
  const { page } = await browser.open(file)
  await page.waitForTimeout(200)
  const times = await page.evaluate(() => {
    const nav = /** @type {PerformanceNavigationTiming} */ (performance.getEntriesByType('navigation')[0])
    const drawn = performance.getEntriesByName('hotpath-flame-drawn')[0]
    return { load: nav.loadEventEnd, drawn: drawn ? drawn.startTime : NaN }
  })
  await page.close()
  return times
}

/**
 * A random call tree of `nodes` nodes (up to 40 deep, 2 000 functions over 200 files) sampled every millisecond.
 * @param {number} nodes
 * @param {number} seconds
 * @returns {import('../src/profile/cpuprofile.js').CpuProfile}
 */
function syntheticProfile (nodes, seconds) {
  let seed = 7
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  /** @type {import('../src/profile/cpuprofile.js').CpuProfileNode[]} */
  const list = [{ id: 1, callFrame: { functionName: '(root)', url: '', scriptId: '0', lineNumber: -1, columnNumber: -1 }, children: [] }]
  const depth = [0]
  for (let id = 2; id <= nodes; id++) {
    let parent = Math.floor(Math.pow(rand(), 0.6) * (id - 1))
    while (depth[parent] >= 40) parent = Math.floor(rand() * parent)
    const fn = Math.floor(rand() * 2000)
    const file = fn % 200
    const url = file < 120 ? `file:///srv/app/src/module-${file}.js` : file < 180 ? `file:///srv/app/node_modules/pkg-${file}/index.js` : `node:internal/mod-${file}`
    list.push({ id, callFrame: { functionName: `fn${fn}`, url, scriptId: String(file + 1), lineNumber: fn % 300, columnNumber: 4 }, children: [] })
    depth.push(depth[parent] + 1)
    const siblings = /** @type {number[]} */ (list[parent].children)
    siblings.push(id)
  }
  const samples = []
  const timeDeltas = []
  for (let i = 0; i < seconds * 1000; i++) {
    samples.push(2 + Math.floor(rand() * (nodes - 1)))
    timeDeltas.push(1000)
  }
  return { nodes: list, startTime: 0, endTime: seconds * 1e6, samples, timeDeltas }
}

/** @param {import('node:child_process').ChildProcess} child */
function listeningPort (child) {
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout?.setEncoding('utf8').on('data', (c) => {
      out += c
      const m = /listening on (\d+)/.exec(out)
      if (m) resolve(Number(m[1]))
    })
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening`)))
  })
}

/** @param {import('node:child_process').ChildProcess} child */
function nextMessage (child) {
  return /** @type {Promise<any>} */ (once(child, 'message').then(([m]) => m))
}

/** @param {number} v */
function ms (v) {
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`
}

/** @param {number} bytes */
function kb (bytes) {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${Math.round(bytes / 1000)} kB`
}

/**
 * @param {number} a
 * @param {number} b
 */
function ratio (a, b) {
  return `${Math.round(a / b * 100)}%`
}
