// Judging a load: whether it measured what was asked, and why not, in one line a person reads first.
import { STATUS_CODES } from 'node:http'
import { NOT_HTTP } from './not-http.js'

/** @typedef {import('./result.js').LoadResult} LoadResult */
/** @typedef {import('./result.js').LoadFailure} LoadFailure */

/** Statuses that answer a request as asked: 2xx, and 304 (unchanged: the answer to a conditional request). */
const answered = (/** @type {string} */ code) => code[0] === '2' || code === '304'

/**
 * Why a load did not measure what was asked, or null when it did. Pure, so every command that runs or reads a load
 * judges it alike. The load failed when:
 * - no connection was ever made (`no-connection`), no request got an HTTP response because what came back was not
 *   HTTP (`no-http`), or nothing came back at all (`no-response`);
 * - or more than half of the requests that ended did not get a 2xx (or 304) response: other statuses (`non-2xx`) or
 *   errors — timeouts, resets, refused connections, responses that were not HTTP, each counted once (`errors`),
 *   whichever there were more of.
 * A load stopped early (Ctrl-C, SIGTERM, a target that exited) is judged on the requests that ended before it
 * stopped, however few: 404 for each of them is a failed load whenever it ended. Only one that ended none (stopped
 * before any answer could come) is not judged: that it got none says nothing of the server.
 * @param {LoadResult} result
 * @param {{ interrupted?: boolean }} [how] whether the load was stopped early (default: as `result.interrupted` says)
 * @returns {LoadFailure | null}
 */
export function loadFailure (result, how = {}) {
  const completed = result.requests.total
  const errors = result.errors
  if ((how.interrupted ?? result.interrupted === true) && completed + errors === 0) return null
  const statuses = Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => ({ code, count: s.count }))
  const badResponses = statuses.filter(s => !answered(s.code)).reduce((a, s) => a + s.count, 0)
  const bad = badResponses + errors
  const total = completed + errors
  const where = `the server at ${result.socketPath ?? hostOf(result.url)}`
  const kinds = Object.entries(result.hotpath.errorKinds ?? {}).sort((a, b) => b[1] - a[1])
  const failure = (/** @type {LoadFailure['reason']} */ reason, /** @type {string} */ detail) => ({ reason, detail, bad, total })
  if (completed === 0) {
    const notHttp = kinds.filter(([kind]) => NOT_HTTP.has(kind))
    if (result.requests.sent === 0) {
      return failure('no-connection', `${where} accepted no connection${errors > 0 ? ` (${listKinds(kinds)})` : ` in ${result.duration.toFixed(1)} s`}`)
    }
    if (notHttp.length > 0) {
      const n = notHttp.reduce((a, [, c]) => a + c, 0)
      return failure('no-http', `${where} spoke no HTTP: ${count(n)} ${n === 1 ? 'response was' : 'responses were'} not HTTP (${listKinds(notHttp)})` +
        (errors > n ? `, and ${count(errors - n)} requests failed otherwise` : ''))
    }
    const sent = result.requests.sent
    return failure('no-response', `${where} answered none of the ${count(sent)} requests sent in ${result.duration.toFixed(1)} s` +
      (errors > 0 ? ` (${listKinds(kinds)})` : ` (they were still waiting when the run ended; -t allows ${result.hotpath.options.timeout} s)`))
  }
  if (bad * 2 <= total) return null
  const failing = statuses.filter(s => !answered(s.code)).sort((a, b) => b.count - a.count)
  const responsesPart = failing.length === 1
    ? `${count(badResponses)} of ${count(completed)} responses were ${statusName(failing[0].code)}`
    : `${count(badResponses)} of ${count(completed)} responses were not 2xx (${failing.slice(0, 3).map(s => `${statusName(s.code)} ×${count(s.count)}`).join(', ')}${failing.length > 3 ? ', …' : ''})`
  const errorsPart = `${count(errors)} of ${count(total)} requests ended in errors (${listKinds(kinds)})`
  if (badResponses >= errors) {
    return failure('non-2xx', `the load failed: ${responsesPart}${errors > 0 ? `; ${count(errors)} more requests ended in errors (${listKinds(kinds)})` : ''}`)
  }
  return failure('errors', `the load failed: ${errorsPart}${badResponses > 0 ? `; ${responsesPart}` : ''}`)
}

/** @param {string} url */
function hostOf (url) {
  try {
    return new URL(url).host
  } catch {
    return url
  }
}

/** @param {string} code */
function statusName (code) {
  const name = STATUS_CODES[code]
  return name ? `${code} ${name}` : code
}

/** @param {[string, number][]} kinds sorted, most first */
function listKinds (kinds) {
  return kinds.slice(0, 3).map(([kind, n]) => `${kind} ×${count(n)}`).join(', ') + (kinds.length > 3 ? ', …' : '')
}

/** @param {number} n */
const count = (n) => Math.round(n).toLocaleString('en-US')
