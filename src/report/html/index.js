// The self-contained HTML reports: one doctor run, or two runs side by side.
export { renderReport } from './doctor.js'
export { openInBrowser } from './open.js'
