// hotpath/runtime: what an operator keeps on in production — cheap enough to leave on, safe by default.
// Nothing here throws into the host app or keeps its process alive.
export { Sampler } from '../sampling/sampler.js'
export { ListenerWatcher } from '../sampling/listeners.js'
export { AgentWatcher } from '../sampling/agents.js'
