// Where a run is recorded: created if needed, refused when it holds an earlier run — two runs in one directory would
// be read as one, their files mixed in one report. A run that never measured anything (it failed before its load
// window, or hotpath was killed before it wrote run.json) holds nothing to keep: its directory can be recorded into
// again, its files replaced.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { UsageError } from '../errors.js'
import { eventLogsOf, unfinishedRun } from '../run-files.js'

/**
 * @param {string} dir
 * @param {(file: string) => boolean} isRunFile whether a file name is one a run of this kind writes
 * @returns {string} its absolute path
 */
export function freshRunDir (dir, isRunFile) {
  const runDir = resolve(dir)
  mkdirSync(runDir, { recursive: true })
  if (readdirSync(runDir).some(isRunFile)) {
    throw new UsageError(`'${dir}' holds an earlier run: record this one elsewhere (--save <new dir>), or remove it first`)
  }
  return runDir
}

/**
 * Removes the files of a doctor run that measured nothing from `dir` — one that failed before its load window
 * (run.json says `failed`), or that hotpath never finished (event logs, no run.json, none of their processes
 * running) — so that a new run can be recorded there. A run in progress, or one recorded whole, is left as it is.
 * @param {string} dir
 * @param {(file: string) => boolean} isRunFile whether a file name is one a doctor run writes
 * @returns {string | null} what was replaced, in words, or null when nothing was
 */
export function clearRunThatMeasuredNothing (dir, isRunFile) {
  const runDir = resolve(dir)
  if (!existsSync(runDir)) return null
  const names = readdirSync(runDir)
  let what
  if (names.includes('run.json')) {
    let run
    try {
      run = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'))
    } catch {
      return null
    }
    if (run?.kind !== 'hotpath-run' || typeof run.failed?.message !== 'string') return null
    what = `a run that failed before its load (${run.failed.message})`
  } else {
    const unfinished = unfinishedRun(names)
    if (unfinished === null) return null
    if (unfinished.running.length > 0) {
      throw new UsageError(`'${dir}' holds a run in progress (pid ${unfinished.running.join(', ')} still runs): record this one elsewhere (--save <new dir>)`)
    }
    what = `an unfinished run (${eventLogsOf(unfinished)}, no run.json)`
  }
  for (const name of names) if (isRunFile(name)) rmSync(join(runDir, name), { force: true })
  return what
}
