// Debian's Chromium, driven by playwright-core, for tests of the pages hotpath writes (flame graph, HTML report): open a
// file:// page, collect console errors, page errors and every network request, take screenshots a person can look at.
// Tests skip with a clear message when Chromium is absent locally; CI installs it (.ci/run).
import { existsSync, mkdirSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

export const CHROMIUM = process.env.HOTPATH_CHROMIUM ?? '/usr/bin/chromium'
export const SCREENSHOTS = fileURLToPath(new URL('../screenshots/', import.meta.url))

/** `false` when Chromium is there; otherwise why the browser tests skip (node:test's `skip` option takes it as is). */
export const browserSkip = existsSync(CHROMIUM) ? false : `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (CI installs it)`

// Without the background-networking flags Chromium keeps trying to reach Google, and on a closed network its
// connections are refused; a page test must see only what the page itself asks for.
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'
]

/**
 * @typedef {object} OpenedPage
 * @property {import('playwright-core').Page} page
 * @property {string[]} errors console errors and uncaught page errors
 * @property {string[]} requests every request the page made besides its own file
 * @property {(name: string) => Promise<string>} screenshot saves test/screenshots/<name>.png, returns the path
 */

/**
 * @param {{ width: number, height: number }} [viewport]
 */
export async function launchBrowser (viewport = { width: 1280, height: 900 }) {
  // playwright gives each launch a fresh, temporary profile directory (the --user-data-dir), removed on close.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true, timeout: 30000 })
  const context = await browser.newContext({ viewport })
  return {
    browser,
    /**
     * @param {string} fileOrUrl a path, or a file:// URL
     * @returns {Promise<OpenedPage>}
     */
    async open (fileOrUrl) {
      const url = fileOrUrl.startsWith('file:') ? fileOrUrl : pathToFileURL(fileOrUrl).href
      const page = await context.newPage()
      /** @type {string[]} */
      const errors = []
      /** @type {string[]} */
      const requests = []
      page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()) })
      page.on('pageerror', (err) => errors.push(String(err?.stack ?? err)))
      page.on('request', (req) => { if (req.url() !== url) requests.push(req.url()) })
      await page.goto(url, { waitUntil: 'load' })
      return {
        page,
        errors,
        requests,
        async screenshot (name) {
          mkdirSync(SCREENSHOTS, { recursive: true })
          const path = join(SCREENSHOTS, `${name}.png`)
          await page.screenshot({ path, fullPage: true })
          return path
        }
      }
    },
    async close () {
      await context.close()
      await browser.close()
    }
  }
}
