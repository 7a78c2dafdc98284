// The flame graph component: a standalone page, or its parts for a larger report.
export { renderFlameHtml, scriptJson } from './html.js'
export { flameAssets } from './assets.js'
export { flameData } from './data.js'
