// Where the serving threads' traced requests waited, as facts. The same thing at two other layers: the tracer that
// records the waits in the target (src/sampling/wait-tracer.js), and their words (src/report/words/waits.js).
import { attribute, groupBy, operations } from './wait-operations.js'
import { addToAcc, newAcc, summarize } from './wait-site-totals.js'
import { THRESHOLDS } from './thresholds.js'

export { resourceName } from './wait-site-totals.js'

/** @typedef {import('./run-data.js').ThreadRecord} ThreadRecord */
/** @typedef {import('./run-data.js').WaitData} WaitData */

/**
 * @typedef {object} WaitResource what a wait waited on
 * @property {string} type 'postgres', 'redis', 'mysql', 'mongodb', 'http', 'tcp' (a socket of an unknown protocol),
 *   'timer', 'fs', 'dns', 'connect', 'child process', 'worker', 'thread pool', 'client' (the request's own body), …
 * @property {string} op the operation: a folded query, a command, `setTimeout 100 ms`, `fs.readFile`
 * @property {string} target where: `127.0.0.1:5432`, a host name
 * @property {string} name all of it in a few words: `postgres SELECT … FROM sessions WHERE token = $1`
 */

/**
 * @typedef {object} WaitSignal one line of the app where traced requests waited, and on what
 * @property {{ function: string, file: string, line: number, column: number, api: string | null, callers: { function: string, file: string, line: number }[], packages: import('./wait-packages.js').PackagePath | null }} site
 *   where the wait began: a line of the app; or, for a wait made with no frame of the app on its stack, the entry of
 *   the first package the app put on the request's path, which `packages` says where it put
 * @property {WaitResource} resource the most frequent thing waited on there
 * @property {number} share of the traced requests' time on the server spent waiting here (each instant of a request
 *   goes to one wait: the innermost, or shared between waits that run at once)
 * @property {number} perRequest waits here per traced request (round trips, for a socket)
 * @property {number} msPerWait mean time from where the wait began to the callback that ended it
 * @property {number | null} msPerTrip mean duration of the round trips on the wire, for waits ended by a client
 *   socket's reply: shorter than msPerWait when the request queued before its trip was written
 * @property {number} requests traced requests that waited here
 * @property {{ perRequest: number, loop: { function: string, file: string, line: number } | null, savedMs: number } | null} sequential
 *   when a request waits here several times one after another (N+1): how many times per request, the app line that
 *   loops (the caller that awaits each), and the ms per request that one batched round trip would save
 * @property {{ perRequest: number } | null} parallel when a request's waits here run at once, how many
 * @property {{ msPerWait: number, others: number } | null} queue when requests wait here longer than their round trip
 *   takes, because their trip was written later (a pool that queued it wrote it when a connection came free): the
 *   mean wait before the trip, and the share of the waits that queued
 * @property {{ endpoint: string, connections: number, busy: number, class: string | null, site: { function: string, file: string, line: number } | null, limit: { key: string, value: number } | null } | null} pool
 *   for a queue, the pool of connections to the endpoint: how many were open and busy at most, and where the app
 *   created the pool with its limit (when it was created while the server started)
 * @property {{ queuedMs: number, serviceMs: number } | null} backend of each round trip, the ms spent behind replies to
 *   earlier operations — on its own connection, or at a backend that runs one operation at a time (Redis) — and what
 *   is left, the operation's own time there; when the queueing reaches a millisecond
 * @property {{ perRequest: number, msPerWait: number } | null} behind when requests wait here for other requests to
 *   finish rather than for I/O of their own (another request's I/O ends the wait, and the request then makes its own
 *   round trip elsewhere): a limit of the app's own on how many go on at once — a semaphore, a queue
 * @property {number[]} [lines] for round trips of one kind made one after another from several lines of one function
 *   (a sequence, not an N+1 from a loop): those lines; the site is the first of them. For a handler whose waits at
 *   several lines add up (see `breakdown`): the handler's lines they went through
 * @property {WaitBreakdown[]} [breakdown] for a handler whose waits at several lines, none told on its own, add up to
 *   a real part of the requests' time: each line of the handler, with its part
 * @property {number} pid
 * @property {number} threadId
 */

/**
 * @typedef {object} WaitBreakdown one line of a handler whose waits add up, and what waited through it
 * @property {number} line the handler's line (an await of its own, or the call of a helper that awaits)
 * @property {number} share of the traced requests' time on the server
 * @property {number} perRequest waits per request through it
 * @property {{ file: string, line: number }[]} sites the lines of the helpers it called where the waits began (none when
 *   they began at the handler's line itself)
 */

