// The doctor's HTML report, measured against clinic doctor's on the same server and the same load:
// - size of the page (and what it is made of: inlined libraries, chart series, flame graph data);
// - time from the end of the load to the report written (hotpath: profiles written, run analysed, report rendered;
//   clinic: its analysis and HTML), and renderReport alone on the saved run;
// - how long the page takes to open in headless Chromium (when it is installed).
// Usage: node bench/report.js [--duration 10] [--example listener-leak] [--no-clinic] [--screenshot docs/report.png]
//   --screenshot writes the top 1280×1600 of the report at device scale 1 (docs/report.md's picture).
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { diagnose } from '../src/analysis/diagnose.js'
import { readRun } from '../src/analysis/run-data.js'
import { renderReport } from '../src/report/html/index.js'
import { reportAssets } from '../src/report/html/assets.js'
import { browserSkip, launchBrowser } from '../test/helpers/browser.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const RESULTS = join(ROOT, 'bench', 'results', 'report')
const HOTPATH = join(ROOT, 'bin', 'hotpath.js')
const CLINIC = join(ROOT, 'node_modules', '.bin', 'clinic')
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    example: { type: 'string', default: 'listener-leak' },
    'no-clinic': { type: 'boolean' },
    screenshot: { type: 'string' }
  }
})
const duration = Number(values.duration)
// 'node' as a user types it (the page shows the command); PATH decides which Node.js, as it does for npm run.
const server = join('examples', String(values.example), 'server.js')
const NODE = 'node'

await rm(RESULTS, { recursive: true, force: true })
await mkdir(RESULTS, { recursive: true })
console.log(`hotpath report benchmark: doctor with ${duration} s of load on ${server}, Node ${process.version}\n`)

// ---- hotpath: the whole doctor run, with the end of the load marked by the load command itself
const ours = await timedRun('hotpath', (onPort) => [process.execPath, HOTPATH, 'doctor', '--save', join(RESULTS, 'run'), '--report', join(RESULTS, 'report.html'), '--on-port', onPort, '--', NODE, server])
const oursBytes = (await stat(join(RESULTS, 'report.html'))).size
// The same page for the built-in load (the charts of the load generator too), rendered from a doctor run of its own.
await run([process.execPath, HOTPATH, 'doctor', '-d', String(duration), '--no-progress', '--save', join(RESULTS, 'builtin'), '--report', join(RESULTS, 'builtin.html'), '--', NODE, server], { PORT: '0' })
const html = await readFile(join(RESULTS, 'builtin.html'), 'utf8')
const data = readRun(join(RESULTS, 'builtin'))
const diagnosis = diagnose(data)
const renders = []
for (let i = 0; i < 5; i++) {
  const t = performance.now()
  renderReport(diagnosis, data)
  renders.push(performance.now() - t)
}
const assets = reportAssets()
const embedded = JSON.parse(/** @type {RegExpExecArray} */ (/id="hotpath-report-data">([\s\S]*?)<\/script>/.exec(html))[1])
const seriesBytes = JSON.stringify(embedded.runs).length
const flameBytes = JSON.stringify(embedded.flame).length
console.log(`hotpath   report written ${ms(ours.afterLoad)} after the load ended (profiles, analysis and page); page ${kb(oursBytes)} (--on-port)`)
console.log(`          with the built-in load: page ${kb(html.length)} = scripts and styles ${kb(assets.js.length + assets.css.length)} ` +
  `(uPlot, flame graph, report) + chart series ${kb(seriesBytes)} + flame graph data ${kb(flameBytes)} + text`)
console.log(`          renderReport on the saved run: ${ms(median(renders))} (median of 5), ${diagnosis.processes.reduce((a, p) => a + p.samples, 0)} samples in the window`)

/** @type {{ afterLoad: number, bytes: number, html: string } | null} */
let peer = null
if (!values['no-clinic']) {
  const dest = join(RESULTS, 'clinic')
  await mkdir(dest, { recursive: true })
  const theirs = await timedRun('clinic', (onPort) => [CLINIC, 'doctor', '--open=false', '--dest', dest, '--on-port', onPort, '--', NODE, server], { NO_INSIGHT: '1' })
  const found = (await readdir(dest)).find(f => f.endsWith('.html'))
  if (found) {
    peer = { afterLoad: theirs.afterLoad, bytes: (await stat(join(dest, found))).size, html: join(dest, found) }
    console.log(`clinic    report written ${ms(peer.afterLoad)} after the load ended; page ${kb(peer.bytes)}`)
    console.log(`\nreport ready: hotpath ${(peer.afterLoad / ours.afterLoad).toFixed(1)}× sooner; page size: hotpath's is ${ratio(oursBytes, peer.bytes)} of clinic's`)
  } else {
    console.log('clinic    wrote no HTML (it does not run on this Node version); skipped')
  }
}

