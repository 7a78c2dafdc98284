// hotpath's programmatic API.
export { load } from './load/load.js'
export { mergeResults } from './load/result.js'
