// The probe's count of requests finished, against a real server on 127.0.0.1: between counts of the requests in
// flight it guesses each request finished in the sample it started in; a count undoes the guesses for requests still
// in flight — those a client abandoned included — so a window, which ends with a count, sums to what finished in it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { once } from 'node:events'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { RequestTracker } from '../../src/probe/request-tracker.js'

/** @param {number} ms */
const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))

/**
 * @param {number} port
 * @param {string} path
 * @returns {Promise<string>}
 */
function get (port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent: false }, res => {
      let body = ''
      res.on('data', (/** @type {Buffer} */ c) => { body += c })
      res.on('end', () => resolve(body))
    }).on('error', reject)
  })
}

/**
 * Sends a request and goes away before it is answered, once the server has it.
 * @param {number} port
 * @param {() => number} held how many requests the server holds
 */
async function abandon (port, held) {
  const before = held()
  const req = http.get({ host: '127.0.0.1', port, path: '/hold', agent: false })
  req.on('error', () => {})
  while (held() === before) await sleep(5)
  req.destroy()
}

test('requests abandoned between counts are not counted finished; those their handlers end later are', async () => {
  const tracker = new RequestTracker()
  tracker.start()
  /** @type {http.ServerResponse[]} */
  let holding = []
  const server = http.createServer((req, res) => {
    if (req.url === '/hold') holding.push(res)
    else res.end('quick\n')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port
  tracker.watch(server, port)
  let finished = 0
  const take = (/** @type {boolean} */ count = false) => {
    const [s] = tracker.take(count)
    finished += s?.finished ?? 0
    return s
  }
  try {
    for (let i = 0; i < 3; i++) await get(port, '/')
    take()
    for (let i = 0; i < 4; i++) await abandon(port, () => holding.length)
    await sleep(50)
    take()
    assert.equal(finished, 7, 'between counts, every request started is guessed finished')
    const counted = take(true)
    assert.equal(counted.inflight, 4, 'the abandoned requests\' handlers still run')
    assert.equal(finished, 3, 'the count undoes the guesses for them')
    holding[0].end('late\n')
    holding[1].end('late\n')
    holding = holding.slice(2)
    take(true)
    assert.equal(finished, 5, 'a handler that ends its response after the client left has finished it')
    // The handler lets go of the other two without ending them: collected, they never finished.
    holding = []
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc')
    for (let i = 0; i < 5; i++) {
      gc()
      await sleep(20)
    }
    assert.equal(take(true), undefined, 'none in flight, none finished: nothing to report')
    assert.equal(finished, 5, 'requests dropped unended are not counted finished')
  } finally {
    tracker.stop()
    server.close()
    server.closeAllConnections()
  }
})