/**
 * @typedef {object} WaitSignals
 * @property {number} traced requests traced in the serving threads during the window
 * @property {number} meanMs their mean time on the server
 * @property {number} attributed share of their time spent in waits with a known site
 * @property {number} outside the part of `attributed` spent waiting on something outside the process: not on its own
 *   worker threads, which are busy computing for it rather than waiting
 * @property {WaitSignal[]} sites most time first
 */

/**
 * Where the serving threads' traced requests waited: for each app line, its share of their time on the server, on
 * what, how many times per request, whether one after another (N+1) or queued for a pool.
 * @param {ThreadRecord[]} threads the serving threads
 * @param {number} start window start, epoch ms
 * @param {number} end window end
 * @param {string} fallbackCwd
 * @param {{ byHandler?: boolean }} [o] `byHandler`: a handler whose waits at several lines add up is told as one (the
 *   default), else each line on its own
 * @returns {WaitSignals}
 */
export function computeWaits (threads, start, end, fallbackCwd, { byHandler = true } = {}) {
  /** @type {Map<string, import('./wait-site-totals.js').Acc>} */
  const bySite = new Map()
  /** @type {Map<string, { acc: import('./wait-site-totals.js').Acc, lines: Set<number> }>} */
  const bySequence = new Map()
  let traced = 0
  let totalMs = 0
  let attributed = 0
  let ownThreads = 0
  // A request whose client went away before its response (a load that stops closes its connections) stopped being
  // followed there: a listing of 26 queries counted 3. Its waits are counted only when no request was followed to
  // its end — a server that never answers in time has nothing else to show.
  const inWindow = (/** @type {import('../sampling/wait-tracer.js').WaitRecord} */ r) => r.time >= start && r.time <= end
  const whole = threads.some(t => t.waits.traces.some(r => inWindow(r) && r.cut !== 1))
  for (const t of threads) {
    const cwd = String(t.hello.cwd ?? fallbackCwd)
    for (const trace of t.waits.traces) {
      if (!inWindow(trace) || (whole && trace.cut === 1)) continue
      traced++
      totalMs += trace.ms
      const ops = operations(trace, t.waits)
      const shares = attribute(ops, trace.ms)
      // One line can be several sites (the await on a pool's query, and the query the pool made): a request's waits
      // there are taken together, or an N+1 of six reads as one of five and a single wait.
      const lineOf = (/** @type {import('./wait-operations.js').Operation} */ o) => {
        const info = o.site >= 0 ? t.waits.sites.get(o.site) : undefined
        return info === undefined ? '' : `${info.file}:${info.line}:${info.function}`
      }
      for (const [key, list] of groupBy(ops, lineOf)) {
        if (key === '') continue
        const info = /** @type {import('../sampling/wait-tracer.js').WaitSite} */ (t.waits.sites.get(list[0].site))
        let acc = bySite.get(key)
        if (acc === undefined) {
          acc = newAcc(info, t, cwd)
          bySite.set(key, acc)
        }
        const ms = list.reduce((a, o) => a + (shares.get(o) ?? 0), 0)
        attributed += ms
        for (const o of list) {
          if (t.waits.resources.get(o.resource)?.[0] === 'worker') ownThreads += shares.get(o) ?? 0
        }
        addToAcc(acc, list, ms, t.waits)
      }
      addSequences(bySequence, ops, shares, t, cwd)
    }
  }
  const sequences = [...bySequence.values()]
    .filter(q => q.acc.sequentialRequests >= Math.max(1, q.acc.requests / 2) && q.acc.requests >= traced / 2)
    .map(q => ({ ...summarize(q.acc, traced, totalMs, threads), lines: [...q.lines].sort((a, b) => a - b) }))
    .filter(w => w.sequential !== null)
    .map(w => ({ ...w, sequential: w.sequential && { ...w.sequential, loop: null } }))
  // A line that is part of a sequence is told with it.
  const inSequence = (/** @type {WaitSignal} */ w) => sequences.some(q => q.site.file === w.site.file && q.site.function === w.site.function && q.resource.name === w.resource.name && q.lines.includes(w.site.line))
  const sites = [...bySite.values()]
    .map(acc => summarize(acc, traced, totalMs, threads))
    .filter(w => !inSequence(w))
    .concat(sequences)
    .sort((a, b) => b.share - a.share)
  const grouped = byHandler ? handlers(sites) : { groups: [], absorbed: new Set() }
  const told = sites.filter(w => !grouped.absorbed.has(w)).concat(grouped.groups).sort((a, b) => b.share - a.share)
  return {
    traced,
    meanMs: traced > 0 ? totalMs / traced : 0,
    attributed: totalMs > 0 ? attributed / totalMs : 0,
    outside: totalMs > 0 ? (attributed - ownThreads) / totalMs : 0,
    sites: told
  }
}

