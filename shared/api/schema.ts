// A project's JSON Schema (docs/schema.md): who set it and when; GET answers the schema itself.
import { z } from 'zod'
import { isoTime } from './common.js'

export const schemaSet = z.object({
  message: z.string(),
  setBy: z.string().meta({ description: 'Who set the schema: "@alice", or "operator" for the CLI' }),
  setAt: isoTime
})
export type SchemaSetView = z.infer<typeof schemaSet>

export const SCHEMA_RESPONSES = { SchemaSet: schemaSet }
