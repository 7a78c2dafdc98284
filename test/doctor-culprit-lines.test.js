// The line doctor gives a culprit, through the CLI as a user runs it, on servers written for the purpose
// (test/fixtures/servers/culprit-lines): a handler whose time goes to a method V8 names `Model.<computed>` (an ORM's
// accessor defined under a computed key) is blamed at its call of it; a handler whose allocations are its own object
// literals is blamed where it builds them, not at its largest call. What is checked is the line, not the figures.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath } from './helpers/cli.js'
import { assertSchema } from './helpers/schema.js'
import { lineOf } from './helpers/source-lines.js'

const DIR = 'test/fixtures/servers/culprit-lines'

/**
 * Runs doctor on a server for 3 s, the machine to itself, and returns its JSON diagnosis and what it printed.
 * @param {string} server relative to the repository
 */
async function doctor (server) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-lines-'))
  const json = join(dir, 'diagnosis.json')
  const r = await hotpath(['doctor', '-d', '3', '--no-progress', '--no-experiments', '--json', json, '--', process.execPath, server], { env: { PORT: '0' }, timeout: 90000, alone: true })
  assert.equal(r.code, 0, `doctor exited ${r.code}\n${r.stderr}\n${r.stdout}`)
  const d = JSON.parse(await readFile(json, 'utf8'))
  assertSchema('doctor', d)
  return { d, out: r.stdout }
}

test('time in a method V8 names Model.<computed> is blamed at the handler\'s call of it', async () => {
  const server = `${DIR}/computed-callee.js`
  const { d, out } = await doctor(server)
  const first = d.culprits[0]
  assert.equal(first.file, server, out)
  assert.equal(first.calls[0].function, 'Model.<computed>', out)
  assert.equal(first.line, await lineOf(server, 'posts.checksumRows(4)'), out)
})

// V8 samples allocations without a position: what a function allocates itself (its object literals) has no line, and
// the line of its largest call (res.end) used to stand for all of it.
test('a handler that builds its documents itself is blamed, for allocations, where its own time builds them', async () => {
  const server = `${DIR}/ttl-documents.js`
  const { d, out } = await doctor(server)
  assert.ok(['gc', 'memory-leak'].includes(d.category), out)
  const top = d.culprits.find((/** @type {any} */ c) => c.measure === 'allocations')
  assert.ok(top, out)
  assert.equal(top.file, server, out)
  assert.equal(top.line, await lineOf(server, 'rows.push({'), out)
  assert.equal(top.facts.kind, 'allocates-itself')
  assert.equal(top.facts.lineFrom, 'cpu-time')
  assert.ok(top.facts.of > 0.5 && top.facts.of <= 1, `its own allocations are most of it: ${top.facts.of}`)
  assert.match(out, /of it is its own allocations — object and array literals, strings it builds — which heap sampling gives no line: the line shown is where its CPU time goes/)
})
