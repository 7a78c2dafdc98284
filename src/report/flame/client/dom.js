/// <reference lib="dom" />
// Making elements, in the flame graph component's script. The report page's script has its own, the same thing one
// layer up (src/report/html/client/dom.js): each script is one scope of its own, joined from its own folder.
/* global document */

/**
 * An element with a class and text, the one way the graph makes its elements.
 * @param {string} tag
 * @param {string} cls
 * @param {string | undefined} text
 */
export function el (tag, cls, text) {
  const e = document.createElement(tag)
  if (cls) e.className = cls
  if (text !== undefined) e.textContent = text
  return e
}
