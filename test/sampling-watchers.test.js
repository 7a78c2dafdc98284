// The listener and agent-pool watchers against real servers and clients: the two hidden causes docs/doctor.md
// names: a listener added on every request, and a socket pool capped out of sight.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { load } from 'hotpath'
import { AgentWatcher, ListenerWatcher } from 'hotpath/runtime'
import { httpServer } from './helpers/servers.js'
import { runModule } from './helpers/child.js'

const THIS_FILE = fileURLToPath(import.meta.url)
/** The 1-based line of the first line of this file that contains `marker`. @param {string} marker */
function lineOf (marker) {
  return readFileSync(THIS_FILE, 'utf8').split('\n').findIndex(l => l.includes(marker) && !l.includes('lineOf(')) + 1
}

class RequestCache extends EventEmitter {}

test('a middleware that adds a listener on every request is caught, with its file and line, whatever maxListeners says', async () => {
  const saved = EventEmitter.defaultMaxListeners
  EventEmitter.defaultMaxListeners = Infinity // what silenced Node's own warning in the post-mortem
  const cache = new RequestCache()
  // meant to attach once; the flag check is wrong, so every request adds one more
  const middleware = (/** @type {http.IncomingMessage} */ req) => {
    cache.on('after', () => req.url) // LEAK-SITE
  }
  const watcher = new ListenerWatcher({ threshold: 10 })
  watcher.start()
  const server = await httpServer((req, res) => {
    middleware(req)
    cache.emit('after')
    res.end('ok')
  })
  try {
    const r = await load({ url: server.url, connections: 4, amount: 300 })
    assert.equal(r['2xx'], 300)
    const found = watcher.snapshot()
    const leak = found.find(g => g.emitter === 'RequestCache')
    assert.ok(leak, JSON.stringify(found))
    assert.equal(found[0], leak, 'most listeners first')
    assert.equal(leak.event, 'after')
    assert.equal(leak.count, 300)
    assert.equal(leak.emitters, 1)
    assert.ok(leak.site)
    assert.equal(leak.site.file, THIS_FILE)
    assert.equal(leak.site.line, lineOf('// LEAK-SITE'))
    assert.equal(typeof leak.site.column, 'number')
    assert.ok(leak.stack.length > 1 && leak.stack.every(f => typeof f === 'string'))
    assert.ok(!leak.stack.some(f => f.includes('src/sampling/')), 'the watcher\'s own frame is not in the stack')
    // the server's own per-connection listeners never grow that far
    assert.ok(!found.some(g => g.emitter === 'Socket' && g.count >= 300))
  } finally {
    watcher.stop()
    EventEmitter.defaultMaxListeners = saved
    await server.close()
  }
})

test('while Node\'s own warning can tell, nothing is wrapped, and the leak is still caught with its site, --no-warnings or not', async () => {
  for (const flag of ['--no-warnings', '--disable-warning=MaxListenersExceededWarning']) {
    const r = await runModule(`
      import { EventEmitter } from 'node:events'
      import http from 'node:http'
      import { load } from 'hotpath'
      import { ListenerWatcher } from 'hotpath/runtime'
      const { on, addListener, prependListener } = EventEmitter.prototype
      const watcher = new ListenerWatcher()
      watcher.start()
      const untouched = EventEmitter.prototype.on === on && EventEmitter.prototype.addListener === addListener &&
        EventEmitter.prototype.prependListener === prependListener
      const hooks = new EventEmitter()
      function attachAfterHook (req) { hooks.on('after', () => req.url) }
      const server = http.createServer((req, res) => { attachAfterHook(req); res.end('ok') })
      server.listen(0, '127.0.0.1', async () => {
        const r = await load({ url: 'http://127.0.0.1:' + server.address().port + '/', connections: 2, amount: 200 })
        const found = watcher.snapshot()
        console.log(JSON.stringify({ untouched, every: watcher.watchingEveryAddition, ok: r['2xx'], found }))
        watcher.stop()
        server.close()
      })
    `, { args: [flag] })
    assert.equal(r.code, 0, r.stderr)
    const out = JSON.parse(r.stdout)
    assert.equal(out.untouched, true, 'EventEmitter.prototype is left alone')
    assert.equal(out.every, false)
    assert.equal(out.ok, 200)
    const leak = out.found.find((/** @type {any} */ g) => g.event === 'after')
    assert.ok(leak, r.stdout)
    assert.equal(leak.emitter, 'EventEmitter')
    assert.equal(leak.count, 200)
    assert.equal(leak.emitters, 1)
    assert.equal(leak.site?.function, 'attachAfterHook')
    assert.ok(!leak.stack[0].startsWith('genericNodeError'), 'the stack starts at the adding call')
    assert.doesNotMatch(r.stderr, /MaxListenersExceeded/, `${flag} still silences the printed warning`)
  }
})

