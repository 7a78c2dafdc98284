// The docs cannot drift from the code: every hotpath command line shown in the README and the docs parses with the
// command's real flags, as written (`npx hotpath …`, which resolves to this checkout); the files they run exist; every
// link points at a file (and a heading) in the repository; and no file cites a document the repository does not have.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { parseCommand } from '../src/cli/args.js'
import { BIN, ROOT, hotpath } from './helpers/cli.js'

/** The pages a user reads, relative to the repository. */
const PAGES = ['README.md', 'CONTRIBUTING.md', 'bench/README.md', ...readdirSync(join(ROOT, 'docs')).filter(f => f.endsWith('.md')).map(f => `docs/${f}`)]

/**
 * The lines of a page's fenced code blocks, with their line numbers.
 * @param {string} text
 */
function codeLines (text) {
  const out = []
  let fenced = false
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trimStart().startsWith('```')) fenced = !fenced
    else if (fenced) out.push({ line: i + 1, text: line })
  }
  return out
}

/**
 * Splits a shell line into words the way sh would for these examples: quotes kept together, a comment dropped, and
 * the line cut into commands at |, &&, ; and a trailing &, and each command cut at a redirection.
 * @param {string} line
 * @returns {string[][]}
 */
function shellCommands (line) {
  /** @type {string[][]} */
  const commands = [[]]
  let word = ''
  let quote = ''
  let inWord = false
  const end = () => {
    if (inWord) commands[commands.length - 1].push(word)
    word = ''
    inWord = false
  }
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (quote !== '') {
      if (c === quote) quote = ''
      else word += c
      continue
    }
    if (c === "'" || c === '"') {
      quote = c
      inWord = true
    } else if (c === '#' && !inWord) {
      break
    } else if (/\s/.test(c)) {
      end()
    } else if (c === '|' || c === ';' || c === '&') {
      end()
      if (line[i + 1] === c) i++
      commands.push([])
    } else {
      word += c
      inWord = true
    }
  }
  end()
  return commands.map(words => {
    const redirect = words.findIndex(w => /^\d?>/.test(w) || w === '<')
    return redirect === -1 ? words : words.slice(0, redirect)
  }).filter(words => words.length > 0)
}

/** Every hotpath command line shown in a code block of a page, with where it is. */
function shownCommands () {
  const out = []
  for (const page of PAGES) {
    for (const { line, text } of codeLines(readFileSync(join(ROOT, page), 'utf8'))) {
      for (let words of shellCommands(text.replace(/^\s*\$\s+/, ''))) {
        while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) words = words.slice(1)
        const npx = words[0] === 'npx'
        if (npx) words = words.slice(1)
        // Output lines name their command with a colon: `hotpath doctor: event-loop …`.
        if (words[0] !== 'hotpath' || /:$/.test(words[1] ?? '')) continue
        out.push({ where: `${page}:${line}`, npx, args: words.slice(1), text: text.trim() })
      }
    }
  }
  return out
}

/** The commands `hotpath --help` lists. */
function knownCommands () {
  const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' })
  const list = help.stdout.split('Commands:\n')[1]?.split('\n\n')[0] ?? ''
  return list.split('\n').map(l => l.trim().split(/\s+/)[0]).filter(Boolean)
}

