// Profiles are written privately. The threat: a local user of a shared host creates the profiles directory first, or
// plants symbolic links in it, to read the profiles (source paths, function names) or to make a process running as
// root write through a link over any file. The default directory is per user, 0700, and checked; files are 0600,
// created exclusively under names nobody can guess, never through a link and never over a file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { chown, chmod, lstat, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { profiler } from 'hotpath/runtime'

const uid = /** @type {() => number} */ (process.getuid)()
const NAME = /^\d+-\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{16}\.(cpuprofile|cpu\.pb\.gz)$/

/**
 * Runs two captures in a fresh process whose tmpdir is `tmp` and whose umask is 0 (so the modes seen are the ones
 * asked for); the process's warnings are counted.
 * @param {string} tmp
 */
async function captureIn (tmp) {
  const script = `
    import { profiler } from 'hotpath/runtime'
    process.umask(0)
    const p = profiler({ duration: 0.2, heap: false, signal: false })
    const hold = setInterval(() => {}, 1000)
    const first = await p.capture()
    const second = await p.capture()
    clearInterval(hold)
    console.log(JSON.stringify({ dir: p.dir, first, second }))
  `
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TMPDIR: tmp }
  })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (c) => { out += c })
  child.stderr.setEncoding('utf8').on('data', (c) => { err += c })
  const [code] = await once(child, 'exit')
  assert.equal(code, 0, err)
  return { ...JSON.parse(out), warnings: err.split('\n').filter(l => l.includes('HotpathWarning')) }
}

/** @param {string} path */
const modeOf = async (path) => (await lstat(path)).mode & 0o777

test('the default directory is per user and 0700; files are 0600 under unguessable names, whatever the umask', async (t) => {
  const tmp = await mkdtemp(join(tmpdir(), 'hotpath-private-'))
  t.after(() => rm(tmp, { recursive: true, force: true }))
  const { dir, first, second, warnings } = await captureIn(tmp)
  assert.equal(dir, join(tmp, `hotpath-profiles-${uid}`))
  assert.equal(first.ok, true, JSON.stringify(first))
  assert.equal(second.ok, true, JSON.stringify(second))
  assert.deepEqual(warnings, [])
  assert.equal(await modeOf(dir), 0o700)
  const files = (await readdir(dir)).sort()
  assert.equal(files.length, 4, files.join())
  for (const f of files) {
    assert.match(f, NAME)
    assert.equal(await modeOf(join(dir, f)), 0o600, f)
  }
  // Two captures, two unguessable stems (no temporary file is left behind either).
  const stems = new Set(files.map(f => f.replace(/\.(cpuprofile|cpu\.pb\.gz)$/, '')))
  assert.equal(stems.size, 2)
})

test('a default directory planted by someone else is refused with one warning: a symbolic link, open to others, or not ours', async (t) => {
  const tmp = await mkdtemp(join(tmpdir(), 'hotpath-planted-'))
  t.after(() => rm(tmp, { recursive: true, force: true }))
  const dir = join(tmp, `hotpath-profiles-${uid}`)

  // A link to a directory the planter reads (the old default name planted too).
  const trap = join(tmp, 'trap')
  await mkdir(trap, { mode: 0o777 })
  await symlink(trap, dir)
  await symlink(trap, join(tmp, 'hotpath-profiles'))
  const linked = await captureIn(tmp)
  for (const r of [linked.first, linked.second]) {
    assert.equal(r.ok, false)
    assert.equal(r.reason, 'failed')
    assert.match(r.error, /is a symbolic link; refusing to write profiles through it/)
  }
  assert.equal(linked.warnings.length, 2, 'one warning per refused capture')
  assert.match(linked.warnings[0], /hotpath profiling: .* is a symbolic link/)
  assert.deepEqual(await readdir(trap), [], 'nothing was written through the link')

  // A directory others can read.
  await rm(dir)
  await rm(join(tmp, 'hotpath-profiles'))
  await mkdir(dir)
  await chmod(dir, 0o755)
  const open = await captureIn(tmp)
  assert.equal(open.first.ok, false)
  assert.match(open.first.error, /is open to other users \(mode 0755\); it must be 0700/)
  assert.deepEqual(await readdir(dir), [])

  // A directory of another user (only root can make one to test with).
  if (uid === 0) {
    await chmod(dir, 0o700)
    await chown(dir, 65534, 65534)
    const foreign = await captureIn(tmp)
    assert.equal(foreign.first.ok, false)
    assert.match(foreign.first.error, /is owned by uid 65534, not by this process's user \(uid 0\)/)
    assert.deepEqual(await readdir(dir), [])
  }
})

test('a directory given as dir is checked too: not a link, not writable by others', async (t) => {
  const tmp = await mkdtemp(join(tmpdir(), 'hotpath-given-'))
  t.after(() => rm(tmp, { recursive: true, force: true }))
  // Captures here run in this process, whose only pending work would be the profiler's unref'd timer: hold it open.
  const hold = setInterval(() => {}, 1000)
  t.after(() => clearInterval(hold))
  /** @type {Error[]} */
  const errors = []
  /** @param {string} dir */
  const captureTo = (dir) => profiler({ dir, duration: 0.1, heap: false, signal: false, onError: (e) => errors.push(e) }).capture()

  const real = join(tmp, 'real')
  await mkdir(real)
  await symlink(real, join(tmp, 'link'))
  const linked = await captureTo(join(tmp, 'link'))
  assert.equal(linked.ok === false && linked.error, `${join(tmp, 'link')} is a symbolic link; refusing to write profiles through it`)
  assert.deepEqual(await readdir(real), [])

  const shared = join(tmp, 'shared')
  await mkdir(shared)
  await chmod(shared, 0o777)
  const open = await captureTo(shared)
  assert.equal(open.ok === false && open.error, `${shared} is writable by other users (mode 0777); refusing to write profiles there`)
  assert.deepEqual(await readdir(shared), [])
  assert.equal(errors.length, 2)

  // One the user made readable is theirs to choose; created when missing, it is 0700.
  await chmod(real, 0o755)
  const ok = await captureTo(real)
  assert.equal(ok.ok, true, JSON.stringify(ok))
  assert.equal((await readdir(real)).length, 2)
  const made = join(tmp, 'made', 'here')
  assert.equal((await captureTo(made)).ok, true)
  assert.equal(await modeOf(made), 0o700)
})
