// An Express catalogue API that hands every request its own copy of the catalogue, made with a JSON round trip "so
// that no handler can change the shared one": 2,000 products copied whole to answer a page of 20. hotpath doctor:
// event-loop, blamed on the copy's line in the route handler, not on Express. The fix: copy only what is sent (or
// freeze the catalogue once and share it).
import express from 'express'

const catalogue = Array.from({ length: 2000 }, (_, i) => ({
  id: i,
  name: `product ${i}`,
  price: Math.round(Math.random() * 10_000) / 100,
  tags: ['tools', 'garden', i % 2 ? 'sale' : 'new'],
  stock: { warehouse: i % 7, shop: i % 3 }
}))

/** @param {number} page */
function productsPage (page) {
  const products = JSON.parse(JSON.stringify(catalogue))
  return products.slice(page * 20, page * 20 + 20)
}

const app = express()

app.get('/', (req, res) => {
  res.json(productsPage(Number(req.query.page ?? 0)))
})

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', (err) => {
  if (err) throw err
  console.log(`catalogue API on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`)
})
