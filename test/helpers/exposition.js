/**
 * A small reader of the Prometheus text format, for tests: every sample line as { name, labels, value }, and the
 * TYPE of each family. Strict enough to fail on a malformed line.
 * @param {string} text
 */
export function parseExposition (text) {
  /** @type {{ name: string, labels: Record<string, string>, value: number }[]} */
  const samples = []
  /** @type {Record<string, string>} */
  const types = {}
  for (const line of text.split('\n')) {
    if (line === '') continue
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ')
      types[name] = type
      continue
    }
    if (line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null) throw new Error(`malformed exposition line: ${line}`)
    /** @type {Record<string, string>} */
    const labels = {}
    if (m[2]) {
      for (const pair of m[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2]
    }
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3])
    // prom-client writes NaN as 'Nan'; Prometheus reads it case-insensitively, like Go's ParseFloat
    if (Number.isNaN(value) && m[3].toLowerCase() !== 'nan') throw new Error(`bad value in: ${line}`)
    samples.push({ name: m[1], labels, value })
  }
  return {
    samples,
    types,
    /**
     * The value of the one sample with this name whose labels include `labels`.
     * @param {string} name
     * @param {Record<string, string>} [labels]
     */
    get (name, labels = {}) {
      const found = samples.filter(s => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`)
      return found[0].value
    }
  }
}
