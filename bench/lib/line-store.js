// The store bench/servers/waits.js waits on: a line protocol (`GET key\n` → `value\n`), answered after `delay` ms
// (0: at once), in order per connection.
import net from 'node:net'

/**
 * @param {number} delay ms before each answer
 * @returns {Promise<{ port: number, close: () => Promise<void> }>}
 */
export async function startLineStore (delay) {
  /** @type {Set<net.Socket>} */
  const sockets = new Set()
  const server = net.createServer((s) => {
    sockets.add(s)
    s.setNoDelay(true)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => {})
    let buf = ''
    s.setEncoding('utf8')
    s.on('data', (c) => {
      buf += c
      let out = ''
      let i
      while ((i = buf.indexOf('\n')) !== -1) {
        out += `v${buf.length % 10}\n`
        buf = buf.slice(i + 1)
      }
      if (out === '') return
      if (delay > 0) setTimeout(() => { if (!s.destroyed) s.write(out) }, delay)
      else s.write(out)
    })
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  return {
    port: /** @type {net.AddressInfo} */ (server.address()).port,
    close: () => new Promise(resolve => {
      for (const s of sockets) s.destroy()
      server.close(() => resolve())
    })
  }
}
