/// <reference lib="dom" />
// The flame graph in the browser: one canvas, drawn from columns of numbers, so a busy minute of profile (tens of
// thousands of nodes) draws in milliseconds where an SVG of as many elements would freeze the page. This file is
// inlined as is into a <script> (see assets.js): no imports, no build step, no network.
// It defines window.HotpathFlame = { init(container, data, options) } → a controller (see the README).
/* global window, document, getComputedStyle, performance */
(function () {
  'use strict'
  const ROW = 18
  const KIND_LABEL = { app: 'your code', dependency: 'dependencies', node: 'Node.js', v8: 'V8 (GC, native)' }
  const KIND_HUE = { app: [12, 40], dependency: [195, 235], node: [95, 140], v8: [0, 0] }

  /**
   * @param {HTMLElement} container
   * @param {any} data what flameData() produced
   * @param {{ title?: string, table?: boolean, toolbar?: boolean, tableRows?: number }} [options]
   */
  function init (container, data, options) {
    const opts = Object.assign({ table: true, toolbar: true, tableRows: 40 }, options || {})
    const F = data.frames
    // The name to show: a label read from the source for an anonymous function (data from older versions has none).
    const shownName = (/** @type {number} */ f) => (F.label && F.label[f]) || F.name[f]
    const kinds = data.kinds
    const frameKind = F.kind.map((/** @type {number} */ k) => kinds[k])
    const unit = data.unit
    const state = {
      hide: { node: false, v8: false, dependency: false, app: false },
      split: false,
      colorBy: 'kind',
      /** @type {RegExp | null} */
      search: null,
      /** @type {Set<number> | null} frames to highlight (a function focused from outside) */
      focus: null,
      zoom: 0,
      hover: -1
    }

    // Per-frame totals for the table and heat colours: self added up, total counted once per path (no recursion).
    const frameSelf = new Float64Array(F.name.length)
    for (let i = 0; i < data.nodes.frame.length; i++) frameSelf[data.nodes.frame[i]] += data.nodes.self[i]
    let maxFrameSelf = 1
    for (let f = 0; f < frameSelf.length; f++) if (frameSelf[f] > maxFrameSelf) maxFrameSelf = frameSelf[f]

    container.classList.add('hp-flame')
    container.innerHTML = ''
    const el = (/** @type {string} */ tag, /** @type {string} */ cls, /** @type {string | undefined} */ text) => {
      const e = document.createElement(tag)
      if (cls) e.className = cls
      if (text !== undefined) e.textContent = text
      return e
    }

    // ---- header and toolbar
    const header = el('div', 'hp-head', undefined)
    if (opts.title) header.appendChild(el('h1', 'hp-title', opts.title))
    header.appendChild(el('div', 'hp-summary', summaryText()))
    const legend = el('div', 'hp-legend', undefined)
    header.appendChild(legend)
    container.appendChild(header)
    const culpritBox = el('div', 'hp-culprits', undefined)
    if (data.culprits && data.culprits.length) container.appendChild(culpritBox)

    /** @type {HTMLInputElement} */
    const searchBox = /** @type {any} */ (el('input', 'hp-search', undefined))
    searchBox.type = 'search'
    searchBox.placeholder = 'Search functions and files (/regex/)'
    searchBox.setAttribute('aria-label', 'search')
    const searchInfo = el('span', 'hp-search-info', '')
    const colorSelect = /** @type {HTMLSelectElement} */ (el('select', 'hp-color', undefined))
    colorSelect.setAttribute('aria-label', 'colour by')
    for (const [value, label] of [['kind', 'colour by kind'], ['heat', 'colour by self time']]) {
      const o = /** @type {HTMLOptionElement} */ (el('option', '', label))
      o.value = value
      colorSelect.appendChild(o)
    }
    const toggles = el('span', 'hp-toggles', undefined)
    const toggle = (/** @type {string} */ name, /** @type {string} */ label, /** @type {boolean} */ checked, /** @type {string} */ title, /** @type {(on: boolean) => void} */ onChange) => {
      const l = el('label', 'hp-toggle', undefined)
      l.title = title
      const c = /** @type {HTMLInputElement} */ (el('input', '', undefined))
      c.type = 'checkbox'
      c.checked = checked
      c.name = name
      c.addEventListener('change', () => onChange(c.checked))
      l.appendChild(c)
      l.appendChild(document.createTextNode(' ' + label))
      toggles.appendChild(l)
      return c
    }
    toggle('show-node', 'Node.js frames', true, 'Show frames of Node.js internals; hidden, their time goes to their caller', (on) => { state.hide.node = !on; rebuild() })
    toggle('show-v8', 'V8 frames', true, 'Show GC, (program) and native frames; hidden, their time goes to their caller', (on) => { state.hide.v8 = !on; rebuild() })
    toggle('show-dependency', 'dependencies', true, 'Show frames of packages in node_modules', (on) => { state.hide.dependency = !on; rebuild() })
    // V8's CPU profiler merges a function's optimised and unoptimised code into one node; what it does say is why it
    // would not optimise a function (deoptReason). The toggle appears when a profile carries such reasons.
    if (data.deopts.length > 0) {
      toggle('split', 'split not-optimised', false, 'Show apart (hatched) the frames V8 said it would not optimise, with the reason; merged: one frame per function.', (on) => { state.split = on; rebuild() })
    }
    const reset = el('button', 'hp-reset', 'Reset zoom')
    const crumbs = el('div', 'hp-crumbs', '')
    if (opts.toolbar) {
      const bar = el('div', 'hp-toolbar', undefined)
      bar.appendChild(searchBox)
      bar.appendChild(searchInfo)
      bar.appendChild(colorSelect)
      bar.appendChild(toggles)
      bar.appendChild(reset)
      container.appendChild(bar)
    }
    container.appendChild(crumbs)

    const wrap = el('div', 'hp-canvas-wrap', undefined)
    const canvas = /** @type {HTMLCanvasElement} */ (el('canvas', 'hp-canvas', undefined))
    canvas.setAttribute('role', 'img')
    canvas.setAttribute('aria-label', 'flame graph')
    const tip = el('div', 'hp-tip', undefined)
    tip.style.display = 'none'
    wrap.appendChild(canvas)
    wrap.appendChild(tip)
    container.appendChild(wrap)
    const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'))

    const tableWrap = el('div', 'hp-table-wrap', undefined)
    if (opts.table) container.appendChild(tableWrap)

    // ---- the view tree: the data tree with hidden kinds folded into their callers
    /** @type {{ frame: Int32Array, parent: Int32Array, self: Float64Array, total: Float64Array, x: Float64Array, depth: Int32Array, deopt: Int32Array, children: number[][], count: number }} */
    let view = /** @type {any} */ (null)
    let maxDepth = 0

    function rebuild () {
      const N = data.nodes.frame.length
      const frame = new Int32Array(N)
      const parent = new Int32Array(N)
      const self = new Float64Array(N)
      const deopt = new Int32Array(N)
      /** @type {number[][]} */
      const children = []
      /** @type {Map<string, number>[]} */
      const childIndex = []
      const viewOf = new Int32Array(N)
      let count = 0
      for (let i = 0; i < N; i++) {
        const f = data.nodes.frame[i]
        const p = data.nodes.parent[i]
        if (p === -1) {
          frame[0] = f
          parent[0] = -1
          self[0] = data.nodes.self[i]
          deopt[0] = -1
          children.push([])
          childIndex.push(new Map())
          viewOf[i] = 0
          count = 1
          continue
        }
        const vp = viewOf[p]
        if (state.hide[/** @type {'app'} */ (frameKind[f])]) {
          viewOf[i] = vp
          self[vp] += data.nodes.self[i]
          continue
        }
        const d = state.split ? data.nodes.deopt[i] : -1
        const key = f + ':' + d
        let v = childIndex[vp].get(key)
        if (v === undefined) {
          v = count++
          frame[v] = f
          parent[v] = vp
          self[v] = 0
          deopt[v] = d
          children.push([])
          childIndex.push(new Map())
          childIndex[vp].set(key, v)
          children[vp].push(v)
        }
        self[v] += data.nodes.self[i]
        viewOf[i] = v
      }
      const total = new Float64Array(count)
      for (let v = count - 1; v >= 0; v--) {
        total[v] += self[v]
        if (parent[v] >= 0) total[parent[v]] += total[v]
      }
      // Heaviest first: the hot path runs down the left edge.
      for (const c of children) if (c.length > 1) c.sort((a, b) => total[b] - total[a])
      const x = new Float64Array(count)
      const depth = new Int32Array(count)
      maxDepth = 0
      const stack = [0]
      while (stack.length) {
        const v = /** @type {number} */ (stack.pop())
        let cx = x[v]
        for (const c of children[v]) {
          x[c] = cx
          depth[c] = depth[v] + 1
          if (depth[c] > maxDepth) maxDepth = depth[c]
          cx += total[c]
          stack.push(c)
        }
      }
      view = { frame, parent, self, total, x, depth, deopt, children, count }
      // Keep the zoom on the same function path if it survived, else start over.
      state.zoom = 0
      state.hover = -1
      applySearch()
      renderTable()
      draw()
    }

    // ---- drawing
    /** rows of [node, x, width] drawn, for hit testing @type {number[][]} */
    let drawn = []

    function draw () {
      const width = Math.max(200, wrap.clientWidth || 800)
      const z = state.zoom
      const x0 = view.x[z]
      const w0 = view.total[z] || 1
      const scale = width / w0
      // Only as deep as something wide enough to see goes.
      let depthNeeded = view.depth[z]
      const stack = [z]
      while (stack.length) {
        const v = /** @type {number} */ (stack.pop())
        if (view.depth[v] > depthNeeded) depthNeeded = view.depth[v]
        for (const c of view.children[v]) if (view.total[c] * scale >= 1) stack.push(c)
      }
      const height = (depthNeeded + 1) * ROW + 1
      const dpr = window.devicePixelRatio || 1
      canvas.style.width = width + 'px'
      canvas.style.height = height + 'px'
      canvas.width = Math.round(width * dpr)
      canvas.height = Math.round(height * dpr)
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0)
      ctx.clearRect(0, 0, width, height)
      ctx.font = '12px ' + (getComputedStyle(container).fontFamily || 'sans-serif')
      ctx.textBaseline = 'middle'
      drawn = []
      for (let d = 0; d <= depthNeeded; d++) drawn.push([])
      // The zoomed node's ancestors span the whole width, as context.
      for (let a = view.parent[z]; a >= 0; a = view.parent[a]) box(a, 0, width, true)
      const todo = [z]
      while (todo.length) {
        const v = /** @type {number} */ (todo.pop())
        const px = (view.x[v] - x0) * scale
        const pw = view.total[v] * scale
        box(v, px, pw, false)
        // Slivers under a pixel are not drawn: a flame graph of a busy minute has thousands, and none can be seen.
        for (const c of view.children[v]) if (view.total[c] * scale >= 1) todo.push(c)
      }
      renderCrumbs()
    }

    /**
     * @param {number} v
     * @param {number} px
     * @param {number} pw
     * @param {boolean} context an ancestor of the zoomed node
     */
    function box (v, px, pw, context) {
      const d = view.depth[v]
      const y = d * ROW
      const f = view.frame[v]
      const matched = isMatch(f)
      const dim = (state.search || state.focus) && !matched
      ctx.fillStyle = dim ? '#e4e4e4' : colorOf(v)
      ctx.globalAlpha = context ? 0.55 : 1
      ctx.fillRect(px, y, Math.max(pw - 0.5, 0.5), ROW - 1)
      if (view.deopt[v] >= 0) {
        // Not optimised: hatched, so split variants stand apart at a glance.
        ctx.strokeStyle = 'rgba(0,0,0,0.35)'
        ctx.beginPath()
        for (let hx = px - ROW; hx < px + pw; hx += 6) {
          ctx.moveTo(Math.max(px, hx), y + Math.min(ROW - 1, Math.max(0, px - hx)))
          ctx.lineTo(Math.min(px + pw, hx + ROW - 1), y + ROW - 1 - Math.max(0, hx + ROW - 1 - (px + pw)))
        }
        ctx.stroke()
      }
      if (v === state.hover) {
        ctx.strokeStyle = '#000'
        ctx.lineWidth = 1
        ctx.strokeRect(px + 0.5, y + 0.5, Math.max(pw - 1.5, 0.5), ROW - 2)
      }
      ctx.globalAlpha = 1
      if (pw > 28) {
        ctx.fillStyle = dim ? '#888' : '#111'
        const label = fit(labelOf(v), pw - 6)
        if (label) ctx.fillText(label, px + 3, y + ROW / 2)
      }
      drawn[d].push(v, px, pw)
    }

    /** @param {number} v */
    function labelOf (v) {
      const f = view.frame[v]
      if (v === 0) return 'all: ' + fmt(view.total[0])
      const file = data.files[F.file[f]]
      let label = shownName(f)
      if (view.deopt[v] >= 0) label += ' [not optimised]'
      if (file) label += '  ' + shortFile(file) + (F.line[f] > 0 ? ':' + F.line[f] : '')
      return label
    }

    /** @type {Map<string, number>} */
    const widthCache = new Map()
    /**
     * @param {string} text
     * @param {number} room px
     */
    function fit (text, room) {
      const measure = (/** @type {string} */ s) => {
        let w = widthCache.get(s)
        if (w === undefined) {
          w = ctx.measureText(s).width
          if (widthCache.size < 20000) widthCache.set(s, w)
        }
        return w
      }
      if (measure(text) <= room) return text
      let lo = 0
      let hi = text.length
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1
        if (measure(text.slice(0, mid) + '…') <= room) lo = mid
        else hi = mid - 1
      }
      return lo < 2 ? '' : text.slice(0, lo) + '…'
    }

    /** @param {number} v */
    function colorOf (v) {
      const f = view.frame[v]
      const kind = frameKind[f]
      if (state.colorBy === 'heat') {
        const t = Math.sqrt(frameSelf[f] / maxFrameSelf)
        return 'hsl(' + Math.round(55 - 55 * t) + ',90%,' + Math.round(80 - 32 * t) + '%)'
      }
      if (kind === 'v8') return 'hsl(0,0%,' + (72 + hash(F.name[f]) % 10) + '%)'
      const [a, b] = KIND_HUE[/** @type {'app'} */ (kind)]
      const h = hash(F.name[f] + data.files[F.file[f]])
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

    /** @param {string} file */
    function shortFile (file) {
      if (file.startsWith('node:')) return file
      const parts = file.split(/[\\/]/)
      const nm = parts.lastIndexOf('node_modules')
      if (nm >= 0 && nm < parts.length - 1) {
        const scoped = parts[nm + 1].startsWith('@') ? 2 : 1
        return parts.slice(nm + 1, nm + 1 + scoped).join('/') + '/…/' + parts[parts.length - 1]
      }
      return parts.slice(-2).join('/')
    }

    // ---- search and focus
    /** @type {Uint8Array} */
    let frameMatch = new Uint8Array(F.name.length)
    /** @param {number} f */
    function isMatch (f) {
      return frameMatch[f] === 1
    }

    function applySearch () {
      frameMatch = new Uint8Array(F.name.length)
      if (state.focus) for (const f of state.focus) frameMatch[f] = 1
      if (state.search) {
        for (let f = 0; f < F.name.length; f++) {
          state.search.lastIndex = 0
          if (state.search.test(F.name[f]) || state.search.test(shownName(f)) || state.search.test(data.files[F.file[f]])) frameMatch[f] = 1
        }
      }
      if (!state.search && !state.focus) {
        searchInfo.textContent = ''
        return
      }
      // The share of the profile under a match, each sample once (a match inside a match is not added again), and
      // how many distinct functions match anywhere in the view.
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
      const seen = new Uint8Array(F.name.length)
      let frames = 0
      for (let v = 0; v < view.count; v++) {
        const f = view.frame[v]
        if (frameMatch[f] && !seen[f]) {
          seen[f] = 1
          frames++
        }
      }
      searchInfo.textContent = frames + ' function' + (frames === 1 ? '' : 's') + ' · ' + pct(covered / (view.total[0] || 1))
    }

    /** @param {string} text */
    function setSearch (text) {
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
      applySearch()
      draw()
    }

    // ---- zoom
    /** @param {number} v */
    function zoomTo (v) {
      state.zoom = v >= 0 && v < view.count ? v : 0
      draw()
    }

    function renderCrumbs () {
      crumbs.textContent = ''
      /** @type {number[]} */
      const path = []
      for (let a = state.zoom; a >= 0; a = view.parent[a]) path.unshift(a)
      path.forEach((v, i) => {
        if (i > 0) crumbs.appendChild(document.createTextNode(' › '))
        const b = el('button', 'hp-crumb', v === 0 ? 'all' : shownName(view.frame[v]))
        b.addEventListener('click', () => zoomTo(v))
        crumbs.appendChild(b)
      })
      reset.toggleAttribute('disabled', state.zoom === 0)
    }

    /**
     * Zooms to the heaviest place a function runs and highlights every other place it runs.
     * @param {{ function?: string, file?: string, line?: number } | string} target a culprit, or a function name
     * @returns {boolean} whether the function is in the graph
     */
    function zoomToFunction (target) {
      const want = typeof target === 'string' ? { function: target } : target
      /** @type {Set<number>} */
      const framesFound = new Set()
      for (let f = 0; f < F.name.length; f++) {
        if (want.function !== undefined && F.name[f] !== want.function && shownName(f) !== want.function) continue
        if (want.file !== undefined && want.file !== '' && data.files[F.file[f]] !== want.file) continue
        framesFound.add(f)
      }
      // A line inside the function narrows same-named functions of one file to the one starting at or before it.
      if (want.line !== undefined && framesFound.size > 1) {
        let best = -1
        for (const f of framesFound) if (F.line[f] <= /** @type {number} */ (want.line) && (best === -1 || F.line[f] > F.line[best])) best = f
        if (best !== -1) {
          framesFound.clear()
          framesFound.add(best)
        }
      }
      if (framesFound.size === 0) return false
      let heaviest = -1
      for (let v = 0; v < view.count; v++) {
        if (framesFound.has(view.frame[v]) && (heaviest === -1 || view.total[v] > view.total[heaviest])) heaviest = v
      }
      state.search = null
      searchBox.value = ''
      state.focus = framesFound
      applySearch()
      if (heaviest === -1) {
        draw()
        return false
      }
      zoomTo(heaviest)
      wrap.scrollIntoView({ block: 'nearest' })
      return true
    }

    // ---- pointer
    /** @param {MouseEvent} e */
    function nodeAt (e) {
      const r = canvas.getBoundingClientRect()
      const x = e.clientX - r.left
      const d = Math.floor((e.clientY - r.top) / ROW)
      const row = drawn[d]
      if (!row) return -1
      for (let i = 0; i < row.length; i += 3) if (x >= row[i + 1] && x < row[i + 1] + row[i + 2]) return row[i]
      return -1
    }

    canvas.addEventListener('mousemove', (e) => {
      const v = nodeAt(e)
      if (v !== state.hover) {
        state.hover = v
        draw()
      }
      if (v === -1) {
        tip.style.display = 'none'
        return
      }
      showTip(v, e)
    })
    canvas.addEventListener('mouseleave', () => {
      state.hover = -1
      tip.style.display = 'none'
      draw()
    })
    canvas.addEventListener('click', (e) => {
      const v = nodeAt(e)
      if (v !== -1) zoomTo(v === state.zoom ? Math.max(0, view.parent[v]) : v)
    })

    /**
     * @param {number} v
     * @param {MouseEvent} e
     */
    function showTip (v, e) {
      const f = view.frame[v]
      const file = data.files[F.file[f]]
      const total = view.total[0] || 1
      tip.textContent = ''
      tip.appendChild(el('div', 'hp-tip-name', shownName(f)))
      if (shownName(f) !== F.name[f]) tip.appendChild(el('div', 'hp-tip-file', F.name[f] + ' to V8; named from its source'))
      if (file) tip.appendChild(el('div', 'hp-tip-file', file + (F.line[f] > 0 ? ':' + F.line[f] : '')))
      tip.appendChild(el('div', '', KIND_LABEL[/** @type {'app'} */ (frameKind[f])]))
      tip.appendChild(el('div', '', 'total ' + fmt(view.total[v]) + ' (' + pct(view.total[v] / total) + ') · self ' + fmt(view.self[v]) + ' (' + pct(view.self[v] / total) + ')'))
      const hot = F.hotLines[f]
      if (hot && hot.length) {
        const parts = []
        for (let i = 0; i < hot.length; i += 2) parts.push('line ' + hot[i] + ': ' + pct(hot[i + 1] / total))
        tip.appendChild(el('div', 'hp-tip-lines', 'hottest lines — ' + parts.join(', ')))
      }
      if (view.deopt[v] >= 0) tip.appendChild(el('div', 'hp-tip-deopt', 'not optimised: ' + data.deopts[view.deopt[v]]))
      tip.style.display = 'block'
      const r = wrap.getBoundingClientRect()
      const left = Math.min(e.clientX - r.left + 14, r.width - tip.offsetWidth - 4)
      tip.style.left = Math.max(0, left) + 'px'
      tip.style.top = (e.clientY - r.top + 16) + 'px'
    }

    // ---- legend, summary, table
    function summaryText () {
      const what = data.type === 'heap' ? 'sampled ' + fmt(data.total) : fmt(data.total) + ' of CPU'
      const parts = [what]
      if (data.type !== 'heap') {
        parts.push(data.samples + ' samples over ' + (data.durationMs / 1000).toFixed(1) + ' s')
        if (data.idle > 0) parts.push('idle ' + fmt(data.idle) + ' (not shown)')
      }
      return parts.join(' · ')
    }

    function renderLegend () {
      legend.textContent = ''
      for (const kind of ['app', 'dependency', 'node', 'v8']) {
        const item = el('span', 'hp-legend-item', undefined)
        const sw = el('span', 'hp-swatch hp-swatch-' + kind, undefined)
        item.appendChild(sw)
        item.appendChild(document.createTextNode(KIND_LABEL[/** @type {'app'} */ (kind)] + ' ' + pct(data.byKind[kind] / (data.total || 1))))
        legend.appendChild(item)
      }
    }

    function renderCulprits () {
      culpritBox.textContent = ''
      culpritBox.appendChild(el('h2', 'hp-culprits-title', data.type === 'heap' ? 'Where the memory goes' : 'What to look at first'))
      const list = el('ol', 'hp-culprit-list', undefined)
      for (const c of data.culprits || []) {
        const li = el('li', 'hp-culprit', undefined)
        li.appendChild(el('span', 'hp-culprit-share', pct(c.share)))
        const name = el('span', 'hp-culprit-fn', undefined)
        name.appendChild(el('span', 'hp-swatch hp-swatch-' + c.kind, undefined))
        name.appendChild(document.createTextNode(c.label || c.function))
        li.appendChild(name)
        if (c.file) li.appendChild(el('span', 'hp-culprit-where', shortFile(c.file) + ':' + c.line))
        if (c.calls.length) {
          li.appendChild(el('span', 'hp-culprit-calls', '→ ' + c.calls.map((/** @type {any} */ x) => x.function + ' (' + shortFile(x.file) + ') ' + pct(x.share)).join(', ')))
        }
        li.title = (c.file ? c.file + ':' + c.line : '') + ' — click to zoom'
        // A function V8 ran inlined has its bytes in the caller's box: that is where the click goes.
        li.addEventListener('click', () => zoomToFunction(c.zoom || { function: c.function, file: c.file, line: c.functionLine }))
        list.appendChild(li)
      }
      culpritBox.appendChild(list)
    }

    function renderTable () {
      if (!opts.table) return
      tableWrap.textContent = ''
      tableWrap.appendChild(el('h2', 'hp-table-title', 'Top functions by self ' + (data.type === 'heap' ? 'bytes' : 'time')))
      const table = el('table', 'hp-table', undefined)
      const head = el('tr', '', undefined)
      for (const h of ['Function', 'Where', 'Kind', 'Self', 'Self %', 'Total %']) head.appendChild(el('th', '', h))
      table.appendChild(head)
      // Totals per function in the current view, each sample once.
      const frameTotal = new Float64Array(F.name.length)
      const selfNow = new Float64Array(F.name.length)
      const onPath = new Int32Array(F.name.length)
      const stack = [0]
      const exit = -1
      /** @type {number[]} */
      const path = []
      while (stack.length) {
        const v = /** @type {number} */ (stack.pop())
        if (v === exit) {
          onPath[view.frame[/** @type {number} */ (path.pop())]]--
          continue
        }
        const f = view.frame[v]
        selfNow[f] += view.self[v]
        if (onPath[f] === 0) frameTotal[f] += view.total[v]
        onPath[f]++
        path.push(v)
        stack.push(exit)
        for (const c of view.children[v]) stack.push(c)
      }
      const order = []
      for (let f = 0; f < F.name.length; f++) if (selfNow[f] > 0 && view.frame[0] !== f) order.push(f)
      order.sort((a, b) => selfNow[b] - selfNow[a])
      const total = view.total[0] || 1
      for (const f of order.slice(0, opts.tableRows)) {
        const tr = el('tr', 'hp-row', undefined)
        tr.dataset.frame = String(f)
        const file = data.files[F.file[f]]
        const name = el('td', 'hp-fn', undefined)
        name.appendChild(el('span', 'hp-swatch hp-swatch-' + frameKind[f], undefined))
        name.appendChild(document.createTextNode(shownName(f)))
        tr.appendChild(name)
        const where = el('td', 'hp-where', file ? shortFile(file) + (F.line[f] > 0 ? ':' + F.line[f] : '') : '')
        where.title = file
        tr.appendChild(where)
        tr.appendChild(el('td', '', frameKind[f]))
        tr.appendChild(el('td', 'hp-num', fmt(selfNow[f])))
        tr.appendChild(el('td', 'hp-num', pct(selfNow[f] / total)))
        tr.appendChild(el('td', 'hp-num', pct(frameTotal[f] / total)))
        tr.addEventListener('click', () => zoomToFunction({ function: F.name[f], file: data.files[F.file[f]], line: F.line[f] }))
        table.appendChild(tr)
      }
      tableWrap.appendChild(table)
    }

    /** @param {number} v in data units */
    function fmt (v) {
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
    function pct (r) {
      const p = r * 100
      return (p >= 10 || p === 0 ? p.toFixed(0) : p.toFixed(1)) + '%'
    }

    // ---- wiring
    let searchTimer = 0
    searchBox.addEventListener('input', () => {
      clearTimeout(searchTimer)
      searchTimer = window.setTimeout(() => setSearch(searchBox.value), 80)
    })
    searchBox.addEventListener('keydown', (e) => { if (e.key === 'Enter') setSearch(searchBox.value) })
    colorSelect.addEventListener('change', () => { state.colorBy = colorSelect.value; draw() })
    reset.addEventListener('click', () => zoomTo(0))
    /** @param {KeyboardEvent} e */
    const onKey = (e) => {
      if (e.key === 'Escape') {
        if (document.activeElement === searchBox && searchBox.value) { searchBox.value = ''; setSearch('') } else zoomTo(0)
      } else if (e.key === '/' && document.activeElement !== searchBox) {
        e.preventDefault()
        searchBox.focus()
      }
    }
    document.addEventListener('keydown', onKey)
    let lastWidth = 0
    const observer = new window.ResizeObserver(() => {
      if (wrap.clientWidth !== lastWidth) {
        lastWidth = wrap.clientWidth
        draw()
      }
    })

    renderLegend()
    renderCulprits()
    rebuild()
    lastWidth = wrap.clientWidth
    observer.observe(wrap)
    // When the first graph is on screen, for whoever measures how fast the page opens.
    if (performance.mark) performance.mark('hotpath-flame-drawn')

    return {
      zoomToFunction,
      /** @param {string} text */
      search (text) {
        searchBox.value = text
        setSearch(text)
        return searchInfo.textContent
      },
      reset () { zoomTo(0) },
      /** @param {{ colorBy?: 'kind' | 'heat', hide?: { node?: boolean, v8?: boolean, dependency?: boolean }, split?: boolean }} o */
      setOptions (o) {
        if (o.colorBy) { state.colorBy = o.colorBy; colorSelect.value = o.colorBy }
        if (o.hide) Object.assign(state.hide, o.hide)
        if (o.split !== undefined) state.split = o.split
        for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (toggles.querySelectorAll('input'))) {
          const name = input.name.replace('show-', '')
          input.checked = name === 'split' ? state.split : !state.hide[/** @type {'app'} */ (name)]
        }
        if (o.hide || o.split !== undefined) rebuild()
        else draw()
      },
      /** What is drawn, for tests and for a report that wants to describe it. */
      stats () {
        let boxes = 0
        let highlighted = 0
        /** @type {Record<string, number>} */
        const kindsDrawn = { app: 0, dependency: 0, node: 0, v8: 0 }
        let notOptimised = 0
        for (const row of drawn) {
          boxes += row.length / 3
          for (let i = 0; i < row.length; i += 3) {
            if (frameMatch[view.frame[row[i]]]) highlighted++
            if (view.deopt[row[i]] >= 0) notOptimised++
            if (row[i] !== 0) kindsDrawn[frameKind[view.frame[row[i]]]]++
          }
        }
        return { boxes, highlighted, notOptimised, kinds: kindsDrawn, zoomed: state.zoom === 0 ? null : F.name[view.frame[state.zoom]], viewNodes: view.count, maxDepth }
      },
      /**
       * Where the widest box of a function is drawn, in page coordinates (its centre), or null.
       * @param {string} name
       */
      locate (name) {
        let best = null
        for (let d = 0; d < drawn.length; d++) {
          const row = drawn[d]
          for (let i = 0; i < row.length; i += 3) {
            if ((F.name[view.frame[row[i]]] === name || shownName(view.frame[row[i]]) === name) && (!best || row[i + 2] > best.w)) best = { d, x: row[i + 1], w: row[i + 2] }
          }
        }
        if (!best) return null
        const r = canvas.getBoundingClientRect()
        return { x: r.left + window.scrollX + best.x + best.w / 2, y: r.top + window.scrollY + best.d * ROW + ROW / 2 }
      },
      destroy () {
        observer.disconnect()
        document.removeEventListener('keydown', onKey)
        container.textContent = ''
      }
    }
  }

  ;/** @type {any} */ (window).HotpathFlame = { init }
})()
