/**
 * Why a stream is not HTTP, as the framer reports it through onError (and the load counts it, by these words, in
 * `errorKinds`). A run whose only errors are these got no HTTP from the server at all.
 */
export const NOT_HTTP_REASONS = Object.freeze({
  headTooLarge: 'response head larger than 64 KiB',
  statusLine: 'malformed status line',
  headerLine: 'malformed header line',
  contentLength: 'invalid content-length',
  switchedProtocols: 'server switched protocols (101)',
  chunkSizeTooLarge: 'chunk size too large',
  chunkSize: 'invalid chunk size',
  chunkExtension: 'invalid chunk extension',
  chunkSizeLine: 'invalid chunk size line',
  chunkData: 'chunk data longer than its size',
  trailer: 'invalid chunked trailer',
  unsolicited: 'response without a request'
})

/**
 * Every reason in NOT_HTTP_REASONS, to classify counted errors by their kind.
 * @type {ReadonlySet<string>}
 */
export const NOT_HTTP = new Set(Object.values(NOT_HTTP_REASONS))
