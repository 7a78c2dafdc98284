// The profiler's options are checked when they are given: an unknown key (with a did-you-mean), a wrong type or a
// signal the process cannot or must not listen to is one TypeError naming the call, never a raw libuv error and never
// silence.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { profiler as typedProfiler, Profiler } from 'hotpath/runtime'

// Called as plain JavaScript would call it: the point is what the checks say, not what the types allow.
const profiler = /** @type {(opts?: any) => import('hotpath/runtime').Profiler} */ (typedProfiler)

const TOKEN = 'test-token-0123456789abcdef'

/**
 * Asserts a one-line TypeError whose message matches.
 * @param {() => unknown} fn
 * @param {RegExp} message
 */
function refuses (fn, message) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof TypeError, `a TypeError, got ${err}`)
    assert.match(err.message, message)
    assert.doesNotMatch(err.message, /\n/)
    return true
  })
}

test('profiler(): unknown keys get a did-you-mean, wrong types say what the option takes', () => {
  refuses(() => profiler({ dirr: '/tmp/x', signal: false }), /^profiler\(\): unknown option 'dirr' \(did you mean 'dir'\?\)$/)
  refuses(() => profiler({ heapInterval: 1024, heapIntreval: 1, signal: false }), /unknown option 'heapIntreval' \(did you mean 'heapInterval'\?\)/)
  refuses(() => profiler({ onCaptured: () => {}, signal: false }), /unknown option 'onCaptured' \(did you mean 'onCapture'\?\)/)
  refuses(() => profiler({ verbose: true, signal: false }), /^profiler\(\): unknown option 'verbose'$/)
  refuses(() => profiler({ duration: '10', signal: false }), /^profiler\(\): duration must be a positive number of seconds, got "10"$/)
  refuses(() => profiler({ duration: -1, signal: false }), /duration must be a positive number of seconds, got -1/)
  refuses(() => profiler({ interval: 0, signal: false }), /interval must be a positive number of µs, got 0/)
  refuses(() => profiler({ heap: 'no', signal: false }), /heap must be true or false, got "no"/)
  refuses(() => profiler({ dir: 42, signal: false }), /dir must be a string, got 42/)
  refuses(() => profiler({ onError: 'log', signal: false }), /onError must be a function, got "log"/)
  refuses(() => new Profiler(/** @type {any} */ ('fast')), /^profiler\(\): options must be an object, got "fast"$/)
})

test('profiler(): a signal that cannot be listened to, or must not be, is refused by name', () => {
  // SIGKILL threw libuv's `uv_signal_start EINVAL`; SIGFOO and SIGUSR1 (Node's inspector) were taken without a word.
  for (const signal of ['SIGKILL', 'SIGSTOP', 'SIGFOO', 'sigusr2', 'SIGUSR1', 'SIGPROF', 'SIGTERM', 'SIGINT', 'SIGSEGV', '']) {
    refuses(() => profiler({ signal: /** @type {any} */ (signal) }), new RegExp(`^profiler\\(\\): signal must be the name of a signal this process can listen to .* or false, got ${JSON.stringify(signal)}$`))
  }
  refuses(() => profiler({ signal: /** @type {any} */ (true) }), /signal must be .*, got true$/)
  refuses(() => profiler({ signal: /** @type {any} */ (12) }), /signal must be .*, got 12$/)
  // What remains can be listened to, and is let go of on close.
  const before = process.listenerCount('SIGHUP')
  const p = profiler({ signal: 'SIGHUP' })
  assert.equal(process.listenerCount('SIGHUP'), before + 1)
  p.close()
  assert.equal(process.listenerCount('SIGHUP'), before)
  profiler({ signal: false }).close()
})

test('capture() and httpHandler() check theirs the same way, and a message never repeats the token', async () => {
  const p = profiler({ signal: false, duration: 0.1, heap: false })
  try {
    refuses(() => p.capture(/** @type {any} */ ({ durtion: 5 })), /^profiler\.capture\(\): unknown option 'durtion' \(did you mean 'duration'\?\)$/)
    refuses(() => p.capture({ duration: -2 }), /^profiler\.capture\(\): duration must be a positive number of seconds, got -2$/)
    refuses(() => p.capture({ duration: Infinity }), /duration must be a positive number of seconds, got Infinity/)
    refuses(() => p.capture(/** @type {any} */ ({ heap: 1 })), /^profiler\.capture\(\): heap must be true or false, got 1$/)
    assert.equal(p.busy, false, 'a refused call starts nothing')

    refuses(() => p.httpHandler(/** @type {any} */ ({ token: TOKEN, maxDurration: 5 })), /^profiler\.httpHandler\(\): unknown option 'maxDurration' \(did you mean 'maxDuration'\?\)$/)
    refuses(() => p.httpHandler({ token: TOKEN, maxDuration: 0 }), /^profiler\.httpHandler\(\): maxDuration must be a positive number of seconds, got 0$/)
    refuses(() => p.httpHandler(/** @type {any} */ ({ tokn: TOKEN })), /unknown option 'tokn' \(did you mean 'token'\?\)/)
    refuses(() => p.httpHandler(/** @type {any} */ (undefined)), /^profiler\.httpHandler\(\): token must be a secret of at least 16 characters$/)
    refuses(() => p.httpHandler(/** @type {any} */ ({ token: 1234567890123456 })), /token must be a string, got 1234567890123456/)
    refuses(() => p.httpHandler({ token: 'hunter2-secret' }), /^profiler\.httpHandler\(\): token must be a secret of at least 16 characters$/)
    assert.equal(typeof p.httpHandler({ token: TOKEN, maxDuration: 30 }), 'function')
  } finally {
    await p.close()
  }
})
