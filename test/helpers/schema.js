// The published JSON Schemas (schema/*.schema.json), for tests that read a command's --json: each output they read is
// checked against its schema, so the schema cannot drift from what the commands print.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { ROOT } from './cli.js'

export const SCHEMA_DIR = join(ROOT, 'schema')

/** The schemas by command name, as their files name them: load, doctor, heap, flame, compare. */
export const SCHEMAS = Object.fromEntries(readdirSync(SCHEMA_DIR)
  .filter(f => f.endsWith('.schema.json'))
  .map(f => [f.replace('.schema.json', ''), JSON.parse(readFileSync(join(SCHEMA_DIR, f), 'utf8'))]))

// strict: a keyword the validator does not know, or a `required` name no `properties` lists, is an error in the schema.
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, validateFormats: false })
for (const schema of Object.values(SCHEMAS)) ajv.addSchema(schema)

/**
 * Asserts that a command's JSON output matches its schema, listing every mismatch.
 * @param {'load' | 'doctor' | 'heap' | 'flame' | 'compare'} name the schema: merge prints a load result
 * @param {unknown} value the parsed output
 */
export function assertSchema (name, value) {
  const validate = ajv.getSchema(SCHEMAS[name].$id)
  assert.ok(validate, `schema/${name}.schema.json compiles`)
  const ok = validate(value)
  const errors = (validate.errors ?? []).map((/** @type {import('ajv').ErrorObject} */ e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`)
  assert.ok(ok, `the ${name} JSON does not match schema/${name}.schema.json:\n  ${errors.join('\n  ')}`)
}
