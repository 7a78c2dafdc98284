// How the charts word their numbers: axis ticks and legend values per unit, and round tops for the y scale.

/** @param {number} v */
export function trim (v) {
  return String(Math.round(v * 100) / 100)
}

/** @param {number} v */
export function niceCeil (v) {
  const p = Math.pow(10, Math.floor(Math.log10(v)))
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p
  return 10 * p
}

/**
 * @param {string} unit
 * @returns {(v: number, axis: boolean) => string}
 */
export function formatter (unit) {
  return function (v, axis) {
    if (v === null || v === undefined) return ''
    const a = Math.abs(v)
    switch (unit) {
      case 'ms':
        if (a === 0) return '0'
        if (a < 1) return Math.round(v * 1000) + ' µs'
        if (a >= 1000) return trim(v / 1000) + ' s'
        return (a < 10 && !axis ? v.toFixed(2) : a < 100 && !axis ? v.toFixed(1) : trim(v)) + ' ms'
      case '%': return (axis ? trim(v) : v.toFixed(1)) + '%'
      case 'MB':
        if (a === 0) return '0'
        if (a < 1) return Math.round(v * 1000) + ' kB'
        if (a >= 1000) return trim(v / 1000) + ' GB'
        return (axis ? trim(v) : v.toFixed(a < 10 ? 2 : 1)) + ' MB'
      case 'ms/s': return (axis ? trim(v) : v.toFixed(1)) + ' ms/s'
      case '/s': return Math.round(v).toLocaleString('en-US') + '/s'
      default: return axis ? trim(v) : Math.round(v).toLocaleString('en-US')
    }
  }
}
