/// <reference lib="dom" />
// The flame graph section: the component (flame/client, inlined before this script) in the tab of the profile shown,
// and the culprits that lead to it — a click on one zooms the graph to its frames, or says why it has none.
/* global window, document */

/**
 * @param {import('./report.js').Report} r
 * @param {'cpu' | 'heap'} kind
 */
export function showFlame (r, kind) {
  const { data, flameBox } = r
  if (!flameBox || !data.flame || !data.flame[kind]) return null
  if (r.flameKind === kind) return r.flame
  if (r.flame) r.flame.destroy()
  r.flame = /** @type {any} */ (window).HotpathFlame.init(flameBox, data.flame[kind], { table: true, toolbar: true, tableRows: 25 })
  r.flameKind = kind
  for (const tab of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.hr-tab'))) {
    const on = tab.dataset.flame === kind
    tab.classList.toggle('hr-tab-on', on)
    tab.setAttribute('aria-selected', String(on))
  }
  return r.flame
}

/** @param {import('./report.js').Report} r */
export function listenFlameTabs (r) {
  for (const tab of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.hr-tab'))) {
    tab.addEventListener('click', () => showFlame(r, /** @type {'cpu' | 'heap'} */ (tab.dataset.flame)))
  }
}

/**
 * Shows a culprit in the flame graph: the allocation graph for what allocates, else the CPU graph. Says so when
 * the culprit has no frame there (a listener is added cheaply: its cost is in running the listeners).
 * @param {import('./report.js').Report} r
 * @param {number} i
 * @returns {boolean} whether the graph zoomed to it
 */
export function zoomToCulprit (r, i) {
  const { data } = r
  const c = data.culprits[i]
  const li = /** @type {HTMLElement | null} */ (document.querySelector('.hr-culprit[data-culprit="' + i + '"]'))
  if (!c) return false
  const note = li ? /** @type {HTMLElement} */ (li.querySelector('.hr-c-note')) : null
  for (const other of document.querySelectorAll('.hr-culprit.hr-active')) other.classList.remove('hr-active')
  if (li) li.classList.add('hr-active')
  // Waiting costs no CPU: a box near its line would be some other function's (the response callback, often).
  if (c.measure === 'waits') {
    if (note) {
      note.hidden = false
      note.textContent = whyMissing(c, true)
    }
    return false
  }
  const kind = c.measure === 'allocations' && data.flame && data.flame.heap ? 'heap' : 'cpu'
  const graph = showFlame(r, kind) || showFlame(r, kind === 'cpu' ? 'heap' : 'cpu')
  // A function V8 ran inlined has no box of its own: its time is drawn in its caller's, where the click goes.
  const found = graph ? graph.zoomToFunction(c.zoom || { function: c.function, file: c.file, line: c.line }) : false
  if (note) {
    const text = !found ? whyMissing(c, graph !== null) : c.zoom ? c.label + ' ran inlined into ' + c.zoom.function + ' (V8 gave it no frame of its own): its time is in ' + c.zoom.function + '’s box.' : ''
    note.hidden = text === ''
    note.textContent = text
  }
  const section = document.getElementById('flame')
  if (found && section) section.scrollIntoView({ block: 'start' })
  return found
}

/**
 * @param {{ function: string, label: string, measure: string, wait?: { role?: string } }} c
 * @param {boolean} hasGraph
 */
function whyMissing (c, hasGraph) {
  if (!hasGraph) return 'No profile was recorded in this run, so there is no flame graph to show it in.'
  if (c.measure === 'listeners') {
    return c.label + ' does not show in the CPU profile: adding a listener costs little. The cost is in running all of them on every emit — see the other culprits, and emit in the flame graph.'
  }
  if (c.measure === 'allocations') return c.label + ' is blamed for what it allocates, not for CPU time, and does not show in this profile.'
  if (c.measure === 'retained') return c.label + ' is blamed for what it keeps alive, found in heap snapshots taken after the load, not for CPU time.'
  if (c.measure === 'waits' && c.wait && c.wait.role === 'pool') return c.label + ' is blamed for the time requests wait for one of the connections of the pool it creates, which costs no CPU and does not show in a CPU profile.'
  if (c.measure === 'waits') return c.label + ' is blamed for the time requests wait on the call it makes, which costs no CPU and does not show in a CPU profile.'
  return c.label + ' is not in the flame graph (it took too few samples to be drawn).'
}

/** @param {import('./report.js').Report} r */
export function listenCulprits (r) {
  for (const li of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.hr-culprit.hr-linked'))) {
    const i = Number(li.dataset.culprit)
    li.addEventListener('click', () => zoomToCulprit(r, i))
    li.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault()
        zoomToCulprit(r, i)
      }
    })
  }
}
