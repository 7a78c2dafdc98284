// The options of every hotpath/runtime API, checked when the API is called. An operator installs the runtime once and
// forgets it: a misspelt key or a wrong type that is silently ignored leaves a server unprotected for months, so each
// is one TypeError that names the API, the key and what it takes (with a "did you mean" for a near miss).

/**
 * What one option takes: the typeof names it accepts, and a further check that returns why a value is wrong.
 * @typedef {object} OptionRule
 * @property {Array<'number' | 'boolean' | 'string' | 'function' | 'object'>} types
 * @property {string} expect what it takes, worded for the message ("a positive number of ms")
 * @property {(value: any) => boolean} [valid] beyond the type; false gives the `expect` message
 * @property {Record<string, OptionRule>} [nested] when the value is an object, its own keys' rules (checked as
 *   `api key`: "registerMetrics() listeners: unknown option 'treshold'")
 */

/**
 * Throws a TypeError for an options value that is not an object, an unknown key, or a value the rule refuses.
 * Undefined values count as absent: `{ dir: undefined }` is the same as `{}`.
 * @param {string} api the call, as the user wrote it ('profiler()')
 * @param {unknown} opts
 * @param {Record<string, OptionRule>} rules
 */
export function checkOptions (api, opts, rules) {
  if (opts === undefined) return
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) {
    throw new TypeError(`${api}: options must be an object, got ${describe(opts)}`)
  }
  for (const [key, value] of Object.entries(opts)) {
    const rule = rules[key]
    if (!rule) {
      const near = nearest(key, Object.keys(rules))
      throw new TypeError(`${api}: unknown option '${key}'${near ? ` (did you mean '${near}'?)` : ''}`)
    }
    if (value === undefined) continue
    const typeOk = rule.types.some(t => t === 'object' ? value !== null && typeof value === 'object' : typeof value === t) // eslint-disable-line valid-typeof -- t is one of the typeof names
    if (!typeOk || (rule.valid && !rule.valid(value))) {
      throw new TypeError(`${api}: ${key} must be ${rule.expect}, got ${describe(value)}`)
    }
    if (rule.nested && typeof value === 'object') checkOptions(`${api} ${key}`, value, rule.nested)
  }
}

/** Rules that recur. */
export const rule = {
  /** @param {string} [unit] */
  positive: (unit = '') => ({ types: /** @type {OptionRule['types']} */ (['number']), expect: `a positive number${unit ? ` of ${unit}` : ''}`, valid: (/** @type {number} */ v) => v > 0 && Number.isFinite(v) }),
  /** @param {string} [unit] */
  nonNegative: (unit = '') => ({ types: /** @type {OptionRule['types']} */ (['number']), expect: `0 or a positive number${unit ? ` of ${unit}` : ''}`, valid: (/** @type {number} */ v) => v >= 0 && Number.isFinite(v) }),
  ratio: () => ({ types: /** @type {OptionRule['types']} */ (['number']), expect: 'a number from 0 to 1', valid: (/** @type {number} */ v) => v >= 0 && v <= 1 }),
  boolean: () => ({ types: /** @type {OptionRule['types']} */ (['boolean']), expect: 'true or false' }),
  string: () => ({ types: /** @type {OptionRule['types']} */ (['string']), expect: 'a string', valid: (/** @type {string} */ v) => v.length > 0 }),
  fn: () => ({ types: /** @type {OptionRule['types']} */ (['function']), expect: 'a function' })
}

/** @param {unknown} value */
function describe (value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return `${/^[aeiou]/.test(typeof value) ? 'an' : 'a'} ${typeof value}`
}

/**
 * The known key closest to a misspelt one, when it is close enough to be the likely intent: at most a third of its
 * letters differ, or one is the other's spelling variant (utilisation/utilization), compared case-insensitively.
 * @param {string} key
 * @param {string[]} known
 */
export function nearest (key, known) {
  const k = key.toLowerCase().replace(/s(?=ation)/g, 'z')
  let best = ''
  let bestDistance = Infinity
  for (const name of known) {
    const d = distance(k, name.toLowerCase().replace(/s(?=ation)/g, 'z'))
    if (d < bestDistance) { best = name; bestDistance = d }
  }
  return bestDistance <= Math.max(1, Math.floor(key.length / 3)) ? best : ''
}

/** Levenshtein distance, two rows. @param {string} a @param {string} b */
function distance (a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    prev = row
  }
  return prev[b.length]
}
