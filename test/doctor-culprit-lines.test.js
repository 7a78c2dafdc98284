// The line doctor gives a culprit, through the CLI as a user runs it, on servers written for the purpose
// (test/fixtures/servers/culprit-lines): a handler whose time goes to a method V8 names `Model.<computed>` (an ORM's
// accessor defined under a computed key) is blamed at its call of it. What is checked is the line, not the figures.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath, ROOT } from './helpers/cli.js'

const DIR = 'test/fixtures/servers/culprit-lines'

/**
 * The 1-based line of the first line of a file that contains `text`.
 * @param {string} file relative to the repository
 * @param {string} text
 */
async function lineOf (file, text) {
  const lines = (await readFile(join(ROOT, file), 'utf8')).split('\n')
  const i = lines.findIndex(l => l.includes(text))
  assert.ok(i !== -1, `${file} contains ${text}`)
  return i + 1
}

/**
 * Runs doctor on a server for 3 s, the machine to itself, and returns its JSON diagnosis and what it printed.
 * @param {string} server relative to the repository
 */
async function doctor (server) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-lines-'))
  const json = join(dir, 'diagnosis.json')
  const r = await hotpath(['doctor', '-d', '3', '--no-progress', '--no-experiments', '--json', json, '--', process.execPath, server], { env: { PORT: '0' }, timeout: 90000, alone: true })
  assert.equal(r.code, 0, `doctor exited ${r.code}\n${r.stderr}\n${r.stdout}`)
  return { d: JSON.parse(await readFile(json, 'utf8')), out: r.stdout }
}

test('time in a method V8 names Model.<computed> is blamed at the handler\'s call of it', async () => {
  const server = `${DIR}/computed-callee.js`
  const { d, out } = await doctor(server)
  const first = d.culprits[0]
  assert.equal(first.file, server, out)
  assert.equal(first.calls[0].function, 'Model.<computed>', out)
  assert.equal(first.line, await lineOf(server, 'posts.checksumRows(4)'), out)
})
