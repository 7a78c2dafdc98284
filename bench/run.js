// npm run bench: every named benchmark (the bench:* scripts of package.json) in turn, each printing ratios against
// peers measured in the same run.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const { scripts } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const names = Object.keys(scripts).filter(n => n.startsWith('bench:'))
let failed = 0
for (const name of names) {
  console.log(`\n=== npm run ${name}\n`)
  const r = spawnSync('npm', ['run', '--silent', name, '--', ...process.argv.slice(2)], { stdio: 'inherit' })
  if (r.status !== 0) failed++
}
process.exitCode = failed > 0 ? 1 : 0
