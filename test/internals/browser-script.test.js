// The pages' browser scripts are ES modules joined into one inline script (src/report/flame/browser-script.js): the
// joined scripts must parse and define only their entry point, and the joining must refuse what one shared scope
// cannot take (the same name in two modules, an import of a module left out).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import vm from 'node:vm'
import { browserScript } from '../../src/report/flame/browser-script.js'
import { flameAssets } from '../../src/report/flame/assets.js'
import { reportAssets } from '../../src/report/html/assets.js'

test('the flame graph and report scripts parse, and hand the page nothing but their entry point', () => {
  const window = {}
  vm.runInNewContext(flameAssets().js, { window })
  assert.deepEqual(Object.keys(window), ['HotpathFlame'])
  assert.equal(typeof /** @type {any} */ (window).HotpathFlame.init, 'function')
  // The report's script holds uPlot, the flame graph and its own parts, in that order.
  const js = reportAssets().js
  assert.doesNotThrow(() => new vm.Script(js))
  assert.ok(js.indexOf('window.HotpathFlame = { init }') < js.indexOf('window.HotpathReport = { init }'))
  assert.doesNotMatch(js, /^(import|export) /m)
})

test('joining refuses two modules declaring one name, an import of a module not joined, and other import forms', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-browser-script-'))
  const url = pathToFileURL(dir + '/')
  writeFileSync(join(dir, 'a.js'), "/// <reference lib=\"dom\" />\nimport { b } from './b.js'\n\nexport function a () { return b() }\n")
  writeFileSync(join(dir, 'b.js'), 'export function b () { return 1 }\nexport const shared = 2\n')
  writeFileSync(join(dir, 'c.js'), 'const shared = 3\n')
  writeFileSync(join(dir, 'd.js'), "import * as b from './b.js'\n")
  const window = /** @type {any} */ ({})
  vm.runInNewContext(browserScript(url, ['b.js', 'a.js'], 'window.a = a'), { window })
  assert.equal(window.a(), 1)
  assert.throws(() => browserScript(url, ['a.js'], ''), /a\.js imports b\.js/)
  assert.throws(() => browserScript(url, ['b.js', 'c.js'], ''), /both declare shared/)
  assert.throws(() => browserScript(url, ['b.js', 'd.js'], ''), /not a line the page script can take/)
})
