/// <reference lib="dom" />
// Making elements, in the report page's script. The flame graph component's script has its own, the same thing one
// layer down (src/report/flame/client/dom.js): each script is one scope of its own, joined from its own folder.
/* global document */

/**
 * An element with a class and text, the one way the report makes its elements.
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