test('a default limit past the threshold wraps EventEmitter.prototype; one emitter\'s raised limit watches that emitter only', () => {
  const watcher = new ListenerWatcher()
  const saved = { limit: EventEmitter.defaultMaxListeners, trace: Error.stackTraceLimit }
  watcher.start()
  try {
    assert.equal(watcher.watchingEveryAddition, false)
    new EventEmitter().setMaxListeners(5) // warns sooner than the threshold: nothing to do
    assert.equal(watcher.watchingEveryAddition, false)
    EventEmitter.defaultMaxListeners = 20
    watcher.refresh()
    assert.equal(watcher.watchingEveryAddition, true, 'a default limit past the threshold')
  } finally {
    watcher.stop()
    EventEmitter.defaultMaxListeners = saved.limit
  }
  assert.equal(watcher.watchingEveryAddition, false)

  const raised = new ListenerWatcher()
  const { on } = EventEmitter.prototype
  raised.start()
  const em = new RequestCache().setMaxListeners(0)
  try {
    assert.equal(raised.watchingEveryAddition, false, 'setMaxListeners(0) concerns one emitter')
    assert.equal(EventEmitter.prototype.on, on)
    for (let i = 0; i < 10; i++) em.on('tick', () => i) // RAISED-SITE
    const other = new EventEmitter().setMaxListeners(50)
    for (let i = 0; i < 30; i++) other.on('tock', () => i) // TOCK-SITE
    const found = raised.snapshot()
    assert.deepEqual(found.map(g => [g.emitter, g.event, g.count]), [['EventEmitter', 'tock', 30], ['RequestCache', 'tick', 10]])
    assert.equal(found[1].site?.line, lineOf('// RAISED-SITE'))
    assert.equal(found[0].site?.line, lineOf('// TOCK-SITE'), 'a limit of 50 over a threshold of 10')
    assert.deepEqual(em.eventNames(), ['newListener', 'tick'])
  } finally {
    raised.stop()
  }
  assert.deepEqual(em.eventNames(), ['tick'], 'stop() takes the watcher\'s own listener off')
})

test('a warning whose stack has no frame of the app has that emitter watched, which finds the site', async () => {
  const watcher = new ListenerWatcher()
  const saved = Error.stackTraceLimit
  watcher.start()
  try {
    const em = new RequestCache()
    Error.stackTraceLimit = 2 // Node's own frames fill it
    for (let i = 0; i < 11; i++) em.on('data', () => i)
    Error.stackTraceLimit = saved
    await sleep(5) // warnings arrive on the next tick
    assert.equal(watcher.watchingEveryAddition, false, 'only that emitter is watched')
    assert.equal(watcher.snapshot()[0]?.site, null)
    for (let i = 11; i < 20; i++) em.on('data', () => i) // CUT-SITE
    const [g] = watcher.snapshot()
    assert.equal(g.count, 20)
    assert.equal(g.site?.line, lineOf('// CUT-SITE'))
  } finally {
    Error.stackTraceLimit = saved
    watcher.stop()
  }
})

