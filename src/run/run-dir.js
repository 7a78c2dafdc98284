// Where a run is recorded: created if needed, refused when it holds an earlier run — two runs in one directory would
// be read as one, their files mixed in one report.
import { mkdirSync, readdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { UsageError } from '../errors.js'

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
