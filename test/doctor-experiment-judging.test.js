// How doctor's experiments go up a ladder and which value they recommend, on values as judged (docs/diagnosis.md,
// "Which value"): the end-to-end tests in doctor-experiments.test.js measure one value of each ladder within their
// time; the rules for many values are here, where every case can be written down.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { chooseValue, experimentVerdict, stopAfter } from '../src/analysis/experiment-judging.js'

/**
 * A value as judged, with only what the ladder's rules read.
 * @param {string} value
 * @param {'better' | 'worse' | 'same' | 'unknown' | 'failed'} verdict
 * @param {number} [score] the relative gain it was judged by
 * @returns {import('../src/analysis/experiments.js').TriedValue}
 */
function tried (value, verdict, score = 0) {
  return /** @type {any} */ ({ value, verdict, score, failed: verdict === 'failed' ? 'did not start' : null })
}

test('the ladder goes on while each value gains more than the best before it, and stops at a loss, a failure or a plateau', () => {
  assert.equal(stopAfter([tried('32', 'better', 0.2)]), null, 'a first gain goes on')
  assert.equal(stopAfter([tried('32', 'same')]), null, 'no gain before any helped does not stop it')
  assert.equal(stopAfter([tried('32', 'same'), tried('64', 'better', 0.3)]), null)
  assert.equal(stopAfter([tried('32', 'better', 0.2), tried('64', 'better', 0.4)]), null, 'twice the gain goes on')
  // A gain that adds no more than a tenth of the best, plus 2 points, is a plateau.
  assert.equal(stopAfter([tried('32', 'better', 0.2), tried('64', 'better', 0.24)]), 'plateau')
  assert.equal(stopAfter([tried('32', 'better', 0.2), tried('64', 'same')]), 'plateau')
  assert.equal(stopAfter([tried('32', 'better', 0.2), tried('64', 'worse')]), 'worse')
  assert.equal(stopAfter([tried('32', 'worse')]), 'worse')
  assert.equal(stopAfter([tried('32', 'better', 0.2), tried('64', 'failed')]), 'failed')
})

test('the value recommended is the smallest that gave 80% of the best gain; none when no value gained', () => {
  assert.equal(chooseValue([tried('4', 'better', 1.0), tried('8', 'better', 2.0), tried('16', 'better', 2.1)]), '8')
  assert.equal(chooseValue([tried('4', 'better', 1.7), tried('8', 'better', 2.0), tried('16', 'better', 2.1)]), '4')
  // Compared as numbers, not as words: 128 is above 32.
  assert.equal(chooseValue([tried('128', 'better', 0.5), tried('32', 'better', 0.45)]), '32')
  assert.equal(chooseValue([tried('32', 'same'), tried('64', 'worse')]), null)
  assert.equal(chooseValue([]), null)
})

test('an experiment helps when a value was chosen; else it is worse, no gain, failed, or not run', () => {
  assert.equal(experimentVerdict([tried('8', 'better', 0.5)], '8'), 'helps')
  assert.equal(experimentVerdict([tried('8', 'same'), tried('16', 'worse')], null), 'worse')
  assert.equal(experimentVerdict([tried('8', 'same'), tried('16', 'unknown')], null), 'no-gain')
  assert.equal(experimentVerdict([tried('8', 'failed')], null), 'failed')
  assert.equal(experimentVerdict([], null), 'not-run')
})