test('once() and prependListener() count too; the site is the caller, not node:events', () => {
  const watcher = new ListenerWatcher({ threshold: 8 })
  watcher.start()
  try {
    const bus = new EventEmitter()
    bus.setMaxListeners(0)
    for (let i = 0; i < 20; i++) bus.once('ready', () => i) // ONCE-SITE
    const other = new EventEmitter()
    other.setMaxListeners(0)
    for (let i = 0; i < 9; i++) other.prependListener('data', () => i)
    const small = new EventEmitter()
    for (let i = 0; i < 7; i++) small.on('x', () => i)
    const found = watcher.snapshot()
    assert.deepEqual(found.map(g => [g.emitter, g.event, g.count]), [['EventEmitter', 'ready', 20], ['EventEmitter', 'data', 9]])
    assert.equal(found[0].site?.line, lineOf('// ONCE-SITE'))
    assert.ok(!found[0].site?.file.startsWith('node:'))
  } finally {
    watcher.stop()
  }
})

test('many emitters of one kind that each grow are counted as such', () => {
  const watcher = new ListenerWatcher({ threshold: 5 })
  watcher.start()
  try {
    for (let e = 0; e < 4; e++) {
      const em = new RequestCache()
      for (let i = 0; i < 5 + e; i++) em.on('tick', () => i)
    }
    const [g] = watcher.snapshot()
    assert.equal(g.emitter, 'RequestCache')
    assert.equal(g.emitters, 4)
    assert.ok(g.count >= 5)
  } finally {
    watcher.stop()
  }
})

test('stop() restores EventEmitter.prototype exactly, even with two watchers', () => {
  const { on, addListener, prependListener, once, prependOnceListener, setMaxListeners } = EventEmitter.prototype
  const warningListeners = process.listenerCount('warning')
  assert.equal(on, addListener)
  const a = new ListenerWatcher()
  const b = new ListenerWatcher({ threshold: 3 })
  a.start()
  b.start()
  assert.notEqual(EventEmitter.prototype.on, on, 'wrapped while watching')
  assert.equal(EventEmitter.prototype.on, EventEmitter.prototype.addListener, 'on and addListener stay one function')
  a.stop()
  assert.notEqual(EventEmitter.prototype.on, on, 'still wrapped while one watcher is left')
  b.stop()
  assert.equal(EventEmitter.prototype.on, on)
  assert.equal(EventEmitter.prototype.addListener, addListener)
  assert.equal(EventEmitter.prototype.prependListener, prependListener)
  assert.equal(EventEmitter.prototype.once, once)
  assert.equal(EventEmitter.prototype.prependOnceListener, prependOnceListener)
  assert.equal(EventEmitter.prototype.setMaxListeners, setMaxListeners)
  assert.equal(process.listenerCount('warning'), warningListeners)
  // nothing is recorded once stopped
  const em = new EventEmitter().setMaxListeners(0)
  for (let i = 0; i < 40; i++) em.on('late', () => i)
  assert.ok(!b.snapshot().some(g => g.event === 'late'))
  // the threshold applies per watcher
  const watcher = new ListenerWatcher({ threshold: 3 })
  watcher.start()
  const em2 = new EventEmitter()
  for (let i = 0; i < 3; i++) em2.on('three', () => i)
  watcher.stop()
  assert.equal(watcher.snapshot()[0]?.count, 3)
})

test('bad listeners still throw Node\'s own error, and odd emitters do not break the watcher', () => {
  const watcher = new ListenerWatcher({ threshold: 2 })
  watcher.start()
  try {
    assert.throws(() => new EventEmitter().on('x', /** @type {any} */ (42)), { code: 'ERR_INVALID_ARG_TYPE' })
    const odd = new EventEmitter()
    Object.defineProperty(odd, 'constructor', { get () { throw new Error('nope') } })
    const sym = Symbol('s')
    for (let i = 0; i < 4; i++) odd.on(sym, () => i)
    const [g] = watcher.snapshot()
    assert.equal(g.event, 'Symbol(s)')
    assert.equal(g.emitter, 'Object')
  } finally {
    watcher.stop()
  }
})

