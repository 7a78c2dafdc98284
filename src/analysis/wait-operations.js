// A traced request's spans grouped into its waits (operations): the spans one I/O ended, or the steps of one API
// call, are one wait; and the request's time shared among the waits in progress at each instant.

/** @typedef {import('./run-data.js').WaitData} WaitData */

/**
 * @typedef {object} Span
 * @property {number} start ms from the request's start
 * @property {number} dur
 * @property {number} site
 * @property {number} resource
 * @property {string} kind
 * @property {number} cause
 * @property {number} trip
 * @property {number} own
 * @property {number} parent
 * @property {number} ahead ms of its trip spent behind earlier replies (-1: no trip, or a run that did not say)
 */

/**
 * @typedef {object} Operation one wait of a request: the spans one I/O ended (the round trip, the await on it, the
 *   awaits of the callers above it), or the steps of one API call (fs.readFile's open, stat, read, close)
 * @property {number} start
 * @property {number} end
 * @property {number} site where it began in the app (the innermost span that knows)
 * @property {number} resource
 * @property {number} trip round-trip ms, -1 when not ended by a client socket
 * @property {number} own
 * @property {number} ahead ms of the trip spent behind replies to earlier operations at the backend (-1: not known)
 * @property {Set<number>} enclosing sites of the awaits above it (its callers), innermost first
 * @property {boolean} behind it waited for other requests to finish, not for I/O of its own: another request's I/O
 *   ended it, and the request then made its own round trip elsewhere (a semaphore, a queue of the app's)
 * @property {boolean} io spans of the I/O itself were kept (a round trip, a timer, a file read), not only awaits on it
 */

/**
 * Whether a wait's trip was written by another context: a pool's queued query (0), or a batch another request's tick
 * sent with this request's command in it (2).
 * @param {number} own a span's or operation's `own`
 */
export function writtenByAnother (own) {
  return own === 0 || own === 2
}

/**
 * Groups a traced request's spans into its waits.
 * @param {import('../sampling/wait-tracer.js').WaitRecord} trace
 * @param {WaitData} waits
 * @returns {Operation[]}
 */
