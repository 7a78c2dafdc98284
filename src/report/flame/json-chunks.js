// JSON written in pieces: a flame graph of a few million nodes is more JSON than V8's longest string (~512 MB), so its
// page is written to a file stream piece by piece rather than built whole.

// Elements of a long array stringified together, per piece.
const SLICE = 65536

/**
 * The JSON of `value`, as JSON.stringify would write it (for data without toJSON, functions or symbols), in pieces:
 * objects key by key, long arrays a slice at a time. Concatenated, the pieces are the same text.
 * @param {unknown} value
 * @returns {Generator<string>}
 */
export function * jsonChunks (value) {
  if (Array.isArray(value)) {
    if (value.length <= SLICE) {
      yield JSON.stringify(value)
      return
    }
    yield '['
    for (let i = 0; i < value.length; i += SLICE) {
      const slice = value.slice(i, i + SLICE)
      if (i > 0) yield ','
      if (slice.every(isFlat)) {
        yield JSON.stringify(slice).slice(1, -1)
        continue
      }
      for (let k = 0; k < slice.length; k++) {
        if (k > 0) yield ','
        yield * jsonChunks(slice[k] === undefined ? null : slice[k])
      }
    }
    yield ']'
    return
  }
  if (typeof value === 'object' && value !== null) {
    yield '{'
    let first = true
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined || typeof v === 'function') continue
      yield `${first ? '' : ','}${JSON.stringify(key)}:`
      first = false
      yield * jsonChunks(v)
    }
    yield '}'
    return
  }
  yield JSON.stringify(value) ?? 'null'
}

/**
 * A value whose JSON is short: a number, a string, or a small array of them (a frame's hot lines).
 * @param {unknown} v
 */
function isFlat (v) {
  return typeof v !== 'object' || v === null || (Array.isArray(v) && v.length <= 64 && v.every(x => typeof x !== 'object' || x === null))
}
