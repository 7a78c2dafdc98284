// The server the flame benchmark profiles: an Express app with a few routes that do the usual work of an API (JSON,
// hashing, templating, validation), so its profile has the breadth of a real one. Prints `listening on <port>`.
import { createHash } from 'node:crypto'
import express from 'express'

const app = express()
app.use(express.json())

const products = Array.from({ length: 200 }, (_, i) => ({ id: i, name: `Product ${i}`, price: (i * 7.3) % 100, tags: ['a', 'b', `t${i % 9}`] }))

/** @param {unknown} body */
function etag (body) {
  return createHash('sha1').update(JSON.stringify(body)).digest('base64')
}

/** @param {typeof products[number]} p */
function renderRow (p) {
  return `<tr><td>${p.id}</td><td>${p.name.replace(/[<>&]/g, '')}</td><td>${p.price.toFixed(2)}</td><td>${p.tags.join(', ')}</td></tr>`
}

app.get('/products', (req, res) => {
  const page = products.slice(0, 50)
  res.set('etag', etag(page)).json(page)
})

app.get('/products/:id', (req, res) => {
  const p = products[Number(req.params.id) % products.length]
  res.json({ ...p, related: products.filter(q => q.tags[2] === p.tags[2]).slice(0, 5) })
})

app.get('/page', (req, res) => {
  res.type('html').send(`<table>${products.map(renderRow).join('')}</table>`)
})

app.post('/orders', (req, res) => {
  const lines = Array.isArray(req.body?.lines) ? req.body.lines : []
  const valid = lines.filter((/** @type {any} */ l) => Number.isInteger(l.qty) && l.qty > 0)
  const total = valid.reduce((/** @type {number} */ s, /** @type {any} */ l) => s + products[l.id % products.length].price * l.qty, 0)
  res.status(201).json({ total, signature: createHash('sha256').update(String(total)).digest('hex') })
})

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address())
  console.log(`listening on ${address.port}`)
})
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
