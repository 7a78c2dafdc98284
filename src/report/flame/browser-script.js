// A page's browser script from modules. The browser code of the pages (the flame graph, the report) is written as ES
// modules, one job per file, so tsc and eslint check it like the rest and each file says what it uses; a page is one
// self-contained file, though, with nothing fetched. So the modules are joined here, in a fixed order, into one
// function scope: their import lines dropped (every name they import is declared in the same scope), `export` taken
// off. No bundler, no build step: the text of each file is the text in the page.
import { readFileSync } from 'node:fs'

const IMPORT = /^import \{[^}]*\} from '\.\/([\w-]+\.js)'$/
const DECLARATION = /^(?:export )?(?:async )?(?:function\s*\*?\s*|const |let |class )([\w$]+)/

/**
 * One script: `(function () { 'use strict' …modules… ; <last> })()`.
 * Rules for the modules, checked here: imports are one line each, named, from a sibling module in `files`; exports
 * are `export function|const|let|class`; no two modules declare the same top-level name.
 * @param {URL} dir the folder of the modules (ends with a slash)
 * @param {string[]} files file names, in the order they are joined
 * @param {string} last the statement that hands the script's entry point to the page, e.g. `window.X = { init }`
 * @returns {string}
 */
export function browserScript (dir, files, last) {
  /** @type {Map<string, string>} top-level name → the file that declares it */
  const declared = new Map()
  const parts = files.map((file) => {
    const lines = readFileSync(new URL(file, dir), 'utf8').split('\n')
    // The type-checking reference is for the editor; in the page it would be a stray comment at best.
    if (lines[0] === '/// <reference lib="dom" />') lines.shift()
    const kept = []
    for (const line of lines) {
      const imported = IMPORT.exec(line)
      if (imported) {
        if (!files.includes(imported[1])) throw new Error(`${file} imports ${imported[1]}, which the script does not include`)
        continue
      }
      if (/^(import|export)\b/.test(line) && !DECLARATION.test(line)) throw new Error(`${file}: not a line the page script can take: ${line}`)
      const name = DECLARATION.exec(line)?.[1]
      if (name !== undefined) {
        const other = declared.get(name)
        if (other !== undefined) throw new Error(`${file} and ${other} both declare ${name}: the page script is one scope`)
        declared.set(name, file)
      }
      kept.push(line.replace(/^export /, ''))
    }
    return `// ---- ${file}\n${kept.join('\n').trim()}\n`
  })
  return `(function () {\n'use strict'\n${parts.join('\n')}\n;${last}\n})()\n`
}
