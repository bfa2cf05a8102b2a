// Every response body of the HTTP API, by its OpenAPI component name: the one source of the
// server's views (typed by z.infer), the SDK's types (aliases of the same) and the OpenAPI
// document's components.schemas (server/openapi/spec.ts generates them with z.toJSONSchema).
//
// A new resource: add shared/api/<resource>.ts exporting `<RESOURCE>_RESPONSES`, a record of
// component name → zod schema, and add it to the list below. Names are unique across files: a
// duplicate throws when this module loads (a spread would let the later one win silently).
import type { z } from 'zod'
import { ACCOUNT_RESPONSES } from './accounts.js'
import { CHANGE_RESPONSES } from './changes.js'
import { CONTENT_RESPONSES } from './content.js'
import { ERROR_RESPONSES } from './errors.js'
import { KEY_RESPONSES } from './keys.js'
import { OPERATIONS_RESPONSES } from './operations.js'
import { PROJECT_RESPONSES } from './projects.js'
import { RULES_RESPONSES } from './rules.js'
import { SCHEMA_RESPONSES } from './schema.js'
import { WEBHOOK_RESPONSES } from './webhooks.js'

type Union<T extends readonly object[]> = T[number]
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

function merge<T extends ReadonlyArray<Record<string, z.ZodType>>> (...parts: T): Intersection<Union<T>> {
  const merged: Record<string, z.ZodType> = {}
  for (const part of parts) {
    for (const [name, schema] of Object.entries(part)) {
      if (Object.hasOwn(merged, name)) throw new Error(`shared/api: two response schemas are named ${name}`)
      merged[name] = schema
    }
  }
  return merged as Intersection<Union<T>>
}

export const RESPONSE_SCHEMAS = merge(
  ERROR_RESPONSES,
  CONTENT_RESPONSES,
  ACCOUNT_RESPONSES,
  PROJECT_RESPONSES,
  KEY_RESPONSES,
  CHANGE_RESPONSES,
  SCHEMA_RESPONSES,
  WEBHOOK_RESPONSES,
  OPERATIONS_RESPONSES,
  RULES_RESPONSES
)

/** The component names an operation's success may name (server/openapi/operations.ts). */
export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS
/** The body of a named response, as the server sends it and the SDK receives it. */
export type ResponseBody<N extends ResponseSchemaName> = z.infer<typeof RESPONSE_SCHEMAS[N]>