export function operations (trace, waits) {
  /** @type {Span[]} */
  const spans = trace.spans.map(a => ({ start: a[0], dur: a[1], site: a[2], resource: a[3], kind: waits.kinds.get(a[4]) ?? '', cause: a[5], trip: a[6], own: a[7], parent: a[8], ahead: a[9] ?? -1 }))
  /** @type {Set<Span>} spans some other span began in */
  const parents = new Set()
  for (const s of spans) if (s.parent >= 0 && spans[s.parent] !== undefined) parents.add(spans[s.parent])
  // The steps of one call (fs.readFile's open, then its stat in the open's callback…) are one wait: a native span
  // begun in another's callback at the same site continues it.
  /** @type {number[]} */
  const key = spans.map(s => s.cause)
  /** @type {Map<number, number>} */
  const keyOfCause = new Map()
  spans.forEach((s, i) => {
    const p = s.parent >= 0 ? spans[s.parent] : undefined
    if (p !== undefined && isNative(s) && isNative(p) && p.site === s.site) key[i] = key[s.parent]
    if (isNative(s)) keyOfCause.set(s.cause, key[i])
  })
  // An await ended by one of those steps waited for the whole call.
  spans.forEach((s, i) => { if (!isNative(s)) key[i] = keyOfCause.get(s.cause) ?? key[i] })

  /** @type {Operation[]} */
  const out = []
  for (const [, members] of groupBy(spans.map((s, i) => ({ s, k: key[i] })), m => m.k)) {
    const all = members.map(m => m.s).sort((a, b) => a.start - b.start)
    // Its extent is that of the I/O itself when the request made it (the round trip, the call's steps), else that of
    // the await on it (a query a pool wrote later, a worker's reply): the one begun last, as the awaits above only
    // wrap it — the handler's await of a function that loops over queries ends with the last query and began with the
    // first, and as the extent it made an N+1 read as queries at once.
    const physical = all.filter(isNative)
    // A promise made after the I/O had completed did not wait for it: it was made and settled within the callback that
    // the I/O ran (the code after an await, up to its next await). Counted in, it lent the I/O the site of that code —
    // a session's SELECT, read in a middleware before the route ran, was charged to the route's res.json().
    const done = physical.length > 0 ? Math.max(...physical.map(s => s.start + s.dur)) : Infinity
    const list = all.filter(s => isNative(s) || s.start < done)
    // A timer that fired without anything of the request going on from it (no await it settled, nothing begun in its
    // callback) held nothing up: a library's timeout or housekeeping, begun in the request and left to run.
    if (list.length === 1 && list[0].kind === 'Timeout' && !parents.has(list[0])) continue
    const basis = physical.length > 0 ? physical : [list[list.length - 1]]
    const start = Math.min(...basis.map(s => s.start))
    const end = Math.max(...basis.map(s => s.start + s.dur))
    // Where it began in the app: at the I/O itself, else at the await begun last — the awaits of its callers began
    // earlier (the handler's await of a loop of queries ends with the last one, which read as waited at the handler).
    // A site in the packages only (no frame of the app on any stack of the wait) is the last resort, and then the one
    // whose stack reached furthest out: the wait's first await was begun where the middleware called the package.
    const isApp = (/** @type {Span} */ s) => s.site >= 0 && waits.sites.get(s.site)?.packages === undefined
    const sited = physical.find(isApp) ?? list.findLast(isApp) ?? outermostPackageSite(list, waits)
    const site = sited?.site ?? -1
    const named = list.find(s => !isVague(waits.resources.get(s.resource))) ?? list[0]
    const tripped = list.find(s => s.trip >= 0)
    // The awaits above it at other lines: its callers (the loop of an N+1 among them).
    const at = lineOf(waits, site)
    /** @type {Set<number>} */
    const enclosing = new Set()
    for (const s of list) if (isApp(s) && !isNative(s) && lineOf(waits, s.site) !== at) enclosing.add(s.site)
    // A request whose own await waited longer than the trip that answered it queued before the trip was written. The
    // await is the one on the call itself, begun last: the awaits of its callers end with it too (the handler's await
    // of a function that loops over queries ends with the last query), and began with the first.
    /** @type {Span | undefined} */
    let awaited
    for (const s of list) if (!isNative(s) && s.trip >= 0 && (awaited === undefined || s.start > awaited.start)) awaited = s
    // A trip another context wrote (a pool's queued query, a batch another request's tick sent): the request waited
    // from its await, before the trip began.
    const later = tripped !== undefined && writtenByAnother(tripped.own) ? awaited : undefined
    out.push({
      start: later !== undefined ? Math.min(start, later.start) : start,
      end: Math.max(end, later !== undefined ? later.start + later.dur : end),
      site,
      resource: named.resource,
      trip: tripped?.trip ?? -1,
      own: tripped?.own ?? -1,
      ahead: tripped?.ahead ?? -1,
      enclosing,
      behind: false,
      io: physical.length > 0
    })
  }
  return joinSteps(settleQueues(dropEnclosing(out), waits), waits)
}

/**
 * An await that was pending while the request waited on other I/O of its own is a caller's await (a framework's
 * promise for the whole route, an async function's around its queries), not a wait of its own: ended by the last of
 * them, it made a wait as long as the request, which read as a queue before that last query's trip. When the spans of
 * the I/O it wraps were kept, it joins their wait; when they were not (a request with more spans than are kept), it
 * is dropped here.
 * @param {Operation[]} ops
 * @returns {Operation[]}
 */
function dropEnclosing (ops) {
  return ops.filter(op => op.io || !ops.some(o => o !== op && o.io && o.start >= op.start && o.start + (o.end - o.start) <= op.end))
}

/** Kinds of wait whose calls take several steps, each begun as the last ended (fs/promises' open, stat, read, close). */
const STEPPED = new Set(['fs', 'other'])

/**
 * The steps of one call at one line, each begun as the last ended, are one wait: fs/promises' readFile opens, reads
 * and closes a file handle in turns of its own, and read as five waits a request at its line.
 * @param {Operation[]} ops
 * @param {WaitData} waits
 * @returns {Operation[]}
 */
function joinSteps (ops, waits) {
  const sorted = [...ops].sort((a, b) => a.start - b.start)
  /** @type {Operation[]} */
  const out = []
  for (const op of sorted) {
    const last = out.findLast(o => lineOf(waits, o.site) === lineOf(waits, op.site))
    const stepped = (/** @type {Operation} */ o) => o.trip < 0 && !o.behind && STEPPED.has(waits.resources.get(o.resource)?.[0] ?? '')
    if (last !== undefined && op.site >= 0 && stepped(last) && stepped(op) && op.start - last.end <= 0.5) {
      last.end = Math.max(last.end, op.end)
      continue
    }
    out.push(op)
  }
  return out
}

