// What the protocol sniffer costs per write (and per read) of a client socket: it runs on every one of them in the
// user's server while the doctor watches. Each case runs on one long-lived sniffer, as a connection does; the best
// and the median of several rounds are printed: on a busy machine the best is the cost, the median the noise.
//
//   node bench/protocols.js                 ROUNDS=7 ITERATIONS=200000
import { createSniffer } from '../src/sampling/protocols.js'
import { cstr, pg } from '../test/helpers/wire.js'

const ROUNDS = Number(process.env.ROUNDS ?? 7)
const ITERATIONS = Number(process.env.ITERATIONS ?? 200000)

const zeros = (/** @type {number} */ n) => Buffer.alloc(n)

const sql = 'SELECT id, user_id, data, expires_at FROM sessions WHERE id = $1'
const parse = pg('P', cstr(''), cstr(sql), zeros(2))
const bind = pg('B', cstr(''), cstr(''), zeros(2), Buffer.from([0, 1, 0, 0, 0, 36]), Buffer.alloc(36, 0x61), zeros(2))
const describe = pg('D', Buffer.from('P'), cstr(''))
const execute = pg('E', cstr(''), zeros(4))
const sync = pg('S')
const params = Buffer.concat([Buffer.from([0, 3, 0, 0]), cstr('user'), cstr('app'), Buffer.from([0])])
const startup = Buffer.concat([Buffer.from([0, 0, 0, params.length + 4]), params])
const ready = pg('Z', Buffer.from('I'))
const pgReply = Buffer.concat([pg('1'), pg('2'), pg('T', zeros(2)), pg('D', zeros(2)), pg('C', cstr('SELECT 1')), ready])

/**
 * @typedef {object} Case
 * @property {string} name
 * @property {number} writes socket writes per iteration
 * @property {() => (sniffer: import('../src/sampling/protocols.js').Sniffer) => void} setup
 */

/** @type {Case[]} */
const CASES = [
  {
    name: 'postgres Parse+Bind+Execute+Sync, one write',
    writes: 1,
    setup: () => {
      const batch = Buffer.concat([parse, bind, execute, sync])
      return (s) => { s.write(batch) }
    }
  },
  {
    name: 'postgres as pg writes it: P, B, D, E, S',
    writes: 5,
    setup: () => (s) => {
      s.write(parse)
      s.write(bind)
      s.write(describe)
      s.write(execute)
      s.write(sync)
    }
  },
  {
    name: 'postgres reply (ParseComplete … ReadyForQuery)',
    writes: 1,
    setup: () => (s) => { s.reads(pgReply) }
  },
  {
    name: 'redis GET, string (ioredis)',
    writes: 1,
    setup: () => (s) => { s.write('*2\r\n$3\r\nget\r\n$10\r\nsession:42\r\n') }
  },
  {
    name: 'redis GET, Buffer',
    writes: 1,
    setup: () => {
      const get = Buffer.from('*2\r\n$3\r\nGET\r\n$10\r\nsession:42\r\n')
      return (s) => { s.write(get) }
    }
  },
  {
    name: 'redis reply ($-1)',
    writes: 1,
    setup: () => {
      const nil = Buffer.from('$-1\r\n')
      return (s) => { s.reads(nil) }
    }
  },
  {
    name: 'unknown line protocol write',
    writes: 1,
    setup: () => {
      const line = Buffer.from('STATUS worker-7 ready\r\n')
      return (s) => { s.write(line) }
    }
  }
]

/** @type {Record<string, Buffer | string>} the first write of each case's connection */
const FIRST = {
  postgres: startup,
  redis: '*1\r\n$4\r\nPING\r\n',
  unknown: 'HELLO\r\n'
}

for (const c of CASES) {
  const kind = c.name.split(' ')[0]
  const run = c.setup()
  /** @type {number[]} */
  const rounds = []
  for (let r = 0; r < ROUNDS + 1; r++) {
    const s = createSniffer()
    s.write(FIRST[kind] ?? startup)
    const start = process.hrtime.bigint()
    for (let i = 0; i < ITERATIONS; i++) run(s)
    const ns = Number(process.hrtime.bigint() - start) / ITERATIONS / c.writes
    if (r > 0) rounds.push(ns) // the first round warms up
  }
  rounds.sort((a, b) => a - b)
  const unit = c.name.includes('reply') ? 'read' : 'write'
  console.log(`${c.name.padEnd(50)} ${rounds[0].toFixed(0).padStart(6)} ns per ${unit} at best, ${rounds[rounds.length >> 1].toFixed(0)} median`)
}
