// A heap snapshot of this thread on hotpath's command (`hotpath heap`, doctor's retainer phases), written to the run
// directory by V8 itself (v8.writeHeapSnapshot): it streams to the file as it serialises, so the target never holds a
// snapshot that can be several GB, and no chunk crosses the inspector protocol as a JSON string to be written again
// (a 53 MB snapshot: 1.4–1.6 s, against 1.9–2.8 s through HeapProfiler.takeHeapSnapshot). V8 collects all garbage
// before it snapshots, so only what is still reachable is in it.
import { statSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'
import { join } from 'node:path'
import { writeHeapSnapshot } from 'node:v8'
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
 * One inspector session for the process's life, though V8 writes the snapshots: while the heap profiler is enabled in
 * a session, V8 keeps the numbers it gave objects; closing the session disables it, V8 then forgets them, and the next
 * snapshot would number them afresh — no object could be followed from one snapshot to the next. The session also
 * runs the allocation sampling below.
 * @type {Session | null}
 */
let session = null

/**
 * @param {string} file
 * @returns {Promise<number>} bytes written
 */
async function takeSnapshot (file) {
  const s = await heapSession()
  // The console messages V8 keeps for DevTools while a session is connected (this one) are the inspector's, not the
  // app's: a backend logging each SQL statement had them confirm a leak, held by `DevTools console`.
  await post(s, 'Runtime.discardConsoleEntries').catch(() => {})
  writeHeapSnapshot(file)
  return statSync(file).size
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
