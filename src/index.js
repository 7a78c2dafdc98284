// hotpath's programmatic API.
export { load } from './load/load.js'
export { mergeResults } from './load/merge.js'
export { startCpuProfile, startHeapSampling } from './profile/capture.js'
export { buildProfile, buildHeapProfile } from './profile/model.js'
export { findCulprits, findAllocationCulprits } from './profile/find-culprits.js'
export { readProfileFile, parseProfile } from './profile/cpuprofile.js'
export { toPprof, heapToPprof } from './profile/pprof.js'
export { toCollapsed } from './profile/collapsed.js'
