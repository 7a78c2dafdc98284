// The JSON API the runtime benchmarks serve (bench:runtime, bench:soak): a small object serialised per request.

/** @returns {import('node:http').RequestListener} */
export function jsonApiHandler () {
  const payload = {
    id: 42,
    name: 'hotpath',
    tags: ['load', 'doctor', 'flame', 'runtime'],
    items: Array.from({ length: 10 }, (_, i) => ({ i, label: `item ${i}`, price: i * 3.5, available: i % 2 === 0 }))
  }
  return (req, res) => {
    const body = JSON.stringify(payload)
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  }
}
