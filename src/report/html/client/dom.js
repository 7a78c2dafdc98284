/// <reference lib="dom" />
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
