// The body of every error response (docs/design.md: one error catalogue, shared/errors.ts).
import { z } from 'zod'
import { ERRORS, type ErrorCode } from '../errors.js'

export const errorCodes = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]]

export const schemaError = z.object({
  path: z.string().meta({ description: 'Dot path of the value at fault; "" for the root' }),
  message: z.string()
})

export const errorBody = z.object({
  message: z.string().meta({ description: 'For people; may add detail to the catalogue message. Never holds internals.' }),
  code: z.enum(errorCodes).meta({ description: 'Stable code from the error catalogue' }),
  errors: z.array(schemaError).optional().meta({ description: 'Only with SCHEMA_VIOLATION: how the content would break the project\'s schema' }),
  operation: z.number().int().optional().meta({ description: 'Batch and patch: the index of the operation that failed' }),
  path: z.string().optional().meta({ description: 'Only with RULES_DENIED (docs/design.md §17): the dot path the rules refused ("" for the root)' })
}).meta({ description: 'Every error response has this body.' })

export const ERROR_RESPONSES = { Error: errorBody }
