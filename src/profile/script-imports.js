// The names a script binds by importing them: what a bare name called in the code refers to when it is not declared
// in the same file.

/**
 * Local names bound by imports: `import a, { b, c as d } from './x.js'` and `const { b, c: d } = require('./x')`.
 * @param {string} text
 * @param {string} masked
 */
export function readImports (text, masked) {
  /** @type {Map<string, { specifier: string, imported: string }>} */
  const map = new Map()
  const specifierAt = (/** @type {number} */ quote) => {
    const q = text[quote]
    const end = text.indexOf(q, quote + 1)
    return end === -1 ? null : text.slice(quote + 1, end)
  }
  const esm = /(?<![\w$.])import\s+([\w$\s,{}*]+?)\s*from\s*(['"])/g
  let m
  while ((m = esm.exec(masked)) !== null) {
    const specifier = specifierAt(m.index + m[0].length - 1)
    if (specifier === null) continue
    const clause = m[1]
    const braces = /\{([^}]*)\}/.exec(clause)
    const head = clause.replace(/\{[^}]*\}/, '').split(',').map(s => s.trim()).filter(Boolean)
    for (const h of head) if (/^[\w$]+$/.test(h)) map.set(h, { specifier, imported: 'default' })
    if (braces) {
      for (const part of braces[1].split(',')) {
        const named = /^\s*([\w$]+)(?:\s+as\s+([\w$]+))?\s*$/.exec(part)
        if (named) map.set(named[2] ?? named[1], { specifier, imported: named[1] })
      }
    }
  }
  const cjs = /(?<![\w$.])(?:const|let|var)\s*\{([^}]*)\}\s*=\s*require\s*\(\s*(['"])/g
  while ((m = cjs.exec(masked)) !== null) {
    const specifier = specifierAt(m.index + m[0].length - 1)
    if (specifier === null) continue
    for (const part of m[1].split(',')) {
      const named = /^\s*([\w$]+)(?:\s*:\s*([\w$]+))?\s*$/.exec(part)
      if (named) map.set(named[2] ?? named[1], { specifier, imported: named[1] })
    }
  }
  return map
}
