// Search and focus: which frames match the search box (text, or /regex/) or a function focused from outside, and
// what share of the profile runs under them. Boxes of other frames are drawn dimmed.
import { draw } from './draw.js'
import { pct } from './labels.js'

/** @param {import('./graph.js').Graph} g */
export function applySearch (g) {
  const { F, state, data } = g
  const frameMatch = new Uint8Array(F.name.length)
  g.frameMatch = frameMatch
  if (state.focus) for (const f of state.focus) frameMatch[f] = 1
  if (state.search) {
    for (let f = 0; f < F.name.length; f++) {
      state.search.lastIndex = 0
      if (state.search.test(F.name[f]) || state.search.test(g.shownName(f)) || state.search.test(data.files[F.file[f]])) frameMatch[f] = 1
    }
  }
  if (!state.search && !state.focus) {
    g.ui.searchInfo.textContent = ''
    return
  }
  const { covered, frames } = matchCoverage(g.view, frameMatch, F.name.length)
  g.ui.searchInfo.textContent = frames + ' function' + (frames === 1 ? '' : 's') + ' · ' + pct(covered / (g.view.total[0] || 1))
}

/**
 * The share of the profile under a match, each sample once (a match inside a match is not added again), and how many
 * distinct functions match anywhere in the view.
 * @param {import('./view-tree.js').View} view
 * @param {Uint8Array} frameMatch
 * @param {number} frameCount
 */
function matchCoverage (view, frameMatch, frameCount) {
  let covered = 0
  const stack = [0]
  while (stack.length) {
    const v = /** @type {number} */ (stack.pop())
    if (frameMatch[view.frame[v]]) {
      covered += view.total[v]
      continue
    }
    for (const c of view.children[v]) stack.push(c)
  }
  const seen = new Uint8Array(frameCount)
  let frames = 0
  for (let v = 0; v < view.count; v++) {
    const f = view.frame[v]
    if (frameMatch[f] && !seen[f]) {
      seen[f] = 1
      frames++
    }
  }
  return { covered, frames }
}

/**
 * @param {import('./graph.js').Graph} g
 * @param {string} text what the search box holds
 */
export function setSearch (g, text) {
  const { state } = g
  state.focus = null
  const t = (text || '').trim()
  if (!t) state.search = null
  else {
    const re = /^\/(.+)\/([a-z]*)$/.exec(t)
    try {
      state.search = re ? new RegExp(re[1], re[2].replace('g', '')) : new RegExp(t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i')
    } catch {
      state.search = null
    }
  }
  applySearch(g)
  draw(g)
}
