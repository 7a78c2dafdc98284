// Is hotpath doctor's verdict stable from run to run? Runs it N times on every example server and counts the
// categories it gives; each example has one expected category (the folder names the problem).
//
//   npm run bench:verdicts [-- --runs 5 --duration 5 --examples hello,gc]
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs } from './lib/measure.js'

/** @type {Record<string, string>} */
const EXPECTED = {
  hello: 'healthy',
  'event-loop': 'event-loop',
  io: 'io',
  gc: 'gc',
  'memory-leak': 'memory-leak',
  'listener-leak': 'event-loop',
  cluster: 'healthy',
  'worker-threads': 'healthy'
}
const args = benchArgs({ runs: '5', duration: '5', examples: Object.keys(EXPECTED).join(',') })
const ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * @param {string} example
 * @returns {Promise<string>} the category; a run with an unexpected one is kept for a look, and its path printed
 */
function diagnose (example) {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-verdicts-'))
  const json = join(dir, 'd.json')
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/hotpath.js'), 'doctor', '-d', args.duration, '--no-progress', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, join(ROOT, 'examples', example, 'server.js')], {
      stdio: 'ignore',
      env: { ...process.env, PORT: '0' }
    })
    child.on('exit', () => {
      let category = 'failed'
      try {
        category = JSON.parse(readFileSync(json, 'utf8')).category
      } catch {}
      if (category === EXPECTED[example]) rmSync(dir, { recursive: true, force: true })
      else console.log(`  (${example}: ${category}; run kept in ${join(dir, 'run')})`)
      resolve(category)
    })
  })
}

console.log(`hotpath doctor verdicts — Node ${process.version}, ${args.runs} runs of ${args.duration} s per example\n`)
let stable = 0
const examples = args.examples.split(',')
for (const example of examples) {
  /** @type {Record<string, number>} */
  const counts = {}
  for (let i = 0; i < Number(args.runs); i++) {
    const category = await diagnose(example)
    counts[category] = (counts[category] ?? 0) + 1
  }
  const right = counts[EXPECTED[example]] ?? 0
  if (right === Number(args.runs)) stable++
  console.log(`  ${example.padEnd(15)} expected ${EXPECTED[example].padEnd(12)} got ${Object.entries(counts).map(([c, n]) => `${c} ×${n}`).join(', ')}`)
}
console.log(`\n${stable} of ${examples.length} examples got the expected verdict in every run.`)
