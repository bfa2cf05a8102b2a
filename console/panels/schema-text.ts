// The Schema tab's text (docs/schema.md): what a new schema starts from, and reading what the
// owner typed before it is sent. The server decides what a valid schema is (draft 2020-12,
// INVALID_SCHEMA otherwise); here only what is not a schema at all is caught: text that is
// not JSON, or JSON that is neither an object nor true/false. Pure: test/console/pure.test.ts.
import type { Json, JsonObject, JsonSchema } from '../../shared/client/index.js'
import { isJsonObject, parseJsonText } from '../json-text.js'

export const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema'

/** Keys of the content a starter schema names at most. */
const STARTER_KEYS = 50

function typeOf (value: Json): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

/**
 * A first schema the content already matches: an object whose top-level members keep the
 * types they have now (integers as "number", so that 0.5 stays allowed). The owner tightens it.
 */
export function starterSchema (content: JsonObject | undefined): JsonObject {
  const properties: JsonObject = {}
  for (const key of Object.keys(content ?? {}).slice(0, STARTER_KEYS)) {
    const type = typeOf((content as JsonObject)[key] as Json)
    properties[key] = { type: type === 'integer' ? 'number' : type }
  }
  return { $schema: SCHEMA_DIALECT, type: 'object', properties }
}

export type ParsedSchema = { ok: true, schema: JsonSchema } | { ok: false, message: string }

export function parseSchemaText (text: string): ParsedSchema {
  const parsed = parseJsonText(text)
  if (!parsed.ok) return parsed
  const value = parsed.value
  if (typeof value === 'boolean' || isJsonObject(value)) return { ok: true, schema: value }
  return { ok: false, message: 'A schema is a JSON object ({ "type": "object", … }), or true or false.' }
}
