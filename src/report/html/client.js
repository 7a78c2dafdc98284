/// <reference lib="dom" />
// The report in the browser: draws the run's charts with uPlot (inlined before this script), switches them between
// processes and threads, embeds the flame graph component, and links each culprit to its frames. Inlined as is into
// the page (see assets.js): no imports, no build step, no network.
// It defines window.HotpathReport = { init(data) } → { charts(), plot(i), views(), select(view), zoomToCulprit(i),
// showFlame(kind), flame() }: what tests and scripts drive the page through.
/* global window, document, performance, URL, Blob */
(function () {
  'use strict'
  const PALETTE = ['#4e79a7', '#e15759', '#59a14f', '#f28e2b', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#ff9da7', '#7f7f7f']
  const FIXED = {
    p50: '#4e79a7',
    p90: '#59a14f',
    p99: '#f28e2b',
    max: '#e15759',
    rss: '#7f7f7f',
    heapTotal: '#76b7b2',
    heapUsed: '#4e79a7',
    external: '#b07aa1',
    scavenge: '#f28e2b',
    'mark-compact': '#e15759',
    incremental: '#b07aa1',
    'weak-callbacks': '#9c755f'
  }
  const HEIGHT = 180

  /**
   * @typedef {(number | null)[]} Values
   * @typedef {{ label: string, values: Values, color: string, dash?: number[], fill?: string }} SeriesSpec
   * @typedef {{ id: string, title: string, note: string, unit: string, grid: 'fine' | 'coarse', series: SeriesSpec[], threshold?: number, yMax?: number }} ChartSpec
   * @typedef {{ id: string, run: number, spec: ChartSpec, plot: any, box: HTMLElement }} Chart
   */

  /** @param {any} data what the page embeds (see src/report/html/doctor.js and compare.js) */
  function init (data) {
    const U = /** @type {any} */ (window).uPlot
    const compare = data.kind === 'compare'
    /** @type {Chart[]} */
    let charts = []
    const host = /** @type {HTMLElement} */ (document.getElementById('hr-charts'))
    const views = data.runs.map((/** @type {any} */ run) => defaultView(run))

    // ---- the process / thread selector (one run only; a comparison shows each run's default view)
    const select = /** @type {HTMLSelectElement | null} */ (document.getElementById('hr-thread'))
    if (select && !compare) {
      const options = viewOptions(data.runs[0])
      if (options.length > 1) {
        for (const [value, label] of options) {
          const o = document.createElement('option')
          o.value = value
          o.textContent = label
          select.appendChild(o)
        }
        const label = /** @type {HTMLElement} */ (select.parentElement)
        label.hidden = false
        select.value = views[0]
        select.addEventListener('change', () => { views[0] = select.value; drawCharts() })
      }
    }

    // ---- charts
    function drawCharts () {
      for (const c of charts) c.plot.destroy()
      charts = []
      host.textContent = ''
      const specsPerRun = data.runs.map((/** @type {any} */ run, /** @type {number} */ i) => specsFor(run, views[i]))
      /** @type {string[]} */
      const ids = []
      for (const specs of specsPerRun) for (const s of specs) if (!ids.includes(s.id)) ids.push(s.id)
      ids.sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b))
      if (compare) {
        const head = el('div', 'hr-pair hr-pair-head', undefined)
        data.runs.forEach((/** @type {any} */ run, /** @type {number} */ i) => head.appendChild(el('div', 'hr-run-label hr-run-' + i, run.label)))
        host.appendChild(head)
      }
      for (const id of ids) {
        const row = compare ? el('div', 'hr-pair', undefined) : host
        if (compare) host.appendChild(row)
        const pair = specsPerRun.map((/** @type {ChartSpec[]} */ specs) => specs.find(s => s.id === id))
        // Side by side, the same scale: a taller line is a bigger number.
        let yMax = 0
        if (compare) for (const s of pair) if (s) yMax = Math.max(yMax, maxOf(s))
        pair.forEach((/** @type {ChartSpec | undefined} */ spec, /** @type {number} */ i) => {
          if (!spec) {
            if (compare) row.appendChild(el('div', 'hr-chart hr-chart-missing', 'not recorded in this run'))
            return
          }
          const box = el('div', 'hr-chart', undefined)
          box.dataset.chart = spec.id
          if ((data.runs[i].decisive || []).includes(spec.id)) box.classList.add('hr-chart-decisive')
          const head = el('div', 'hr-chart-head', undefined)
          head.appendChild(el('h3', '', spec.title))
          head.appendChild(el('span', 'hr-chart-note', spec.note))
          box.appendChild(head)
          const plotBox = el('div', 'hr-plot', undefined)
          box.appendChild(plotBox)
          row.appendChild(box)
          if (compare) spec.yMax = yMax
          const plot = makePlot(plotBox, spec, data.runs[i], xRange())
          charts.push({ id: spec.id, run: i, spec, plot, box: plotBox })
        })
      }
    }

    /** The x range that holds every run, so charts line up in time (side by side too). */
    function xRange () {
      let lo = Infinity
      let hi = -Infinity
      for (const run of data.runs) {
        lo = Math.min(lo, run.series.range[0])
        hi = Math.max(hi, run.series.range[1])
      }
      return hi > lo ? [lo, hi] : null
    }

    /**
     * @param {HTMLElement} box
     * @param {ChartSpec} spec
     * @param {any} run
     * @param {number[] | null} range
     */
    function makePlot (box, spec, run, range) {
      const grid = run.series[spec.grid]
      const win = run.series.window
      const fmt = formatter(spec.unit)
      const few = grid.x.length <= 90 && spec.grid === 'coarse'
      const opts = {
        width: Math.max(240, box.clientWidth || 560),
        height: HEIGHT,
        cursor: { sync: { key: 'hotpath' }, drag: { x: true, y: false } },
        scales: {
          x: { time: false, ...(range ? { range: () => range } : {}) },
          y: {
            range: (/** @type {any} */ u, /** @type {number | null} */ min, /** @type {number | null} */ max) => {
              if (spec.id === 'elu') return [0, 100]
              const top = Math.max(max ?? 0, spec.yMax ?? 0)
              return [0, top > 0 ? niceCeil(top * 1.08) : 1]
            }
          }
        },
        axes: [
          { stroke: '#666', grid: { stroke: '#eee', width: 1 }, ticks: { stroke: '#ddd', width: 1 }, values: (/** @type {any} */ u, /** @type {number[]} */ vals) => vals.map(v => trim(v) + ' s') },
          { stroke: '#666', size: axisSize, grid: { stroke: '#eee', width: 1 }, ticks: { stroke: '#ddd', width: 1 }, values: (/** @type {any} */ u, /** @type {number[]} */ vals) => vals.map(v => fmt(v, true)) }
        ],
        series: [
          { label: 'time', value: (/** @type {any} */ u, /** @type {number | null} */ v) => v === null || v === undefined ? '–' : trim(v) + ' s' },
          ...spec.series.map(s => ({
            label: s.label,
            stroke: s.color,
            width: 1.5,
            ...(s.dash ? { dash: s.dash } : {}),
            ...(s.fill ? { fill: s.fill } : {}),
            points: { show: few, size: 5 },
            value: (/** @type {any} */ u, /** @type {number | null} */ v) => v === null || v === undefined ? '–' : fmt(v, false)
          }))
        ],
        hooks: {
          drawClear: [(/** @type {any} */ u) => shadeWindow(u, win)],
          draw: [(/** @type {any} */ u) => { if (spec.threshold !== undefined) drawThreshold(u, spec.threshold) }]
        },
        legend: { live: true }
      }
      return new U(opts, [grid.x, ...spec.series.map(s => s.values)], box)
    }

    // ---- flame graph, and the culprits that lead to it
    const flameBox = document.getElementById('hr-flame')
    /** @type {any} */
    let flame = null
    /** @type {string | null} */
    let flameKind = null
    /** @param {'cpu' | 'heap'} kind */
    function showFlame (kind) {
      if (!flameBox || !data.flame || !data.flame[kind]) return null
      if (flameKind === kind) return flame
      if (flame) flame.destroy()
      flame = /** @type {any} */ (window).HotpathFlame.init(flameBox, data.flame[kind], { table: true, toolbar: true, tableRows: 25 })
      flameKind = kind
      for (const tab of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.hr-tab'))) {
        const on = tab.dataset.flame === kind
        tab.classList.toggle('hr-tab-on', on)
        tab.setAttribute('aria-selected', String(on))
      }
      return flame
    }
    for (const tab of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.hr-tab'))) {
      tab.addEventListener('click', () => showFlame(/** @type {'cpu' | 'heap'} */ (tab.dataset.flame)))
    }

    /**
     * Shows a culprit in the flame graph: the allocation graph for what allocates, else the CPU graph. Says so when
     * the culprit has no frame there (a listener is added cheaply: its cost is in running the listeners).
     * @param {number} i
     * @returns {boolean} whether the graph zoomed to it
     */
    function zoomToCulprit (i) {
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
      const graph = showFlame(kind) || showFlame(kind === 'cpu' ? 'heap' : 'cpu')
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
      if (c.measure === 'waits' && c.wait && c.wait.role === 'pool') return c.label + ' is blamed for the time requests wait for one of the connections of the pool it creates, which costs no CPU and does not show in a CPU profile.'
      if (c.measure === 'waits') return c.label + ' is blamed for the time requests wait on the call it makes, which costs no CPU and does not show in a CPU profile.'
      return c.label + ' is not in the flame graph (it took too few samples to be drawn).'
    }

    for (const li of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.hr-culprit.hr-linked'))) {
      const i = Number(li.dataset.culprit)
      li.addEventListener('click', () => zoomToCulprit(i))
      li.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault()
          zoomToCulprit(i)
        }
      })
    }

    // ---- raw profiles embedded on request (--report-profile): saved as files from the page
    for (const button of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.hr-save-profile'))) {
      button.addEventListener('click', () => {
        const source = document.getElementById('hotpath-raw-profiles')
        if (!source) return
        const entry = JSON.parse(source.textContent || '[]')[Number(button.dataset.profile)]
        if (!entry) return
        const url = URL.createObjectURL(new Blob([JSON.stringify(entry.profile)], { type: 'application/json' }))
        const a = document.createElement('a')
        a.href = url
        a.download = entry.name
        document.body.appendChild(a)
        a.click()
        a.remove()
        setTimeout(() => URL.revokeObjectURL(url), 10000)
      })
    }

    // ---- start
    drawCharts()
    if (data.flame) showFlame(data.flame.cpu ? 'cpu' : 'heap')
    let width = host.clientWidth
    let timer = 0
    window.addEventListener('resize', () => {
      clearTimeout(timer)
      timer = window.setTimeout(() => {
        if (host.clientWidth === width) return
        width = host.clientWidth
        for (const c of charts) c.plot.setSize({ width: Math.max(240, c.box.clientWidth), height: HEIGHT })
      }, 100)
    })
    if (performance.mark) performance.mark('hotpath-report-drawn')

    return {
      /** What each chart draws, for tests and for whoever reads the page from code. */
      charts () {
        return charts.map(c => ({
          id: c.id,
          run: c.run,
          title: c.spec.title,
          series: c.spec.series.map(s => ({ label: s.label, points: s.values.filter(v => v !== null).length }))
        }))
      },
      /**
       * The uPlot instance of the i-th chart (in the order of charts()).
       * @param {number} i
       */
      plot (i) { return charts[i] ? charts[i].plot : null },
      /** @param {string} view 'all', 'p:<pid>' or 't:<pid>-<threadId>' */
      select (view) {
        views[0] = view
        if (select) select.value = view
        drawCharts()
        return this.charts()
      },
      views () { return viewOptions(data.runs[0]).map(o => o[0]) },
      zoomToCulprit,
      /** @param {'cpu' | 'heap'} kind */
      showFlame,
      flame () { return flame }
    }
  }

  const ORDER = ['delay', 'elu', 'cpu', 'memory', 'gc', 'resources', 'requests', 'latency']

  /** @param {any} run */
  function defaultView (run) {
    const threads = run.series.threads
    return threads.length === 1 ? 't:' + threads[0].key : 'all'
  }

  /**
   * The views a run offers: all of it, each process with more than one thread, each thread.
   * @param {any} run
   * @returns {[string, string][]}
   */
  function viewOptions (run) {
    const threads = run.series.threads
    /** @type {[string, string][]} */
    const out = []
    if (threads.length > 1) out.push(['all', 'all processes and threads'])
    /** @type {number[]} */
    const pids = []
    for (const t of threads) if (!pids.includes(t.pid)) pids.push(t.pid)
    for (const pid of pids) {
      const own = threads.filter((/** @type {any} */ t) => t.pid === pid)
      if (own.length > 1 && threads.length > own.length) out.push(['p:' + pid, 'pid ' + pid + ': all ' + own.length + ' threads'])
      for (const t of own) out.push(['t:' + t.key, t.label + (t.serving ? ' · serving' : '')])
    }
    return out
  }

  /**
   * The charts of a view: every detail of one thread, or one line per thread (per process for process-wide figures).
   * @param {any} run
   * @param {string} view
   * @returns {ChartSpec[]}
   */
  function specsFor (run, view) {
    const s = run.series
    const all = s.threads
    const threads = view === 'all'
      ? all
      : view.startsWith('p:')
        ? all.filter((/** @type {any} */ t) => 'p:' + t.pid === view)
        : all.filter((/** @type {any} */ t) => 't:' + t.key === view)
    const th = run.thresholds || {}
    const mainOf = (/** @type {any} */ t) => all.find((/** @type {any} */ o) => o.pid === t.pid && o.threadId === 0) || null
    const per = (/** @type {number} */ step) => step < 1 ? 'per ' + trim(step) + ' s' : step === 1 ? 'per second' : 'per ' + step + ' s'
    const fineNote = per(s.fine.step)
    /** @type {ChartSpec[]} */
    const out = []
    if (threads.length === 1) {
      const t = threads[0]
      const m = mainOf(t)
      out.push({ id: 'delay', title: 'Event-loop delay', note: 'ms, highest ' + fineNote + (th.delay ? ' · blocked when p99 ≥ ' + th.delay + ' ms' : ''), unit: 'ms', grid: 'fine', threshold: th.delay, series: [line('p50', t.delay.p50), line('p99', t.delay.p99), line('max', t.delay.max)] })
      out.push({ id: 'elu', title: 'Event-loop utilisation', note: '% of the time the loop was busy' + (th.elu ? ' · busy from ' + th.elu + '%' : ''), unit: '%', grid: 'fine', threshold: th.elu, series: [{ label: 'utilisation', values: t.elu, color: PALETTE[0], fill: 'rgba(78,121,167,0.12)' }] })
      if (m && m.cpu) out.push({ id: 'cpu', title: 'CPU', note: '% of one core, whole process' + (t.threadId ? ' (all its threads)' : ''), unit: '%', grid: 'fine', series: [{ label: 'process CPU', values: m.cpu, color: PALETTE[1], fill: 'rgba(225,87,89,0.10)' }] })
      const mem = []
      if (m && m.rss) mem.push({ label: 'rss (process)', values: m.rss, color: FIXED.rss, dash: [4, 3] })
      mem.push(line('heapTotal', t.memory.heapTotal, 'heap total'), line('heapUsed', t.memory.heapUsed, 'heap used'), line('external', t.memory.external, 'external'))
      out.push({ id: 'memory', title: 'Memory', note: 'MB', unit: 'MB', grid: 'fine', series: mem })
      const kinds = Object.keys(t.gc)
      out.push({ id: 'gc', title: 'GC pauses', note: 'ms per second, by kind' + (th.gc ? ' · too much from ' + th.gc + ' ms/s' : ''), unit: 'ms/s', grid: 'coarse', threshold: th.gc, series: kinds.length > 0 ? kinds.map(k => line(k, t.gc[k])) : [{ label: 'no GC', values: t.served.map((/** @type {number | null} */ v) => v === null ? null : 0), color: FIXED.rss }] })
      const types = Object.keys(t.resources)
      if (types.length > 0) out.push({ id: 'resources', title: 'Active resources', note: 'by type (sockets, timers, file requests…)', unit: '', grid: 'coarse', series: types.map((k, i) => ({ label: k, values: t.resources[k], color: PALETTE[i % PALETTE.length] })) })
    } else if (threads.length > 1) {
      const color = (/** @type {number} */ i) => PALETTE[i % PALETTE.length]
      out.push({ id: 'delay', title: 'Event-loop delay', note: 'ms, highest ' + fineNote + ', per thread' + (th.delay ? ' · blocked when p99 ≥ ' + th.delay + ' ms' : ''), unit: 'ms', grid: 'fine', threshold: th.delay, series: threads.map((/** @type {any} */ t, /** @type {number} */ i) => ({ label: t.label, values: t.delay.max, color: color(i) })) })
      out.push({ id: 'elu', title: 'Event-loop utilisation', note: '% busy, per thread' + (th.elu ? ' · busy from ' + th.elu + '%' : ''), unit: '%', grid: 'fine', threshold: th.elu, series: threads.map((/** @type {any} */ t, /** @type {number} */ i) => ({ label: t.label, values: t.elu, color: color(i) })) })
      const mains = threads.filter((/** @type {any} */ t) => t.threadId === 0 && t.cpu)
      const procs = mains.length > 0 ? mains : unique(threads.map(mainOf).filter(Boolean))
      if (procs.length > 0) out.push({ id: 'cpu', title: 'CPU', note: '% of one core, per process', unit: '%', grid: 'fine', series: procs.map((/** @type {any} */ m) => ({ label: 'pid ' + m.pid, values: m.cpu, color: color(threads.indexOf(m) >= 0 ? threads.indexOf(m) : 0) })) })
      out.push({
        id: 'memory',
        title: 'Memory',
        note: 'MB: heap used per thread, rss per process (dashed)',
        unit: 'MB',
        grid: 'fine',
        series: [
          ...threads.map((/** @type {any} */ t, /** @type {number} */ i) => ({ label: 'heap ' + t.label, values: t.memory.heapUsed, color: color(i) })),
          ...procs.map((/** @type {any} */ m) => ({ label: 'rss pid ' + m.pid, values: m.rss, color: color(Math.max(0, threads.indexOf(m))), dash: [4, 3] }))
        ]
      })
      out.push({ id: 'gc', title: 'GC pauses', note: 'ms per second, per thread' + (th.gc ? ' · too much from ' + th.gc + ' ms/s' : ''), unit: 'ms/s', grid: 'coarse', threshold: th.gc, series: threads.map((/** @type {any} */ t, /** @type {number} */ i) => ({ label: t.label, values: sumSeries(Object.values(t.gc), t.served), color: color(i) })) })
      /** @type {Record<string, Values[]>} */
      const byType = {}
      for (const t of threads) for (const k of Object.keys(t.resources)) (byType[k] = byType[k] || []).push(t.resources[k])
      const types = Object.keys(byType)
      if (types.length > 0) out.push({ id: 'resources', title: 'Active resources', note: 'by type, all threads shown', unit: '', grid: 'coarse', series: types.map((k, i) => ({ label: k, values: sumSeries(byType[k], null), color: color(i) })) })
    }
    /** @type {SeriesSpec[]} */
    const req = []
    if (s.load) req.push({ label: 'answered (load generator)', values: s.load.rps, color: PALETTE[0], fill: 'rgba(78,121,167,0.10)' })
    threads.filter((/** @type {any} */ t) => t.serving).forEach((/** @type {any} */ t, /** @type {number} */ i) => {
      req.push({ label: 'finished by ' + t.label, values: t.served, color: PALETTE[(i + 2) % PALETTE.length], dash: s.load ? [4, 3] : undefined })
    })
    if (s.load && s.load.errors.some((/** @type {number | null} */ v) => v !== null && v > 0)) req.push({ label: 'errors', values: s.load.errors, color: FIXED.max })
    if (req.length > 0) out.push({ id: 'requests', title: 'Requests per second', note: s.load ? 'answered, as the load generator saw them; finished, as the server did' : 'finished by the server', unit: '/s', grid: 'coarse', series: req })
    if (s.load) out.push({ id: 'latency', title: 'Latency', note: 'ms per second, as the load generator measured it', unit: 'ms', grid: 'coarse', series: [line('p50', s.load.p50), line('p90', s.load.p90), line('p99', s.load.p99), line('max', s.load.max)] })
    return out
  }

  /**
   * @param {string} key
   * @param {Values} values
   * @param {string} [label]
   * @returns {SeriesSpec}
   */
  function line (key, values, label) {
    return { label: label || key, values, color: /** @type {any} */ (FIXED)[key] || PALETTE[0] }
  }

  /**
   * Adds series point by point; a point is null only where every series is.
   * @param {Values[]} list
   * @param {Values | null} shape where the thread was sampled, when the list is empty
   * @returns {Values}
   */
  function sumSeries (list, shape) {
    if (list.length === 0) return shape ? shape.map(v => v === null ? null : 0) : []
    return list[0].map((_, i) => {
      let sum = null
      for (const values of list) if (values[i] !== null && values[i] !== undefined) sum = (sum || 0) + /** @type {number} */ (values[i])
      return sum === null ? null : Math.round(sum * 100) / 100
    })
  }

  /** @param {any[]} list */
  function unique (list) {
    return list.filter((v, i) => list.indexOf(v) === i)
  }

  /** @param {ChartSpec} spec */
  function maxOf (spec) {
    let m = 0
    for (const s of spec.series) for (const v of s.values) if (v !== null && v > m) m = v
    return m
  }

  /**
   * The load window, shaded under everything else.
   * @param {any} u
   * @param {number[]} win
   */
  function shadeWindow (u, win) {
    const { left, top, width, height } = u.bbox
    const x0 = Math.max(left, u.valToPos(win[0], 'x', true))
    const x1 = Math.min(left + width, u.valToPos(win[1], 'x', true))
    if (!(x1 > x0)) return
    const ctx = u.ctx
    ctx.save()
    ctx.fillStyle = 'rgba(255, 193, 7, 0.13)'
    ctx.fillRect(x0, top, x1 - x0, height)
    ctx.fillStyle = 'rgba(150, 110, 0, 0.75)'
    ctx.font = Math.round(10 * (window.devicePixelRatio || 1)) + 'px system-ui, sans-serif'
    ctx.textBaseline = 'top'
    ctx.fillText('load', x0 + 4, top + 3)
    ctx.restore()
  }

  /**
   * A rule's threshold, dashed, when it is within the chart.
   * @param {any} u
   * @param {number} value
   */
  function drawThreshold (u, value) {
    const scale = u.scales.y
    if (!(value <= scale.max && value >= scale.min)) return
    const y = Math.round(u.valToPos(value, 'y', true)) + 0.5
    const { left, width } = u.bbox
    const ctx = u.ctx
    ctx.save()
    ctx.strokeStyle = 'rgba(200, 30, 30, 0.8)'
    ctx.lineWidth = window.devicePixelRatio || 1
    ctx.setLineDash([6, 4])
    ctx.beginPath()
    ctx.moveTo(left, y)
    ctx.lineTo(left + width, y)
    ctx.stroke()
    ctx.restore()
  }

  /**
   * Room for the longest tick label of a y axis.
   * @param {any} u
   * @param {string[] | null} values
   */
  function axisSize (u, values) {
    let longest = 0
    for (const v of values || []) if (v && v.length > longest) longest = v.length
    return Math.max(40, Math.ceil(longest * 7.5) + 20)
  }

  /** @param {number} v */
  function niceCeil (v) {
    const p = Math.pow(10, Math.floor(Math.log10(v)))
    for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p
    return 10 * p
  }

  /** @param {number} v */
  function trim (v) {
    return String(Math.round(v * 100) / 100)
  }

  /**
   * @param {string} unit
   * @returns {(v: number, axis: boolean) => string}
   */
  function formatter (unit) {
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

  /**
   * @param {string} tag
   * @param {string} cls
   * @param {string | undefined} text
   */
  function el (tag, cls, text) {
    const e = document.createElement(tag)
    if (cls) e.className = cls
    if (text !== undefined) e.textContent = text
    return e
  }

  ;/** @type {any} */ (window).HotpathReport = { init }
})()
