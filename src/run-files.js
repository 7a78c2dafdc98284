// The files of a doctor run directory, as the recorder writes them and the analysis reads them: run.json (the record,
// written last), and one event log per probed thread (`events-<pid>-<threadId>.ndjson`, written by the probes as the
// run goes). A directory with event logs and no run.json holds a run hotpath never finished recording (it was killed);
// a run.json with `failed` holds a run that failed before its load window (the target never listened, spoke no HTTP).

/** A probe's event log, named for its process and thread. */
export const EVENT_LOG = /^events-(\d+)-(\d+)\.ndjson$/

/**
 * The event logs among a directory's file names, each with its process and thread.
 * @param {string[]} names
 * @returns {{ name: string, pid: number, threadId: number }[]}
 */
export function eventLogs (names) {
  return names.flatMap((name) => {
    const m = EVENT_LOG.exec(name)
    return m === null ? [] : [{ name, pid: Number(m[1]), threadId: Number(m[2]) }]
  })
}

/**
 * @typedef {object} FailedRun what run.json says of a run that failed before its load window
 * @property {string} message the one line the command printed
 * @property {number} exitCode the code it exited with
 * @property {string[]} stderr the target's last lines
 */

/**
 * A run the recorder never finished: its event logs without run.json, as a killed hotpath leaves them. Says which
 * processes it recorded, and which of them still run (a run in progress in the same directory).
 * @param {string[]} names the directory's file names, run.json not among them
 * @returns {{ logs: number, pids: number[], running: number[] } | null} null when there is no event log either
 */
export function unfinishedRun (names) {
  const logs = eventLogs(names)
  const pids = [...new Set(logs.map(l => l.pid))].sort((a, b) => a - b)
  if (pids.length === 0) return null
  return { logs: logs.length, pids, running: pids.filter(alive) }
}

/**
 * What an unfinished run holds, in words: `the event log of pid 4242`, `3 event logs of pids 4242 and 4243`.
 * @param {{ logs: number, pids: number[] }} run
 */
export function eventLogsOf ({ logs, pids }) {
  const list = pids.length === 1 ? String(pids[0]) : `${pids.slice(0, -1).join(', ')} and ${pids.at(-1)}`
  return `${logs === 1 ? 'the event log' : `${logs} event logs`} of pid${pids.length === 1 ? '' : 's'} ${list}`
}

/** @param {number} pid */
function alive (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM'
  }
}
