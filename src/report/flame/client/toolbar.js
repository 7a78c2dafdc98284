/// <reference lib="dom" />
// The toolbar at work: the toggles that fold kinds of code into their callers (or split not-optimised calls apart),
// the search box, the colour choice, reset, and the keys (/ to search, Escape to clear it or zoom out).
/* global window, document */
import { el } from './dom.js'
import { draw } from './draw.js'
import { rebuild } from './graph.js'
import { setSearch } from './search.js'
import { zoomTo } from './zoom.js'

/** @param {import('./graph.js').Graph} g */
export function addToggles (g) {
  const { state } = g
  toggle(g, 'show-node', 'Node.js frames', true, 'Show frames of Node.js internals; hidden, their time goes to their caller', (on) => { state.hide.node = !on; rebuild(g) })
  toggle(g, 'show-v8', 'V8 frames', true, 'Show GC, (program) and native frames; hidden, their time goes to their caller', (on) => { state.hide.v8 = !on; rebuild(g) })
  toggle(g, 'show-dependency', 'dependencies', true, 'Show frames of packages in node_modules', (on) => { state.hide.dependency = !on; rebuild(g) })
  // V8's CPU profiler merges a function's optimised and unoptimised code into one node; what it does say is why it
  // would not optimise a function (deoptReason). The toggle appears when a profile carries such reasons.
  if (g.data.deopts.length > 0) {
    toggle(g, 'split', 'split not-optimised', false, 'Show apart (hatched) the frames V8 said it would not optimise, with the reason; merged: one frame per function.', (on) => { state.split = on; rebuild(g) })
  }
}

/**
 * @param {import('./graph.js').Graph} g
 * @param {string} name
 * @param {string} label
 * @param {boolean} checked
 * @param {string} title
 * @param {(on: boolean) => void} onChange
 */
function toggle (g, name, label, checked, title, onChange) {
  const l = el('label', 'hp-toggle', undefined)
  l.title = title
  const c = /** @type {HTMLInputElement} */ (el('input', '', undefined))
  c.type = 'checkbox'
  c.checked = checked
  c.name = name
  c.addEventListener('change', () => onChange(c.checked))
  l.appendChild(c)
  l.appendChild(document.createTextNode(' ' + label))
  g.ui.toggles.appendChild(l)
  return c
}

/**
 * @param {import('./graph.js').Graph} g
 * @returns {(e: KeyboardEvent) => void} the page's key listener, to remove when the graph goes
 */
export function listenToolbar (g) {
  const { searchBox, colorSelect, reset } = g.ui
  let searchTimer = 0
  searchBox.addEventListener('input', () => {
    clearTimeout(searchTimer)
    searchTimer = window.setTimeout(() => setSearch(g, searchBox.value), 80)
  })
  searchBox.addEventListener('keydown', (e) => { if (e.key === 'Enter') setSearch(g, searchBox.value) })
  colorSelect.addEventListener('change', () => { g.state.colorBy = colorSelect.value; draw(g) })
  reset.addEventListener('click', () => zoomTo(g, 0))
  /** @param {KeyboardEvent} e */
  const onKey = (e) => {
    if (e.key === 'Escape') {
      if (document.activeElement === searchBox && searchBox.value) { searchBox.value = ''; setSearch(g, '') } else zoomTo(g, 0)
    } else if (e.key === '/' && document.activeElement !== searchBox) {
      e.preventDefault()
      searchBox.focus()
    }
  }
  document.addEventListener('keydown', onKey)
  return onKey
}