if (browserSkip) {
  console.log(`\nopen time: skipped (${browserSkip})`)
} else {
  const browser = await launchBrowser({ width: 1280, height: 1600 })
  try {
    const open = await openTime(browser, join(RESULTS, 'builtin.html'))
    console.log(`\nopen time (Chromium, navigation → charts and flame graph drawn): hotpath ${ms(open.drawn)} (load event ${ms(open.load)})`)
    if (peer) {
      const theirs = await openTime(browser, peer.html)
      console.log(`                                                                 clinic load event ${ms(theirs.load)}`)
    }
    if (values.screenshot) {
      const { page } = await browser.open(join(RESULTS, 'builtin.html'))
      await page.waitForTimeout(300)
      await page.screenshot({ path: values.screenshot, clip: { x: 0, y: 0, width: 1280, height: 1600 } })
      await page.close()
      console.log(`screenshot: ${values.screenshot} (${kb((await stat(values.screenshot)).size)})`)
    }
  } finally {
    await browser.close()
  }
}

/**
 * Runs a tool with `hotpath load` as its --on-port command, and returns how long after the load's end the tool
 * finished (the load command writes the time it ended).
 * @param {string} name
 * @param {(onPort: string) => string[]} command
 * @param {Record<string, string>} [env]
 */
async function timedRun (name, command, env = {}) {
  // outside the repository: bench/results is for results, and a script there would be linted
  const scratch = await mkdtemp(join(tmpdir(), 'hotpath-bench-report-'))
  const mark = join(scratch, 'load-end')
  const script = join(scratch, 'load.mjs')
  await writeFile(script, `
    import { spawnSync } from 'node:child_process'
    import { writeFileSync } from 'node:fs'
    const r = spawnSync(process.execPath, [${JSON.stringify(HOTPATH)}, 'load', '-c', '10', '-d', '${duration}', '--no-progress', 'http://127.0.0.1:' + process.env.PORT + '/'], { stdio: 'ignore' })
    writeFileSync(${JSON.stringify(mark)}, String(Date.now()))
    process.exit(r.status ?? 1)
  `)
  await run(command(`"${process.execPath}" "${script}"`), env)
  const end = Date.now()
  if (!existsSync(mark)) throw new Error(`${name}: the load did not run`)
  const afterLoad = end - Number(await readFile(mark, 'utf8'))
  await rm(scratch, { recursive: true, force: true })
  return { afterLoad }
}

/**
 * @param {string[]} command
 * @param {Record<string, string>} [env]
 * @returns {Promise<void>}
 */
function run (command, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c })
    child.on('error', reject)
    child.on('close', (code) => code === 0 ? resolve() : reject(new Error(`${command.join(' ')} exited ${code}\n${stderr}`)))
  })
}

/**
 * @param {Awaited<ReturnType<typeof launchBrowser>>} browser
 * @param {string} file
 */
async function openTime (browser, file) {
  const { page } = await browser.open(file)
  await page.waitForTimeout(300)
  const times = await page.evaluate(() => {
    const nav = /** @type {PerformanceNavigationTiming} */ (performance.getEntriesByType('navigation')[0])
    const drawn = performance.getEntriesByName('hotpath-report-drawn')[0]
    return { load: nav.loadEventEnd, drawn: drawn ? drawn.startTime : NaN }
  })
  await page.close()
  return times
}

/** @param {number[]} xs */
function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** @param {number} v */
function ms (v) {
  return Number.isNaN(v) ? 'n/a' : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(0)} ms`
}

/** @param {number} bytes */
function kb (bytes) {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1000).toFixed(0)} kB`
}

/**
 * @param {number} a
 * @param {number} b
 */
function ratio (a, b) {
  return `${((a / b) * 100).toFixed(0)}%`
}
