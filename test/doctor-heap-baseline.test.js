// What the load left alive is the heap after a full collection once it stopped, less the heap after one just before
// it. Reading the baseline without that collection (it costs the window's throughput: docs/overhead.md, "The doctor
// on a saturated server") was tried on 2026-12-02 and hid a leak: garbage start-up leaves in the heap's older spaces is not bounded by
// anything V8 reports short of marking. These servers leave such garbage; their verdicts must stay right.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hotpath } from './helpers/cli.js'

/**
 * @param {string} server
 * @param {Record<string, string>} [env]
 */
async function category (server, env = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-baseline-'))
  const json = join(dir, 'd.json')
  // The snapshots confirm a leak whose heap's line scatters on a loaded machine: they get the time such a machine needs.
  const r = await hotpath(['doctor', '-d', '5', '-c', '8', '--no-progress', '--snapshot-time', '180s', '--save', join(dir, 'run'), '--json', json, '--', process.execPath, server], { env: { PORT: '0', ...env }, timeout: 240000, alone: true })
  assert.equal(r.code, 0, r.stderr)
  return JSON.parse(await readFile(json, 'utf8')).category
}

for (const server of ['test/fixtures/servers/boot-dataset.js', 'test/fixtures/servers/boot-temporaries.js']) {
  test(`start-up's garbage neither hides a leak nor makes one: ${server}`, async () => {
    assert.notEqual(await category(server), 'memory-leak')
    assert.equal(await category(server, { LEAK: '1' }), 'memory-leak')
  })
}
