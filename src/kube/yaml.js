// YAML for the manifests hotpath prints: block style for mappings and sequences, every string in double quotes. A
// double-quoted YAML scalar takes JSON's string escapes, so JSON.stringify writes each one exactly; no YAML library is
// needed at run time for output this regular (the tests read it back with one).

/**
 * @param {unknown} value a plain object of strings, numbers, booleans, null, arrays and objects
 * @returns {string}
 */
export function toYaml (value) {
  return (isCollection(value) ? block(value, '') : [scalar(value)]).join('\n') + '\n'
}

/**
 * @param {unknown} v
 * @returns {v is object}
 */
function isCollection (v) {
  return v !== null && typeof v === 'object' && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0)
}

/**
 * @param {object} v a non-empty array or object
 * @param {string} pad
 * @returns {string[]}
 */
function block (v, pad) {
  if (Array.isArray(v)) {
    return v.flatMap((item) => {
      if (!isCollection(item)) return [`${pad}- ${scalar(item)}`]
      const [first, ...rest] = block(item, `${pad}  `)
      return [`${pad}- ${first.slice(pad.length + 2)}`, ...rest]
    })
  }
  return Object.entries(v).filter(([, x]) => x !== undefined).flatMap(([k, x]) => isCollection(x)
    ? [`${pad}${key(k)}:`, ...block(x, `${pad}  `)]
    : [`${pad}${key(k)}: ${scalar(x)}`])
}

/** @param {string} k */
const key = (k) => /^[A-Za-z_][\w./-]*$/.test(k) && !/^(y|yes|n|no|true|false|on|off|null)$/i.test(k) ? k : JSON.stringify(k)

/** @param {unknown} v */
function scalar (v) {
  if (Array.isArray(v)) return '[]'
  if (v !== null && typeof v === 'object') return '{}'
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError(`toYaml: ${v} is not a number YAML can hold here`)
    return String(v)
  }
  if (typeof v === 'boolean' || v === null) return String(v)
  throw new TypeError(`toYaml: cannot write a ${typeof v}`)
}
