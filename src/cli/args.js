import { parseArgs } from 'node:util'
import { UsageError } from '../errors.js'

/**
 * @typedef {object} OptionSpec
 * @property {'string' | 'boolean'} type
 * @property {string} [short]
 * @property {boolean} [multiple]
 * @property {string} [value] placeholder shown in help, e.g. 'N'
 * @property {string} description
 * @property {string} [default] shown in help
 * @property {string} [bare] a string flag that may also be given alone takes this value then (`--json` is `--json=-`);
 *   its own value is given as `--flag=<value>`
 * @property {boolean} [spaced] with `bare`: `--flag <word>` also gives the word as its value, for commands that take
 *   no positional argument (so the word cannot be one)
 */

/**
 * @typedef {object} CommandSpec
 * @property {string} name
 * @property {string} usage
 * @property {string} summary
 * @property {Record<string, OptionSpec>} options
 * @property {string} [details] free text after the option list
 */

/**
 * Parses argv for one command. Everything after a bare `--` is returned untouched as `command`.
 * @param {CommandSpec} spec
 * @param {string[]} argv
 */
export function parseCommand (spec, argv) {
  const split = argv.indexOf('--')
  const own = withBareValues(spec, split === -1 ? argv : argv.slice(0, split))
  const command = split === -1 ? [] : argv.slice(split + 1)
  /** @type {import('node:util').ParseArgsConfig['options']} */
  const options = { help: { type: 'boolean', short: 'h' } }
  for (const [name, o] of Object.entries(spec.options)) {
    options[name] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) }
  }
  try {
    const { values, positionals } = parseArgs({ args: own, options, allowPositionals: true, strict: true })
    return { values, positionals, command, help: values.help === true, flags: own }
  } catch (err) {
    throw new UsageError(`${cleanParseError(/** @type {Error} */ (err))} (see hotpath ${spec.name} --help)`)
  }
}

/**
 * Gives a value to each flag that may be given alone (OptionSpec.bare), so that parseArgs, which knows no optional
 * values, reads it as a string flag: `--json` becomes `--json=-`, and with `spaced`, `--json out.json` becomes
 * `--json=out.json`. A word after a flag that takes no value is a positional otherwise: only commands without
 * positionals take it as the value.
 * @param {CommandSpec} spec
 * @param {string[]} args
 */
function withBareValues (spec, args) {
  const out = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    const name = arg.startsWith('--') ? arg.slice(2) : ''
    const o = Object.hasOwn(spec.options, name) ? spec.options[name] : undefined
    if (o?.bare === undefined) {
      out.push(arg)
      continue
    }
    const next = args[i + 1]
    if (o.spaced && next !== undefined && (next === '-' || !next.startsWith('-'))) {
      out.push(`--${name}=${next}`)
      i++
    } else {
      out.push(`--${name}=${o.bare}`)
    }
  }
  return out
}

/** @param {Error} err */
function cleanParseError (err) {
  // parseArgs messages carry advice for script authors over several lines; keep the first sentence, which names the
  // flag, and say plainly what to do when a value starts with '-'.
  const first = err.message.split(/\.(\s|$)/)[0]
  const ambiguous = /^Option '(-\w|--[\w-]+)'.* argument is ambiguous/.exec(first)
  if (ambiguous) return `option '${ambiguous[1]}' needs a value; to give one starting with '-', write ${ambiguous[1]}=<value>`
  return first.charAt(0).toLowerCase() + first.slice(1)
}

/**
 * @param {CommandSpec} spec
 * @returns {string}
 */
export function formatHelp (spec) {
  const rows = Object.entries(spec.options).map(([name, o]) => {
    const value = o.type !== 'string' ? '' : o.bare === undefined ? ` <${o.value ?? 'value'}>` : o.spaced ? ` [<${o.value ?? 'value'}>]` : `[=<${o.value ?? 'value'}>]`
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${name}${value}`
    const def = o.default !== undefined ? ` (default: ${o.default})` : ''
    return [flag, o.description + def]
  })
  rows.push(['-h, --help', 'show this help'])
  const width = Math.max(...rows.map(r => r[0].length)) + 2
  const lines = [
    `Usage: ${spec.usage}`,
    '',
    spec.summary,
    '',
    'Options:',
    ...rows.map(([flag, text]) => `  ${flag.padEnd(width)}${text}`)
  ]
  if (spec.details) lines.push('', spec.details)
  return lines.join('\n') + '\n'
}

/**
 * Parses a positive (or, with `allowZero`, non-negative) number flag; `integer` rejects fractions.
 * @param {string} flag
 * @param {string | undefined} raw
 * @param {{ integer?: boolean, allowZero?: boolean }} [opts]
 * @returns {number | undefined}
 */
export function numberFlag (flag, raw, opts = {}) {
  if (raw === undefined) return undefined
  const n = Number(raw)
  const ok = raw.trim() !== '' && Number.isFinite(n) && (opts.allowZero ? n >= 0 : n > 0) &&
    (!opts.integer || Number.isInteger(n))
  if (!ok) {
    throw new UsageError(`--${flag} must be ${opts.allowZero ? 'a non-negative' : 'a positive'} ${opts.integer ? 'integer' : 'number'}, got '${raw}'`)
  }
  return n
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/

/**
 * Parses a duration in seconds; accepts `10`, `10s`, `500ms`, `2m`, `1h`.
 * @param {string} flag
 * @param {string | undefined} raw
 * @param {{ allowZero?: boolean }} [opts]
 * @returns {number | undefined} seconds
 */
export function durationFlag (flag, raw, opts = {}) {
  if (raw === undefined) return undefined
  const m = DURATION.exec(raw.trim())
  const scale = { ms: 0.001, s: 1, m: 60, h: 3600 }
  const seconds = m ? Number(m[1]) * scale[/** @type {'ms'|'s'|'m'|'h'} */ (m[2] ?? 's')] : NaN
  if (!Number.isFinite(seconds) || (opts.allowZero ? seconds < 0 : seconds <= 0)) {
    throw new UsageError(`--${flag} must be a duration like 10, 10s, 500ms or 2m, got '${raw}'`)
  }
  return seconds
}
