// The load generator counts latencies in front of the HDR histogram (src/load/histogram.js); what it hands on must be
// the histogram that recording each value directly would have built, on both sides of the counted range.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHistogram, encodeHistogram, LatencyHistogram, summarize } from '../../src/load/histogram.js'

/** A small deterministic generator, so a failure can be replayed. @param {number} seed */
function random (seed) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

test('counted latencies give the same histogram as recording each one, across the counted range and past it', () => {
  const next = random(7)
  const counted = new LatencyHistogram()
  const direct = createHistogram()
  for (let second = 0; second < 3; second++) {
    for (let i = 0; i < 20_000; i++) {
      const r = next()
      // mostly sub-millisecond to tens of ms, some at and past the 65.536 ms boundary, a few of many seconds
      const us = r < 0.7 ? Math.floor(next() * 5_000) : r < 0.95 ? Math.floor(60_000 + next() * 10_000) : Math.floor(next() * 30_000_000)
      counted.record(us)
      direct.recordValue(us)
    }
    counted.record(0)
    direct.recordValue(0)
    counted.record(65_535)
    direct.recordValue(65_535)
    counted.record(65_536)
    direct.recordValue(65_536)
    const h = counted.flush()
    assert.equal(h.totalCount, direct.totalCount)
    assert.equal(encodeHistogram(h), encodeHistogram(direct))
    assert.deepEqual(summarize(h), summarize(direct))
    // flush() is idempotent; reset() starts the next second empty
    assert.equal(encodeHistogram(counted.flush()), encodeHistogram(direct))
    counted.reset()
    direct.reset()
    assert.equal(counted.flush().totalCount, 0)
  }
})

test('a reset with values still counted drops them', () => {
  const counted = new LatencyHistogram()
  counted.record(120)
  counted.record(80_000)
  counted.reset()
  counted.record(5)
  const h = counted.flush()
  assert.equal(h.totalCount, 1)
  assert.equal(h.maxValue, 5)
})
