// hotpath's own source. Its probe runs inside the target, and its frames there (the wait tracer inside the app's every
// promise, the sampler) are the instrument's, never the app's to fix.
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('./', import.meta.url))

/**
 * Whether a file — a path, or a file:// URL — is hotpath's own source.
 * @param {string} file
 */
export function isHotpathFile (file) {
  if (!file.startsWith('file://')) return file.startsWith(ROOT)
  try {
    return fileURLToPath(file).startsWith(ROOT)
  } catch {
    return false
  }
}
