// The machine's cores, shared between the test files test/run.js runs at once. Most runs of hotpath that start a
// server and load it only need the machine not to be overloaded, and share it (`shared`); a run whose verdict or
// timing a test checks — a healthy server must read healthy — needs it to itself (`alone`): it waits until the
// other file's runs are done and holds theirs back until it is. The state lives in the folder of this node --test
// invocation (its runner's pid and start time); a file run on its own takes no lock.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'

let counter = 0

// Each file's life, for the same log (only those that run hotpath load this helper: the others take a moment).
if (process.env.NODE_TEST_CONTEXT) process.on('exit', () => { const dir = sessionDir(); if (dir !== null) logTime(dir, 'file', 0, process.uptime() * 1000) })

/**
 * The folder this node --test invocation keeps what its files share, or null when the file was not started by it.
 * @returns {string | null}
 */
export function sessionDir () {
  if (!process.env.NODE_TEST_CONTEXT) return null
  const dir = sessionDirOf(process.ppid)
  mkdirSync(join(dir, 'tokens'), { recursive: true })
  return dir
}

/**
 * The folder of the node --test invocation whose runner is `pid` (test/run.js reads its time log there).
 * @param {number} pid
 */
export function sessionDirOf (pid) {
  // The runner's start time (clock ticks since boot, /proc/<pid>/stat field 22) tells its pid from a later one's.
  const stat = readIfThere(`/proc/${pid}/stat`)
  const started = stat ? stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] : '0'
  return join(tmpdir(), `hotpath-test-runs-${pid}-${started}`)
}

/**
 * Notes in the session's time log how long a run waited for the machine and held it, and when it ended, for
 * test/run.js to say where the suite's time goes.
 * @param {string} dir
 * @param {'alone' | 'shared' | 'file'} kind
 * @param {number} waited ms
 * @param {number} held ms
 * @param {string} [what] the run, as a person would name it
 */
function logTime (dir, kind, waited, held, what = '') {
  try {
    appendFileSync(join(dir, 'times.ndjson'), JSON.stringify({ file: relative(process.cwd(), process.argv[1] ?? ''), kind, what, waited: Math.round(waited), held: Math.round(held), end: Date.now() }) + '\n')
  } catch {}
}

/**
 * Runs `fn` with the machine shared with the other file's runs, but not with a run that needs it alone.
 * @template T
 * @param {() => Promise<T>} fn
 * @param {string} [what] for the time log
 * @returns {Promise<T>}
 */
export async function shared (fn, what) {
  const dir = sessionDir()
  if (dir === null) return fn()
  const token = join(dir, 'tokens', `${process.pid}-${++counter}`)
  const asked = Date.now()
  for (;;) {
    if (mayShare(dir)) {
      writeFileSync(token, '')
      // Looked at again once the token is there: a run that took the machine in between has seen it, or will.
      if (mayShare(dir)) break
      rmSync(token, { force: true })
    }
    await sleep(100)
  }
  const began = Date.now()
  try {
    return await fn()
  } finally {
    rmSync(token, { force: true })
    logTime(dir, 'shared', began - asked, Date.now() - began, what)
  }
}

/**
 * Runs `fn` with the machine to itself: no other file's run of hotpath at the same time.
 * @template T
 * @param {() => Promise<T>} fn
 * @param {string} [what] for the time log
 * @returns {Promise<T>}
 */
export async function alone (fn, what) {
  const dir = sessionDir()
  if (dir === null) return fn()
  const lock = join(dir, 'alone')
  if (holder(lock) === process.pid) return fn()
  const asked = Date.now()
  for (;;) {
    try {
      mkdirSync(lock)
      writeFileSync(join(lock, 'pid'), String(process.pid))
      break
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'EEXIST') throw err
    }
    const pid = holder(lock)
    if (pid > 0 && !alive(pid)) rmSync(lock, { recursive: true, force: true })
    await sleep(100)
  }
  let began = 0
  try {
    // The other file's runs under way finish first; no new one starts.
    while (readdirSync(join(dir, 'tokens')).some(t => Number(t.split('-')[0]) !== process.pid && alive(Number(t.split('-')[0])))) await sleep(100)
    began = Date.now()
    return await fn()
  } finally {
    rmSync(lock, { recursive: true, force: true })
    if (began > 0) logTime(dir, 'alone', began - asked, Date.now() - began, what)
  }
}

/**
 * Whether a shared run may start: no run has the machine alone, or this process has.
 * @param {string} dir
 */
function mayShare (dir) {
  const lock = join(dir, 'alone')
  if (!existsSync(lock)) return true
  const pid = holder(lock)
  if (pid === process.pid) return true
  if (pid > 0 && !alive(pid)) {
    rmSync(lock, { recursive: true, force: true })
    return true
  }
  return false
}

/** @param {string} lock */
function holder (lock) {
  return Number(readIfThere(join(lock, 'pid'))) || 0
}

/** @param {string} file */
export function readIfThere (file) {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

/** @param {number} pid */
export function alive (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** @param {number} ms */
const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))
