// npm run bench: every benchmark in turn (each prints ratios against peers measured in the same run).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const dir = fileURLToPath(new URL('.', import.meta.url))
const first = ['load.js']
const benches = readdirSync(dir).filter(f => f.endsWith('.js') && f !== 'run.js').sort((a, b) => {
  const ia = first.indexOf(a)
  const ib = first.indexOf(b)
  return (ia === -1 ? first.length : ia) - (ib === -1 ? first.length : ib) || a.localeCompare(b)
})
let failed = 0
for (const file of benches) {
  console.log(`\n=== bench/${file}\n`)
  const r = spawnSync(process.execPath, [file, ...process.argv.slice(2)], { cwd: dir, stdio: 'inherit' })
  if (r.status !== 0) failed++
}
process.exitCode = failed > 0 ? 1 : 0
