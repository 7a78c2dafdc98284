import { readFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { readRequestsFile } from '../load/requests.js'
import { durationFlag, numberFlag } from './args.js'

/**
 * The flags that shape a load, shared by every command that drives one (load, doctor, flame).
 * @type {Record<string, import('./args.js').OptionSpec>}
 */
export const LOAD_FLAGS = {
  connections: { type: 'string', short: 'c', value: 'N', description: 'concurrent connections', default: '10' },
  pipelining: { type: 'string', short: 'p', value: 'N', description: 'requests in flight per connection', default: '1' },
  duration: { type: 'string', short: 'd', value: 'time', description: 'how long to measure: 10, 30s, 2m', default: '10s' },
  amount: { type: 'string', short: 'a', value: 'N', description: 'complete N requests instead of running for a duration' },
  rate: { type: 'string', short: 'R', value: 'N', description: 'send N requests/s in total at a constant arrival rate (open loop; latency from intended send times)' },
  timeout: { type: 'string', short: 't', value: 'time', description: 'time a request may wait for its response', default: '10s' },
  workers: { type: 'string', short: 'w', value: 'N', description: 'worker threads sharing the connections', default: '1' },
  warmup: { type: 'string', value: 'time', description: 'load for this long before measuring', default: '0' },
  method: { type: 'string', short: 'm', value: 'method', description: 'request method', default: 'GET' },
  header: { type: 'string', short: 'H', multiple: true, value: 'Name: value', description: 'add a request header (repeatable)' },
  body: { type: 'string', short: 'b', value: 'text', description: 'request body' },
  'body-file': { type: 'string', value: 'file', description: 'read the request body from a file' },
  requests: { type: 'string', value: 'file', description: 'JSON array or NDJSON of {method, path, headers, body}, sent round-robin' },
  'socket-path': { type: 'string', value: 'path', description: 'connect to this unix socket' },
  'busy-poll': { type: 'boolean', description: 'never sleep while responses keep coming: costs the generator a core, spares a server on the same machine the cost of waking it' },
  coalesce: { type: 'boolean', description: 'nap up to 50 µs between reads to read responses in batches: cheaper for the generator, but responses that arrive during a nap are timed late (the result says so)' }
}

/**
 * Turns parsed flag values into load() options, with one clear error per bad value.
 * @param {Record<string, string | boolean | (string | boolean)[] | undefined>} values
 * @returns {Promise<Omit<import('../load/load.js').LoadOptions, 'url'>>}
 */
export async function loadOptionsFromFlags (values) {
  const str = (/** @type {string} */ k) => /** @type {string | undefined} */ (values[k])
  if (values.body !== undefined && values['body-file'] !== undefined) {
    throw new UsageError('give either --body or --body-file, not both')
  }
  const amount = numberFlag('amount', str('amount'), { integer: true })
  /** @type {Omit<import('../load/load.js').LoadOptions, 'url'>} */
  const options = {
    connections: numberFlag('connections', str('connections'), { integer: true }),
    pipelining: numberFlag('pipelining', str('pipelining'), { integer: true }),
    duration: durationFlag('duration', str('duration')),
    amount,
    rate: numberFlag('rate', str('rate')),
    timeout: durationFlag('timeout', str('timeout')),
    workers: numberFlag('workers', str('workers'), { integer: true }),
    warmup: durationFlag('warmup', str('warmup'), { allowZero: true }),
    method: str('method'),
    headers: /** @type {string[] | undefined} */ (values.header),
    body: str('body'),
    socketPath: str('socket-path'),
    busyPoll: values['busy-poll'] === true ? true : undefined,
    coalesce: values.coalesce === true ? true : undefined
  }
  const bodyFile = str('body-file')
  if (bodyFile !== undefined) {
    try {
      options.body = await readFile(bodyFile)
    } catch (err) {
      throw new UsageError(`cannot read body file '${bodyFile}': ${/** @type {NodeJS.ErrnoException} */ (err).code ?? err}`)
    }
  }
  const requestsFile = str('requests')
  if (requestsFile !== undefined) options.requests = await readRequestsFile(requestsFile)
  if (options.connections !== undefined && options.workers !== undefined && options.workers > options.connections) {
    throw new UsageError(`--workers (${options.workers}) cannot exceed --connections (${options.connections})`)
  }
  for (const key of /** @type {(keyof typeof options)[]} */ (Object.keys(options))) {
    if (options[key] === undefined) delete options[key]
  }
  return options
}
