// What the wait tracer (wait-tracer.js) keeps of a traced request as it runs: the marks it sets on async resources, and
// the spans its waits are kept as until it is written (wait-records.js).

/** @typedef {import('./sockets.js').Trip} Trip */
/** @typedef {import('./wait-tracer.js').WaitSite} WaitSite */

// On async resources while the tracer is on. CTX: the traced request a resource was created in. SPAN: the wait a
// resource created in a traced request stands for. CAUSE: on a deferral (nextTick, setImmediate, queueMicrotask), the
// I/O callback it was scheduled from, so that what it resumes is charged to that I/O.
export const CTX = Symbol('hotpath.trace')
export const SPAN = Symbol('hotpath.span')
export const CAUSE = Symbol('hotpath.cause')
export const CAUSE_TRIPS = Symbol('hotpath.causeTrips')
// CLIENT: on a deferral whose first write was a client's own (no frame of the app on its stack, one package's): the
// endpoint it wrote to. A client that batches what a tick asked for (node-redis, ioredis's auto-pipelining) writes
// from a deferral the first request to ask scheduled, and what that deferral starts works for every request whose
// commands it carries.
export const CLIENT = Symbol('hotpath.client')

/** Deferrals: they continue the callback that scheduled them, and are no wait of their own. */
export const DEFERRALS = new Set(['TickObject', 'Immediate', 'Microtask'])

/**
 * @typedef {object} Span one wait of a traced request, from the moment it began to the callback that ended it
 * @property {string} kind the async resource's type: 'PROMISE' (an await or a then), 'Timeout', 'FSREQCALLBACK', …,
 *   or 'socket' for a round trip on a client socket written from the request
 * @property {number} t0 performance.now() when it began
 * @property {number} t1 when it ended (0 while pending)
 * @property {{ stack?: string } | null} stack captured where it began, formatted only if the span is kept
 * @property {Span | null} parent the span whose callback was running when this one began: its site stands in when this
 *   one's stack has no frame of the app (a driver's callback, a nextTick)
 * @property {unknown} cause what ended it: the I/O resource whose callback ran (a socket handle, a Timeout, an fs
 *   request, a worker's port…)
 * @property {Trip[] | null} trips the client-socket trips the ending read completed
 * @property {object | null} resource the span's own async resource (a Timeout, an fs request…), to describe it
 * @property {WaitSite | null} [site]
 * @property {boolean} [appFrame] its own stack holds a frame of the app (set with `site`)
 */

/**
 * @typedef {object} Trace a traced request
 * @property {number} id
 * @property {number} start performance.now() when its 'request' event ran
 * @property {number} end when its response finished (0 while in flight)
 * @property {Span[]} spans
 * @property {number} stacks taken so far for its async resources
 * @property {number} trips round trips it wrote so far (each with its stack)
 * @property {object} root the async resource its handler ran in
 * @property {boolean} abandoned dropped before it finished (the tracer stopped)
 * @property {boolean} [cut] its connection closed before the response was written: the client went away (a load that
 *   stops closes its connections), and what the handler went on to wait on is not in it
 * @property {() => void} [closed] its client went away while the handler still ran: ends it as it stands (cut)
 * @property {string} [route] `GET /orders/:id`: its method and route, as the request said them when it finished
 */