/**
 * Round trips of one kind that a request makes one after another from several lines of one function (six lines that
 * each send the same SORT): each line takes a small part of the request, together most of it. They are one pattern,
 * as an N+1 from a loop is.
 * @param {Map<string, { acc: import('./wait-site-totals.js').Acc, lines: Set<number> }>} bySequence
 * @param {import('./wait-operations.js').Operation[]} ops one traced request's waits
 * @param {Map<import('./wait-operations.js').Operation, number>} shares ms of its time each wait took
 * @param {ThreadRecord} t
 * @param {string} cwd
 */
function addSequences (bySequence, ops, shares, t, cwd) {
  const groups = groupBy(ops.filter(o => o.site >= 0 && o.trip >= 0 && !o.behind), (o) => {
    const info = /** @type {import('../sampling/wait-tracer.js').WaitSite} */ (t.waits.sites.get(o.site))
    return info.packages !== undefined ? '' : `${info.file}|${info.function}|${(t.waits.resources.get(o.resource) ?? []).join('\u0000')}`
  })
  for (const [key, list] of groups) {
    if (key === '' || list.length < THRESHOLDS.sequentialWaits) continue
    const lines = new Set(list.map(o => t.waits.sites.get(o.site)?.line ?? 0))
    if (lines.size < 2) continue
    let q = bySequence.get(key)
    if (q === undefined) {
      const first = list.reduce((a, b) => ((t.waits.sites.get(a.site)?.line ?? 0) <= (t.waits.sites.get(b.site)?.line ?? 0) ? a : b))
      q = { acc: newAcc(/** @type {import('../sampling/wait-tracer.js').WaitSite} */ (t.waits.sites.get(first.site)), t, cwd), lines: new Set() }
      bySequence.set(key, q)
    }
    for (const l of lines) q.lines.add(l)
    addToAcc(q.acc, list, list.reduce((a, o) => a + (shares.get(o) ?? 0), 0), t.waits)
  }
}

/**
 * The handlers whose requests wait at several lines, none of which is told on its own (four queries of 15% each; an
 * N+1 of six queries an item, each from its own line of the handler or of the helpers it awaits): together they are
 * a real part of the requests' time, and the handler is named, with the lines of its own the waits went through and
 * each one's part. A wait belongs to the outermost function of the app on its stack (its callers, async ones
 * included): the loop of an N+1 over helpers is in the handler, not in any one helper. The lines of an N+1 belong
 * whatever their part, as one of them reached 20% or not with the machine's load (each wait of a loop starved of
 * CPU lasts longer); another line told on its own (a slow query of 48%) stays out.
 * @param {WaitSignal[]} sites
 * @returns {{ groups: WaitSignal[], absorbed: Set<WaitSignal> }} the handlers, and the lines now told in them
 */
