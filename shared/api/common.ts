// Building blocks the response schemas of shared/api/ share. Each member's `.meta()` is its
// description in the OpenAPI reference; the TypeScript types come from the same objects.
import { z } from 'zod'
import type { Json } from '../json.js'

export const isoTime = z.string().meta({ format: 'date-time' })

export const displayName = z.string().regex(/^@[a-z0-9-]+$/).meta({ description: 'The user with "@", e.g. "@alice"' })

export const nextCursor = z.string().nullable().meta({ description: 'Pass as ?cursor= for the next page; null on the last page' })

/**
 * Any JSON value, typed as the content model's Json. zod checks nothing here (content is
 * checked by shared/json.ts on the way in); the schema only carries the type and renders as
 * `{}` ("any JSON") in the reference.
 */
export const jsonValue = (): z.ZodType<Json> => z.custom<Json>()

/** `{message}`: the answer of writes and deletions that return nothing else. */
export const message = z.object({ message: z.string() })
export type MessageBody = z.infer<typeof message>
