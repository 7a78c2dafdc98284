// A heap snapshot of this thread on hotpath's command (`hotpath heap`): a full GC first, so that only what is still
// reachable is in it, then the snapshot's chunks written to the run directory as V8 hands them over. The inspector
// session delivers the chunks synchronously while takeHeapSnapshot runs, so each is written at once (writeSync): the
// target never holds more than one chunk of a snapshot that can be several GB.
import { closeSync, openSync, writeSync } from 'node:fs'
import { Session } from 'node:inspector'
import { join } from 'node:path'
import { post } from '../profile/capture.js'

/**
 * @param {{ type: string, name?: unknown }} command `{ type: 'heap-snapshot', name }`: the file name, in the run dir
 * @param {{ runDir: string, channel: { send: (message: object) => void } }} options
 * @param {string} who this process/thread's name
 */
export async function onHeapSnapshotCommand (command, options, who) {
  const name = typeof command.name === 'string' && /^[\w.-]+$/.test(command.name) ? command.name : `heap-${who}.heapsnapshot`
  const file = join(options.runDir, name)
  const started = Date.now()
  try {
    const bytes = await takeSnapshot(file)
    options.channel.send({ type: 'heap-snapshot-done', name, pid: process.pid, bytes, ms: Date.now() - started })
  } catch (err) {
    options.channel.send({ type: 'heap-snapshot-done', name, pid: process.pid, error: String(/** @type {Error} */ (err)?.message ?? err) })
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
  if (session === null) {
    session = new Session()
    session.connect()
    await post(session, 'HeapProfiler.enable')
  }
  const fd = openSync(file, 'w')
  let bytes = 0
  /** @param {any} message */
  const onChunk = (message) => { bytes += writeSync(fd, message.params.chunk) }
  session.on('HeapProfiler.addHeapSnapshotChunk', onChunk)
  try {
    await post(session, 'HeapProfiler.collectGarbage')
    await post(session, 'HeapProfiler.takeHeapSnapshot', { reportProgress: false })
  } finally {
    session.off('HeapProfiler.addHeapSnapshotChunk', onChunk)
    closeSync(fd)
  }
  return bytes
}

/**
 * Ends the snapshot session: an attached probe that detaches leaves no inspector session behind (attach-entry.js).
 */
export function closeSession () {
  try { session?.disconnect() } catch {}
  session = null
}