test('every hotpath command line in the README and docs is written with npx and parses with its real flags', async () => {
  const commands = shownCommands()
  const known = knownCommands()
  assert.deepEqual([...known].sort(), ['compare', 'doctor', 'flame', 'heap', 'kube', 'load', 'merge'])
  assert.ok(commands.length > 30, `only ${commands.length} command lines found: the extraction no longer matches the docs`)
  const seen = new Set(commands.map(c => c.args[0]))
  for (const name of known) assert.ok(seen.has(name), `no page shows a 'hotpath ${name}' command line`)
  /** @type {string[]} */
  const wrong = []
  for (const { where, npx, args, text } of commands) {
    if (!npx) wrong.push(`${where}: write 'npx hotpath', which runs after npm install, not 'hotpath': ${text}`)
    const [name, ...rest] = args
    if (name === '--help' || name === '--version') continue
    if (!known.includes(name)) {
      wrong.push(`${where}: no command '${name}': ${text}`)
      continue
    }
    // A synopsis's optional parts ([load options], [--json[=<file>]]) are not flags to check.
    const words = rest.filter(w => !/^\[.*\]$/.test(w) && !/^\[|\]$/.test(w))
    const { spec } = await import(`../src/cli/${name}.js`)
    try {
      const { positionals, help } = parseCommand(spec, words)
      if (help) continue
      const expected = { doctor: [0, 0], heap: [0, 0], flame: [0, 0], load: [0, 1], compare: [2, 2], merge: [1, Infinity], kube: [0, 1] }[/** @type {'doctor'} */ (name)]
      const n = positionals.filter(p => !/^<.*>$/.test(p) || name !== 'load').length
      if (n < expected[0] || n > expected[1]) wrong.push(`${where}: ${name} takes ${expected[0]}–${expected[1]} arguments, this line gives ${n}: ${text}`)
      for (const file of words.filter(w => /^(examples|test|bench)\/.+\.[cm]?[jt]s$/.test(w))) {
        if (!existsSync(join(ROOT, file))) wrong.push(`${where}: ${file} does not exist`)
      }
    } catch (err) {
      wrong.push(`${where}: ${/** @type {Error} */ (err).message}: ${text}`)
    }
  }
  assert.deepEqual(wrong, [])

  // And each command's help runs, through the CLI as a user starts it.
  for (const name of known) {
    const r = await hotpath([name, '--help'])
    assert.equal(r.code, 0, `hotpath ${name} --help: ${r.stderr}`)
    assert.match(r.stdout, /^Usage: hotpath /)
  }
})

test('npx hotpath, as the README writes it, runs this checkout', () => {
  // npx links the checkout into its cache the first time, reading the whole dependency tree: 40 s on a busy machine.
  const r = spawnSync('npx', ['--no-install', 'hotpath', '--version'], { cwd: ROOT, encoding: 'utf8', timeout: 240000 })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version)
})

/**
 * A heading's anchor as GitHub makes it.
 * @param {string} heading
 */
function slug (heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
}

/** @param {string} text */
function anchorsOf (text) {
  /** @type {Map<string, number>} */
  const count = new Map()
  const out = new Set()
  let fenced = false
  for (const line of text.split('\n')) {
    if (line.trimStart().startsWith('```')) fenced = !fenced
    const m = !fenced && /^#{1,6}\s+(.*)$/.exec(line)
    if (!m) continue
    const base = slug(m[1])
    const n = count.get(base) ?? 0
    count.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

test('every link in the README and docs points at a file, and a heading, in the repository', () => {
  /** @type {string[]} */
  const wrong = []
  let links = 0
  for (const page of PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8')
    const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]
      if (/^(https?:|mailto:)/.test(target)) continue
      links++
      const [path, anchor] = target.split('#')
      const file = path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), path)
      if (!existsSync(file)) {
        wrong.push(`${page}: ${target}: no such file`)
        continue
      }
      if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) {
        wrong.push(`${page}: ${target}: no heading '#${anchor}' in ${relative(ROOT, file)}`)
      }
    }
  }
  assert.ok(links > 50, `only ${links} links found`)
  assert.deepEqual(wrong, [])
})

test('no file cites a document the repository does not have', () => {
  const files = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).stdout
    .split('\n').filter(f => /\.(js|cjs|mjs|md|json|ya?ml)$/.test(f) && existsSync(join(ROOT, f)) && !f.startsWith('schema/examples/'))
  assert.ok(files.length > 200, `only ${files.length} files listed`)
  /** @type {string[]} */
  const wrong = []
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    if (/DESIGN\.md/.test(text) && file !== 'test/docs.test.js') wrong.push(`${file} cites DESIGN.md, which is not in the repository`)
    for (const m of text.matchAll(/\b((?:docs|schema)\/[\w.-]+\.(?:md|json|png))\b/g)) {
      if (!existsSync(join(ROOT, m[1]))) wrong.push(`${file} cites ${m[1]}, which does not exist`)
    }
  }
  assert.deepEqual(wrong, [])
})

test('the README stays a front page', () => {
  const words = readFileSync(join(ROOT, 'README.md'), 'utf8').split(/\s+/).filter(Boolean).length
  assert.ok(words <= 2500, `README.md has ${words} words: put reference material in a page under docs/`)
})
