// A heap snapshot of this thread on hotpath's command (`hotpath heap`): a full GC first, so that only what is still
// reachable is in it, then the snapshot's chunks written to the run directory as V8 hands them over. The inspector
// session delivers the chunks synchronously while takeHeapSnapshot runs, so each is written at once (writeSync): the
// target never holds more than one chunk of a snapshot that can be several GB.
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs'
import { Session } from 'node:inspector'
import { join } from 'node:path'
import { post } from '../profile/capture.js'
import { COMMAND, MESSAGE } from '../probe-protocol.js'

/**
 * @param {{ type: string, name?: unknown }} command `{ type: 'heap-snapshot', name }`: the file name, in the run dir
 * @param {{ runDir: string, channel: { send: (message: import('../probe-protocol.js').ProbeMessage) => void } }} options
 * @param {string} who this process/thread's name
 */
export async function onHeapSnapshotCommand (command, options, who) {
  const name = typeof command.name === 'string' && /^[\w.-]+$/.test(command.name) ? command.name : `heap-${who}.heapsnapshot`
  const file = join(options.runDir, name)
  const started = Date.now()
  try {
    const bytes = await takeSnapshot(file)
    options.channel.send({ type: MESSAGE.HEAP_SNAPSHOT_DONE, name, pid: process.pid, bytes, ms: Date.now() - started })
  } catch (err) {
    options.channel.send({ type: MESSAGE.HEAP_SNAPSHOT_DONE, name, pid: process.pid, error: String(/** @type {Error} */ (err)?.message ?? err) })
  }
}

/**
 * One inspector session for the process's life: closing it disables the heap profiler, and V8 then forgets the
 * numbers it gave objects — the next snapshot would number them afresh, and no object could be followed from one
 * snapshot to the next.
 * @type {Session | null}
 */
let session = null

/**
 * @param {string} file
 * @returns {Promise<number>} bytes written
 */
async function takeSnapshot (file) {
  const s = await heapSession()
  const fd = openSync(file, 'w')
  let bytes = 0
  /** @param {any} message */
  const onChunk = (message) => { bytes += writeSync(fd, message.params.chunk) }
  s.on('HeapProfiler.addHeapSnapshotChunk', onChunk)
  try {
    // The console messages V8 keeps for DevTools while a session is connected (this one) are the inspector's, not the
    // app's: a backend logging each SQL statement had them confirm a leak, held by `DevTools console`.
    await post(s, 'Runtime.discardConsoleEntries').catch(() => {})
    await post(s, 'HeapProfiler.collectGarbage')
    await post(s, 'HeapProfiler.takeHeapSnapshot', { reportProgress: false })
  } finally {
    s.off('HeapProfiler.addHeapSnapshotChunk', onChunk)
    closeSync(fd)
  }
  return bytes
}

/** @returns {Promise<Session>} the session, connected and its heap profiler enabled */
async function heapSession () {
  if (session === null) {
    session = new Session()
    session.connect()
    await post(session, 'HeapProfiler.enable')
  }
  return session
}

/**
 * The allocation flame graph of `hotpath heap`: V8's sampling heap profiler from the growth phase to the last snapshot,
 * keeping only samples of objects still alive when it stops — where what the load left behind was allocated. It runs in
 * the snapshot session: a second session's HeapProfiler.disable, when it closed, would clear the object numbers that
 * follow objects from one snapshot to the next.
 * @param {{ type: string, name?: unknown, interval?: unknown, includeCollected?: unknown, collect?: unknown }} command
 *   `heap-sampling-start` { interval, includeCollected } or `heap-sampling-stop` { name, collect }: the file name, in
 *   the run dir; `collect`: a full collection first, so that only what survives it is in the samples
 * @param {{ runDir: string, channel: { send: (message: import('../probe-protocol.js').ProbeMessage) => void } }} options
 */
export async function onHeapSamplingCommand (command, options) {
  try {
    const s = await heapSession()
    if (command.type === COMMAND.HEAP_SAMPLING_START) {
      const interval = Number(command.interval)
      /** @type {Record<string, unknown>} */
      const params = Number.isInteger(interval) && interval > 0 ? { samplingInterval: interval } : {}
      // Every allocation, collected or not: who makes the garbage (doctor's allocation phase).
      if (command.includeCollected === true) Object.assign(params, { includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
      await post(s, 'HeapProfiler.startSampling', params)
      options.channel.send({ type: MESSAGE.HEAP_SAMPLING_STARTED, pid: process.pid })
      return
    }
    const name = typeof command.name === 'string' && /^[\w.-]+$/.test(command.name) ? command.name : 'allocations.heapprofile'
    // What a load just left (its last requests' objects, garbage no collection has reached) is not what it kept.
    if (command.collect === true) await post(s, 'HeapProfiler.collectGarbage')
    const { profile } = /** @type {{ profile: object }} */ (await post(s, 'HeapProfiler.stopSampling'))
    writeFileSync(join(options.runDir, name), JSON.stringify(profile))
    options.channel.send({ type: MESSAGE.HEAP_SAMPLING_DONE, name, pid: process.pid })
  } catch (err) {
    options.channel.send({ type: MESSAGE.HEAP_SAMPLING_DONE, pid: process.pid, error: String(/** @type {Error} */ (err)?.message ?? err) })
  }
}

/**
 * Ends the snapshot session: an attached probe that detaches leaves no inspector session behind (attach-entry.js).
 */
export function closeSession () {
  try { session?.disconnect() } catch {}
  session = null
}