function handlers (sites) {
  /** @type {Map<string, { handler: { function: string, file: string }, members: { w: WaitSignal, line: number }[] }>} */
  const byHandler = new Map()
  for (const w of sites) {
    if (w.site.packages?.outsideApp || w.lines || (w.share >= THRESHOLDS.waitShare && w.sequential === null)) continue
    const outer = w.site.callers.at(-1)
    const handler = outer ?? w.site
    const key = `${w.pid}-${w.threadId}|${handler.file}|${handler.function}`
    let g = byHandler.get(key)
    if (g === undefined) {
      g = { handler: { function: handler.function, file: handler.file }, members: [] }
      byHandler.set(key, g)
    }
    g.members.push({ w, line: handler.line })
  }
  /** @type {WaitSignal[]} */
  const out = []
  /** @type {Set<WaitSignal>} */
  const absorbed = new Set()
  for (const g of byHandler.values()) {
    const { handler } = g
    const members = withoutLoneLoops(g.members)
    const list = members.map(m => m.w)
    const share = list.reduce((a, w) => a + w.share, 0)
    if (list.length < 2 || share < THRESHOLDS.waitShare) continue
    for (const w of list) absorbed.add(w)
    /** @type {Map<number, { line: number, share: number, perRequest: number, sites: { file: string, line: number }[] }>} */
    const byLine = new Map()
    for (const { w, line } of members) {
      const b = byLine.get(line) ?? { line, share: 0, perRequest: 0, sites: [] }
      b.share += w.share
      if (w.behind === null) b.perRequest += w.perRequest
      if (w.site.file !== handler.file || w.site.line !== line) b.sites.push({ file: w.site.file, line: w.site.line })
      byLine.set(line, b)
    }
    const breakdown = [...byLine.values()].sort((a, b) => a.line - b.line)
    for (const b of breakdown) b.sites.sort((x, y) => x.file.localeCompare(y.file) || x.line - y.line)
    const first = list.find(w => w.site.file === handler.file && w.site.function === handler.function) ?? list[0]
    // Timers are told as one kind, whatever their delays.
    // Waits for other requests to finish (a pool's queue another request's reply ended) are part of the time, not of
    // the count: at -c 10 they made a listing of 122 queries a request read 182.
    const own = list.filter(w => w.behind === null)
    const counted = own.length > 0 ? own : list
    const names = [...new Set([...counted].sort((a, b) => b.share - a.share).map(w => w.resource.type === 'timer' ? 'timers' : w.resource.name))]
    const waits = counted.reduce((a, w) => a + w.perRequest, 0)
    const trips = counted.every(w => w.msPerTrip !== null)
    // Each line one after another (an N+1 spread over the lines of a loop's body): the whole is, too — from the loop
    // in the handler that holds them, the first one above its lines.
    const loops = list.map(w => w.sequential?.loop).filter(l => l != null && l.file === handler.file && l.line <= breakdown[0].line)
    // The same query from the same line of the handler can be two sites (the first call's stack ran through the helper
    // that makes it, the later ones' did not): one of them one after another makes both so.
    const inOrder = new Set(members.filter(m => m.w.sequential !== null).map(m => `${m.line}|${m.w.resource.name}`))
    const sequential = members.every(m => !counted.includes(m.w) || m.w.sequential !== null || inOrder.has(`${m.line}|${m.w.resource.name}`))
      ? { perRequest: waits, loop: loops.sort((a, b) => (b?.line ?? 0) - (a?.line ?? 0))[0] ?? null, savedMs: counted.reduce((a, w) => a + (w.sequential?.savedMs ?? 0), 0) }
      : null
    out.push({
      ...first,
      site: { ...first.site, function: handler.function, file: handler.file, line: breakdown[0].line, callers: first.site.file === handler.file ? first.site.callers : [] },
      // One query at every line is that query's, to be batched as such.
      resource: names.length === 1 && counted[0].resource.type !== 'timer' ? counted[0].resource : { type: 'several', op: '', target: '', name: names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '') },
      share,
      perRequest: waits,
      msPerWait: waits > 0 ? counted.reduce((a, w) => a + w.perRequest * w.msPerWait, 0) / waits : 0,
      msPerTrip: trips && waits > 0 ? counted.reduce((a, w) => a + w.perRequest * /** @type {number} */ (w.msPerTrip), 0) / waits : null,
      requests: Math.max(...list.map(w => w.requests)),
      sequential,
      parallel: null,
      queue: null,
      pool: null,
      backend: null,
      behind: null,
      lines: breakdown.map(b => b.line),
      breakdown
    })
  }
  return { groups: out, absorbed }
}

/**
 * A handler's waits without its N+1s that are culprits on their own, when the rest are waits of other kinds made once
 * (a session read, the page's query): grouped with those, the handler reads as a sequence of its lines, and that one
 * line loops — fifteen GETs of a price a request, 87% of the time, beside one HGETALL and one SELECT — goes unsaid.
 * (An N+1 whose loop body spans lines keeps them together: each of them is one after another.) The same query at the
 * same line of the handler, from another site, goes with its N+1.
 * @template {{ w: WaitSignal, line: number }} M
 * @param {M[]} members
 * @returns {M[]}
 */
function withoutLoneLoops (members) {
  const loops = members.filter(m => m.w.sequential !== null && m.w.share >= THRESHOLDS.waitShare)
  if (loops.length === 0) return members
  const rest = members.filter(m => !loops.some(l => l === m || (l.line === m.line && l.w.resource.name === m.w.resource.name)))
  return rest.some(m => m.w.sequential === null && m.w.behind === null) ? rest : members
}
