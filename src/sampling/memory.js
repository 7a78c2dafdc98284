import v8 from 'node:v8'

/**
 * @typedef {object} Memory bytes
 * @property {number} rss the process's resident set
 * @property {number} heapUsed this thread's V8 heap
 * @property {number} heapTotal
 * @property {number} external memory held outside the heap by objects in it
 * @property {number} arrayBuffers of which ArrayBuffers and Buffers
 */

/** Every FULL_EVERY-th read is a full process.memoryUsage(). */
const FULL_EVERY = 10

/**
 * Memory as process.memoryUsage() reports it, cheaply enough for a sample every 10 ms. The RSS costs a read of
 * /proc (process.memoryUsage() parses /proc/self/stat; /proc/self/statm kept open is no cheaper): 40 µs in the sample
 * of a busy server, against 8 µs for V8's heap statistics. So the heap figures are read every time, and the RSS and
 * the ArrayBuffer total (which V8's statistics lack) on every 10th read, repeated in between: they are process-wide
 * figures that a chart draws per 100 ms at best, while heapUsed after each GC is what a leak is judged on.
 */
export class MemoryReader {
  #reads = 0
  #rss = 0
  #arrayBuffers = 0

  /** @returns {Memory} */
  read () {
    if (this.#reads++ % FULL_EVERY === 0) {
      const m = process.memoryUsage()
      this.#rss = m.rss
      this.#arrayBuffers = m.arrayBuffers
      return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers }
    }
    const heap = v8.getHeapStatistics()
    return {
      rss: this.#rss,
      heapUsed: heap.used_heap_size,
      heapTotal: heap.total_heap_size,
      external: heap.external_memory,
      arrayBuffers: this.#arrayBuffers
    }
  }
}
