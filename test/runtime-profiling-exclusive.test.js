// A profile file is created exclusively: never through a symbolic link planted at its name (dangling or not), never
// over a file, 0600 whatever the umask. Names are unguessable, so a planted link can only be tested by naming the file
// here: this drives the module that writes every profile file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { lstat, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeExclusive } from '../src/runtime/profile-files.js'

/** @param {string} path */
const modeOf = async (path) => (await lstat(path)).mode & 0o777

test('a file is never written through a planted link nor over an existing file, and comes out 0600', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'hotpath-excl-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const victim = join(dir, 'victim')
  await writeFile(victim, 'precious')

  // A link to a file that exists, and one that dangles (where it points, a file would be created).
  await symlink(victim, join(dir, 'a.cpuprofile'))
  await assert.rejects(writeExclusive(join(dir, 'a.cpuprofile'), 'profile'), { code: 'EEXIST' })
  assert.equal(await readFile(victim, 'utf8'), 'precious')
  await symlink(join(dir, 'created'), join(dir, 'b.cpuprofile'))
  await assert.rejects(writeExclusive(join(dir, 'b.cpuprofile'), 'profile'), { code: 'EEXIST' })
  await assert.rejects(stat(join(dir, 'created')), { code: 'ENOENT' })

  // A file already there is left as it was.
  await assert.rejects(writeExclusive(victim, 'profile'), { code: 'EEXIST' })
  assert.equal(await readFile(victim, 'utf8'), 'precious')

  // Whatever the umask lets through, 0600; and nothing is left aside.
  const umask = process.umask(0)
  try {
    assert.equal(await writeExclusive(join(dir, 'c.cpuprofile'), 'profile'), join(dir, 'c.cpuprofile'))
  } finally {
    process.umask(umask)
  }
  assert.equal(await modeOf(join(dir, 'c.cpuprofile')), 0o600)
  assert.equal(await readFile(join(dir, 'c.cpuprofile'), 'utf8'), 'profile')
  assert.deepEqual((await readdir(dir)).sort(), ['a.cpuprofile', 'b.cpuprofile', 'c.cpuprofile', 'victim'])
})
