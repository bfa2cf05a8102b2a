// Live queries' payloads (docs/design.md §16) as zod schemas: one source for the server's
// types, the SDK's and the OpenAPI description of the one-shot read.
import { z } from 'zod'
import type { Json } from '../json.js'

/** The Socket.IO event a live query's changes arrive as. */
export const QUERY_EVENT = 'query'

const json = z.custom<Json>(() => true)
const bound = z.union([z.null(), z.boolean(), z.number(), z.string()])

export const queryItemSchema = z.object({ key: z.string(), value: json })
/** In a `query` event `value` is there only for children new to the result or changed. */
export const queryEventItemSchema = z.object({ key: z.string(), value: json.optional() })

export const liveQuerySchema = z.object({
  orderBy: z.string(),
  direction: z.enum(['asc', 'desc']),
  limit: z.number().int(),
  startAt: bound.optional(),
  endAt: bound.optional()
})

/** `GET …/content?path=&orderBy=&limit=` and the SSE snapshot's data. */
export const queryResultSchema = z.object({ version: z.number().int(), items: z.array(queryItemSchema) })

export const querySubscribeAckSchema = z.object({
  ok: z.literal(true),
  project: z.string(),
  path: z.string(),
  query: liveQuerySchema,
  version: z.number().int(),
  items: z.array(queryItemSchema)
})

export const queryEventSchema = z.object({
  project: z.string(),
  /** The path the subscription watches. */
  subscription: z.string(),
  version: z.number().int(),
  /** The version of the previous `query` event (or the ack) on this subscription. */
  prev: z.number().int(),
  items: z.array(queryEventItemSchema)
})

export type QueryResult = z.infer<typeof queryResultSchema>
export type QuerySubscribeAck = z.infer<typeof querySubscribeAckSchema>
export type QueryEventPayload = z.infer<typeof queryEventSchema>
