// Where on-demand profiles are written, privately. A profile holds source paths and function names, and the process
// writing it may run as root on a shared host: a local user who creates the directory first, or plants a symbolic link
// where a file will go, must get neither the profiles nor a write through the link. So the directory is checked (not a
// link, owned by this user, closed to others), and each file is created exclusively under a name nobody can guess.
import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { link, lstat, mkdir, open, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// O_EXCL refuses any existing entry, a link included (dangling or not); O_NOFOLLOW says so twice where it exists.
const EXCLUSIVE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0)
const uid = typeof process.getuid === 'function' ? process.getuid() : null

/** The default directory: one per user, so that users of one host never share it. */
export function defaultProfileDir () {
  return join(tmpdir(), uid === null ? 'hotpath-profiles' : `hotpath-profiles-${uid}`)
}

/**
 * Creates the directory when missing (mode 0700) and checks what is there: a directory, not a symbolic link, owned by
 * this process's user, and — for the default one, which lives in a directory everyone writes to — with no permission
 * for group or others; a directory the user chose may be readable by others but not writable by them.
 * @param {string} dir an absolute path
 * @param {{ private: boolean }} opts private: the default directory's stricter rule
 * @returns {Promise<void>} rejects with an Error that says what is wrong
 */
export async function checkProfileDir (dir, opts) {
  try {
    // The default's parent is the shared tmpdir: created by us or not at all, never through a path someone else made.
    await mkdir(dir, { mode: 0o700, recursive: !opts.private })
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'EEXIST') throw new Error(`cannot create ${dir}: ${reason(err)}`)
  }
  const stat = await lstat(dir)
  if (stat.isSymbolicLink()) throw new Error(`${dir} is a symbolic link; refusing to write profiles through it`)
  if (!stat.isDirectory()) throw new Error(`${dir} is not a directory`)
  // Windows has no owners or modes in this sense: its tmpdir is already per user.
  if (uid === null) return
  if (stat.uid !== uid) throw new Error(`${dir} is owned by uid ${stat.uid}, not by this process's user (uid ${uid}); refusing to write profiles there`)
  const mode = stat.mode & 0o777
  if (opts.private && (mode & 0o077) !== 0) throw new Error(`${dir} is open to other users (mode ${octal(mode)}); it must be 0700 — remove it or pass a private dir`)
  if ((mode & 0o022) !== 0) throw new Error(`${dir} is writable by other users (mode ${octal(mode)}); refusing to write profiles there`)
}

/** A name part nobody can guess: 64 random bits. */
export function unguessable () {
  return randomBytes(8).toString('hex')
}

/**
 * Writes a new file, mode 0600, under a name that nothing may already hold: never through a link, never over a file.
 * It is written aside under a random name, then linked to its own (a link fails when the name is taken, where a rename
 * would replace), so whoever watches the directory never reads half a profile.
 * @param {string} file
 * @param {string | Uint8Array} content
 * @returns {Promise<string>} the file
 */
export async function writeExclusive (file, content) {
  const aside = join(file, '..', `.${unguessable()}.tmp`)
  const handle = await open(aside, EXCLUSIVE, 0o600)
  try {
    try {
      await handle.writeFile(content)
    } finally {
      await handle.close()
    }
    await link(aside, file)
  } finally {
    await unlink(aside).catch(() => {})
  }
  return file
}

/** @param {unknown} err */
function reason (err) {
  const e = /** @type {NodeJS.ErrnoException} */ (err)
  return e.code ?? e.message
}

/** @param {number} mode */
function octal (mode) {
  return `0${mode.toString(8).padStart(3, '0')}`
}
