import { parseTarget } from '../../load/target.js'

/**
 * What a first line adds when the target served HTTP on more ports than the one loaded: the verdict is about that one.
 * An app that opens its metrics or admin port before its API has the metrics port loaded, and "healthy" or "nothing
 * grows" alone would pass for the API's.
 * @param {string} url what was loaded
 * @param {readonly number[] | null | undefined} others the other ports, in the order they opened
 * @param {{ hint?: boolean }} [opts] add how to load the first of them, for a report that says it nowhere else
 * @returns {string} '' when there were none
 */
export function otherPortsNote (url, others, opts = {}) {
  if (!others || others.length === 0) return ''
  let port = ''
  try {
    port = String(parseTarget(url).port)
  } catch {}
  return ` — port ${port || 'loaded'} only; it also served HTTP on ${others.join(', ')}${opts.hint ? ` (${loadHint(others)})` : ''}`
}

/**
 * The other ports, and how to load one: " the target also served HTTP on port 3000, which was not loaded (--port 3000
 * loads it)."
 * @param {readonly number[]} ports
 */
export function otherPortsSentence (ports) {
  const list = ports.length === 1 ? `port ${ports[0]}` : `ports ${ports.slice(0, -1).join(', ')} and ${ports.at(-1)}`
  return ` the target also served HTTP on ${list}, which ${ports.length === 1 ? 'was' : 'were'} not loaded (${loadHint(ports)}).`
}

/** @param {readonly number[]} ports */
const loadHint = (ports) => `--port ${ports[0]} loads ${ports.length === 1 ? 'it' : 'the first'}`
