// The published JSON Schemas: each compiles, carries a versioned $id, and the examples the docs link to (real outputs,
// trimmed) match them; a document that breaks the contract is refused, so the checks the other tests run can fail.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SCHEMA_DIR, SCHEMAS, assertSchema } from './helpers/schema.js'

/** Which schema each example follows: merge prints a load result. */
const FOLLOWS = { load: 'load', merge: 'load', doctor: 'doctor', flame: 'flame', heap: 'heap', compare: 'compare' }

test('every schema has a versioned $id and every example matches its schema', () => {
  assert.deepEqual(Object.keys(SCHEMAS).sort(), ['compare', 'doctor', 'flame', 'heap', 'load'])
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    assert.equal(schema.$id, `urn:hotpath:schema:${name}:1`)
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema')
  }
  const examples = readdirSync(join(SCHEMA_DIR, 'examples')).filter(f => f.endsWith('.json'))
  assert.deepEqual(examples.map(f => f.replace('.json', '')).sort(), Object.keys(FOLLOWS).sort())
  for (const file of examples) {
    const name = /** @type {keyof typeof FOLLOWS} */ (file.replace('.json', ''))
    assertSchema(/** @type {any} */ (FOLLOWS[name]), JSON.parse(readFileSync(join(SCHEMA_DIR, 'examples', file), 'utf8')))
  }
})

test('a result that breaks the contract is refused, with where', () => {
  const doctor = JSON.parse(readFileSync(join(SCHEMA_DIR, 'examples', 'doctor.json'), 'utf8'))
  const broken = { ...doctor, category: 'slow', culprits: [{ ...doctor.culprits[0], line: '17' }], extra: true }
  delete broken.summary
  assert.throws(() => assertSchema('doctor', broken), (err) => {
    const message = /** @type {Error} */ (err).message
    for (const part of ["must have required property 'summary'", 'must NOT have additional properties', '/category must be equal to one of the allowed values', '/culprits/0/line must be integer']) {
      assert.ok(message.includes(part), `${part} in ${message}`)
    }
    return true
  })
  const load = JSON.parse(readFileSync(join(SCHEMA_DIR, 'examples', 'load.json'), 'utf8'))
  assert.throws(() => assertSchema('load', { ...load, latency: { ...load.latency, p99: null } }), /\/latency\/p99 must be number/)
})
