import { readFileSync } from 'node:fs'

/** hotpath's own version, from package.json (read once; no JSON import attributes, which Node 20.0–20.9 lack). */
export const VERSION = /** @type {{ version: string }} */ (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
).version
