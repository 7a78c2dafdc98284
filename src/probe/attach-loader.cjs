// The door into a running process for `hotpath doctor --attach`: code evaluated through the inspector cannot import()
// (it has no module to resolve from), but a function compiled from a CommonJS file can, and the inspector's
// command-line `require` loads this file.
'use strict'
module.exports = (/** @type {string} */ url) => import(url)
