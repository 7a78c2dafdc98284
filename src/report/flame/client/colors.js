// The colour of a box: by kind of code (a hue range per kind, the shade from the function's name and file, so a
// function keeps its colour from view to view), or by the function's self time over the whole profile (heat).

const KIND_HUE = { app: [12, 40], dependency: [195, 235], node: [95, 140], v8: [0, 0] }

/**
 * @param {import('./graph.js').Graph} g
 * @param {number} v a view node
 */
export function colorOf (g, v) {
  const { F } = g
  const f = g.view.frame[v]
  const kind = g.frameKind[f]
  if (g.state.colorBy === 'heat') {
    const t = Math.sqrt(g.frameSelf[f] / g.maxFrameSelf)
    return 'hsl(' + Math.round(55 - 55 * t) + ',90%,' + Math.round(80 - 32 * t) + '%)'
  }
  if (kind === 'v8') return 'hsl(0,0%,' + (72 + hash(F.name[f]) % 10) + '%)'
  const [a, b] = KIND_HUE[/** @type {'app'} */ (kind)]
  const h = hash(F.name[f] + g.data.files[F.file[f]])
  const hue = a + (h % (b - a + 1))
  return kind === 'app'
    ? 'hsl(' + hue + ',85%,' + (58 + (h >> 4) % 10) + '%)'
    : kind === 'dependency'
      ? 'hsl(' + hue + ',60%,' + (66 + (h >> 4) % 10) + '%)'
      : 'hsl(' + hue + ',45%,' + (62 + (h >> 4) % 10) + '%)'
}

/** @param {string} s */
function hash (s) {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619)
  return h >>> 0
}
