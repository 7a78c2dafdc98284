// The self-contained HTML reports: one doctor run, or two runs side by side.
export { renderReport } from './doctor-page.js'
export { renderCompareReport } from './compare-page.js'
export { runFigures, relativeChange, formatChange } from './run-figures.js'
export { openInBrowser } from './open.js'