test('an agent with maxSockets 2 and 10 concurrent requests: 2 in use, 8 queued, and the high-water mark', async () => {
  const server = await httpServer((req, res) => setTimeout(() => res.end('slow'), 150))
  const watcher = new AgentWatcher()
  watcher.start()
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 })
  try {
    const done = []
    for (let i = 0; i < 10; i++) {
      done.push(new Promise((resolve, reject) => {
        http.get(server.url, { agent }, (res) => { res.resume(); res.on('end', resolve) }).on('error', reject)
      }))
    }
    await sleep(40)
    const during = watcher.snapshot()
    const pool = during.find(p => p.agent === 'Agent')
    assert.ok(pool, JSON.stringify(during))
    const { id, ...figures } = pool
    assert.ok(Number.isInteger(id) && id > 0, `an agent is told apart by a number of its own, got ${id}`)
    assert.deepEqual(figures, { agent: 'Agent', protocol: 'http', maxSockets: 2, socketsInUse: 2, freeSockets: 0, queued: 8, maxQueued: 8 })
    assert.deepEqual(during.slice(0, 2).map(p => p.agent), ['http.globalAgent', 'https.globalAgent'])
    assert.equal(during[0].maxSockets, Infinity)
    await Promise.all(done)
    await sleep(20)
    const after = watcher.snapshot().find(p => p.agent === 'Agent')
    assert.ok(after)
    assert.equal(after.queued, 0)
    assert.equal(after.socketsInUse, 0)
    assert.equal(after.freeSockets, 2, 'keep-alive sockets back in the pool')
    assert.equal(after.maxQueued, 8, 'the queue was 8 long right after the previous snapshot')
    assert.equal(watcher.snapshot().find(p => p.agent === 'Agent')?.maxQueued, 0, 'nothing queued since')
  } finally {
    agent.destroy()
    watcher.stop()
    await server.close()
  }
})

test('https agents and subclasses are seen, and stop() restores addRequest', async () => {
  const original = /** @type {any} */ (http.Agent.prototype).addRequest
  const server = await httpServer((req, res) => setTimeout(() => res.end('tls'), 100), { tls: true })
  class S3Agent extends https.Agent {}
  const watcher = new AgentWatcher()
  watcher.start()
  const agent = new S3Agent({ maxSockets: 1, rejectUnauthorized: false })
  try {
    const done = []
    for (let i = 0; i < 3; i++) {
      done.push(new Promise((resolve, reject) => {
        https.get(server.url, { agent }, (res) => { res.resume(); res.on('end', resolve) }).on('error', reject)
      }))
    }
    await sleep(30)
    const pool = watcher.snapshot().find(p => p.agent === 'S3Agent')
    assert.ok(pool)
    assert.equal(pool.protocol, 'https')
    assert.equal(pool.maxSockets, 1)
    assert.equal(pool.socketsInUse + pool.queued, 3)
    assert.ok(pool.queued >= 2, `queued ${pool.queued}`)
    await Promise.all(done)
  } finally {
    agent.destroy()
    watcher.stop()
    await server.close()
  }
  assert.equal(/** @type {any} */ (http.Agent.prototype).addRequest, original)
})

test('watchers left running do not keep a process alive', async () => {
  const r = await runModule(`
    import { AgentWatcher, ListenerWatcher } from 'hotpath/runtime'
    new AgentWatcher().start()
    const l = new ListenerWatcher({ threshold: 2 })
    l.start()
    process.on('x', () => {}); process.on('x', () => {})
    console.log(JSON.stringify(l.snapshot().map(g => g.event)))
  `)
  assert.equal(r.timedOut, false)
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /"x"/)
})
