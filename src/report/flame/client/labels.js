// How the flame graph words what it shows: amounts (time or bytes), shares, files, kinds of code.

export const KIND_LABEL = { app: 'your code', dependency: 'dependencies', node: 'Node.js', v8: 'V8 (GC, native)' }

/**
 * @param {string} unit the data's unit: 'bytes', else microseconds
 * @param {number} v in data units
 */
export function fmt (unit, v) {
  if (unit === 'bytes') {
    const units = ['B', 'kB', 'MB', 'GB']
    let u = 0
    while (v >= 1000 && u < units.length - 1) { v /= 1000; u++ }
    return (u === 0 ? Math.round(v) : v.toPrecision(3)) + ' ' + units[u]
  }
  const ms = v / 1000
  if (ms >= 1000) return (ms / 1000).toPrecision(3) + ' s'
  if (ms >= 1) return ms.toPrecision(3) + ' ms'
  return Math.round(v) + ' µs'
}

/** @param {number} r */
export function pct (r) {
  const p = r * 100
  return (p >= 10 || p === 0 ? p.toFixed(0) : p.toFixed(1)) + '%'
}

/** @param {string} file */
export function shortFile (file) {
  if (file.startsWith('node:')) return file
  const parts = file.split(/[\\/]/)
  const nm = parts.lastIndexOf('node_modules')
  if (nm >= 0 && nm < parts.length - 1) {
    const scoped = parts[nm + 1].startsWith('@') ? 2 : 1
    return parts.slice(nm + 1, nm + 1 + scoped).join('/') + '/…/' + parts[parts.length - 1]
  }
  return parts.slice(-2).join('/')
}