/** ms between a wait another request's I/O ended and the round trip the request then wrote itself, at most, for the
 * two to be one: the code between them runs in the same turn of the loop. */
const FOLLOWS_MS = 2
/** …and at the same line, when nothing else of the request began between them: a loop starved of CPU (a busy
 * machine) runs that code late. */
const FOLLOWS_AT_LINE_MS = 50

/**
 * A wait that another request's I/O ended, followed at once by a round trip the request wrote itself, waited for its
 * turn rather than for that I/O: a connection a pool handed over as the other request released it, or a slot of a
 * semaphore. At the same line (the pool's call, `await pool.query()`) the two are one wait: the queue, then the trip
 * — not two round trips. At another line (an `await gate.acquire()`), the first is a queue of the app's own, behind
 * other requests, and not a round trip at all.
 * @param {Operation[]} ops
 * @param {WaitData} waits
 * @returns {Operation[]}
 */
function settleQueues (ops, waits) {
  const sorted = [...ops].sort((a, b) => a.start - b.start)
  const began = new Map(sorted.map(o => [o, o.start]))
  /** @type {Set<Operation>} */
  const merged = new Set()
  for (const q of sorted) {
    if (q.own !== 0) continue
    const line = lineOf(waits, q.site)
    // The first wait of the request to begin after this one ended.
    const next = sorted.find(o => o !== q && /** @type {number} */ (began.get(o)) >= q.end - FOLLOWS_MS / 10)
    if (next === undefined || next.own !== 1) continue
    const gap = /** @type {number} */ (began.get(next)) - q.end
    if (lineOf(waits, next.site) === line && gap <= FOLLOWS_AT_LINE_MS) {
      next.start = Math.min(next.start, q.start)
      merged.add(q)
    } else if (gap <= FOLLOWS_MS) {
      q.behind = true
      q.trip = -1
      q.own = -1
      q.ahead = -1
    }
  }
  return ops.filter(o => !merged.has(o))
}

/**
 * Of a wait's spans sited in packages only, the one whose stack went through the most packages (the first begun, of
 * those): the await begun in the middleware, not the driver's write below it.
 * @param {Span[]} list
 * @param {WaitData} waits
 * @returns {Span | undefined}
 */
function outermostPackageSite (list, waits) {
  let best
  let depth = 0
  for (const s of list) {
    const d = s.site >= 0 ? waits.sites.get(s.site)?.packages?.length ?? 0 : 0
    if (d > depth) {
      best = s
      depth = d
    }
  }
  return best
}

/**
 * @param {WaitData} waits
 * @param {number} site
 */
function lineOf (waits, site) {
  const s = waits.sites.get(site)
  return s === undefined ? '' : `${s.file}:${s.line}`
}

/** @param {Span} s a span that stands for I/O the request made itself (not an await or a then) */
const isNative = (s) => s.kind !== 'PROMISE'

/** @param {string[] | undefined} r */
const isVague = (r) => r === undefined || r[0] === 'unknown' || r[0] === 'other'

/**
 * Each instant of a request's time goes to the waits in progress then, shared equally between those that run at
 * once: what the request's time went to, without counting parallel waits twice.
 * @param {Operation[]} ops
 * @param {number} ms the request's time on the server
 * @returns {Map<Operation, number>} ms per wait
 */
export function attribute (ops, ms) {
  /** @type {{ at: number, op: Operation, open: boolean }[]} */
  const edges = []
  for (const op of ops) {
    const a = Math.max(0, op.start)
    const b = Math.min(ms, op.end)
    if (b <= a) continue
    edges.push({ at: a, op, open: true }, { at: b, op, open: false })
  }
  edges.sort((x, y) => x.at - y.at || Number(x.open) - Number(y.open))
  /** @type {Map<Operation, number>} */
  const out = new Map()
  /** @type {Set<Operation>} */
  const active = new Set()
  let last = 0
  for (const e of edges) {
    if (active.size > 0 && e.at > last) {
      const each = (e.at - last) / active.size
      for (const op of active) out.set(op, (out.get(op) ?? 0) + each)
    }
    last = e.at
    if (e.open) active.add(e.op)
    else active.delete(e.op)
  }
  return out
}

/**
 * @template T, K
 * @param {T[]} list
 * @param {(x: T) => K} key
 * @returns {Map<K, T[]>}
 */
export function groupBy (list, key) {
  /** @type {Map<K, T[]>} */
  const out = new Map()
  for (const x of list) {
    const k = key(x)
    const g = out.get(k)
    if (g) g.push(x)
    else out.set(k, [x])
  }
  return out
}
