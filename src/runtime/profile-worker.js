// The worker thread of one capture: everything that costs time on a big profile happens here, off the app's event
// loop — checking the directory, parsing the profiler's answer (a 60 s profile is megabytes of JSON), JSON.stringify,
// the model, pprof encoding, gzip and the writes. For the main thread it also holds the profiler sessions
// (profile-main.js), so V8's answers are parsed here, and the main thread never holds the profile.
// For a profiler inside a worker thread, that thread profiles itself and posts the profiles here (their copy is its
// cost). Messages: in `stop` (attach) or `profiles` (self); out `started`, then `done` or `failed`.
import { join } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { buildHeapProfile, buildProfile } from '../profile/model.js'
import { modelToPprof } from '../profile/pprof.js'
import { checkProfileDir, unguessable, writeExclusive } from './profile-files.js'
import { MainThreadCapture } from './profile-main.js'

// The main thread's CPU profile comes in pieces of this length (see profile-main.js).
const PIECE_MS = Number(process.env.HOTPATH_CHUNK_MS ?? 1000)

/**
 * What the capturing thread asks for.
 * @typedef {object} JobData
 * @property {string} dir
 * @property {boolean} private the default directory (its stricter check)
 * @property {string} prefix the file names' start (`t<threadId>-` for a worker thread)
 * @property {boolean} attach profile the main thread from here; false: profiles arrive in a message
 * @property {boolean} heap
 * @property {number} [interval]
 * @property {number} [heapInterval]
 */

/**
 * @typedef {{ type: 'stop' } | { type: 'profiles', cpu: import('../profile/cpuprofile.js').CpuProfile, heap: import('../profile/cpuprofile.js').SamplingHeapProfile | null, startedAt: number, duration: number }} JobMessage
 */

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
const job = /** @type {JobData} */ (workerData)
// Listening from the first moment, so that a stop sent while the profilers start is not lost; and for good, because
// the listener is what keeps this thread alive — an answer awaited from the main thread's inspector does not.
/** @type {(msg: JobMessage) => void} */
let heard = () => {}
const message = /** @type {Promise<JobMessage>} */ (new Promise((resolve) => { heard = resolve }))
port.on('message', (msg) => heard(msg))

async function run () {
  await checkProfileDir(job.dir, { private: job.private })
  const taken = job.attach ? await attach() : await received()
  // Every file of a capture shares one unguessable stem.
  const stem = join(job.dir, `${job.prefix}${process.pid}-${stamp(taken.startedAt)}-${unguessable()}`)
  // No source reading: a profile names the app's files, and `hotpath flame --from` maps sources where it is rendered.
  const files = [
    await writeExclusive(`${stem}.cpuprofile`, JSON.stringify(taken.cpu)),
    await writeExclusive(`${stem}.cpu.pb.gz`, modelToPprof(buildProfile(taken.cpu, { readSources: false })))
  ]
  if (taken.heap) {
    files.push(await writeExclusive(`${stem}.heapprofile`, JSON.stringify(taken.heap)))
    files.push(await writeExclusive(`${stem}.heap.pb.gz`, modelToPprof(buildHeapProfile(taken.heap, { readSources: false }))))
  }
  port.postMessage({ type: 'done', files, startedAt: taken.startedAt, duration: taken.duration })
}

async function attach () {
  const capture = await MainThreadCapture.start({ interval: job.interval, heap: job.heap, heapInterval: job.heapInterval })
  try {
    const startedAt = Date.now()
    port.postMessage({ type: 'started' })
    const stopped = message.then(() => true)
    while (!await Promise.race([stopped, sleep(PIECE_MS).then(() => false)])) await capture.next()
    const duration = (Date.now() - startedAt) / 1000
    return { ...await capture.stop(), startedAt, duration }
  } catch (err) {
    capture.close()
    throw err
  }
}

async function received () {
  port.postMessage({ type: 'started' })
  const msg = await message
  if (msg.type !== 'profiles') throw new Error('the capture was stopped before its profiles arrived')
  return msg
}

/** @param {number} ms */
function sleep (ms) {
  return new Promise(resolve => setTimeout(resolve, ms))
}

/** @param {number} ms */
function stamp (ms) {
  return new Date(ms).toISOString().replace(/[-:]/g, '')
}

// The capturing thread ends this thread when it hears `done` or `failed`.
run().catch((err) => {
  port.postMessage({ type: 'failed', error: err instanceof Error ? err.message : String(err) })
})
